"""activation (being written)."""
