"""matrix ops (being written)."""
