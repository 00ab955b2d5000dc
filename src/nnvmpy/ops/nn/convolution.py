"""convolution (being written)."""
