"""Importing this module attaches the fluent methods (nnvmpy/fluent.py) to Symbol.

symbol/__init__.py imports it last, once sym.call_op exists.
"""

from .fluent import install_symbol

install_symbol()
