"""pooling (being written)."""
