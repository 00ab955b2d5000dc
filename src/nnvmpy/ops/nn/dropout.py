"""dropout (being written)."""
