"""optimizer ops (being written)."""
