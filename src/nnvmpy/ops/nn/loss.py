"""loss (being written)."""
