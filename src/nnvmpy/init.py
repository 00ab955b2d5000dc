"""`nv.init`: MXNet's short name for `nv.initializer` (the same classes and registry)."""

from __future__ import annotations

from .initializer import *  # noqa: F403 - the whole public surface, under MXNet's other name
from .initializer import __all__ as __all__
from .initializer import __getattr__ as __getattr__  # FusedRNN, imported on first use
