"""nnvmpy: an NNVM-style operator system in Python."""
