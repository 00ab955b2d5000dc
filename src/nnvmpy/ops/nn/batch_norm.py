"""batch_norm (being written)."""
