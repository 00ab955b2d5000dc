"""softmax (being written)."""
