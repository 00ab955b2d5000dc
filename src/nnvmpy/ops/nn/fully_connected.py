"""fully_connected (being written)."""
