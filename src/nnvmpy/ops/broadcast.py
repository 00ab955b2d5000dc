"""broadcast ops (being written)."""
