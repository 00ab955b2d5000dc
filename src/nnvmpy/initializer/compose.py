"""Initializers that combine others: Load (saved values first), Mixed (by name pattern)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base import NNVMError
from .base import InitDesc, Initializer, _check_array, create


class InitAssertionError(NNVMError, AssertionError):
    """A Load/Mixed precondition MXNet asserts (shape mismatch, missing name, unequal
    lists): an AssertionError too, so code catching MXNet's error catches it."""


class NoMatchingPattern(NNVMError, ValueError):
    """Mixed: no pattern matches the parameter name (a ValueError, as MXNet's)."""


class Load:
    """Values from a saved parameter file or dict; `arg:`/`aux:` prefixes are dropped.

    Names not found go to `default_init` (an error when there is none).
    """

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False) -> None:
        if isinstance(param, str):
            from nnvmpy import nd

            param = nd.load(param)
        if not isinstance(param, Mapping):
            raise InitAssertionError(
                f"Load: param expects a file name or a dict, got {type(param).__name__}"
            )
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: Any, arr: Any) -> None:
        _check_array("Load", name, arr)
        if name in self.param:
            value = self.param[name]
            if tuple(value.shape) != tuple(arr.shape):
                raise InitAssertionError(
                    f"Load: {name!r} has shape {tuple(arr.shape)} but the loaded value has "
                    f"{tuple(value.shape)}"
                )
            arr[:] = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise InitAssertionError(
                f"Load: {name!r} is not in the loaded parameters and there is no default_init"
            )
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed:
    """The first initializer whose regular expression matches the name (re.match)."""

    def __init__(self, patterns: Sequence[str], initializers: Sequence[Any]) -> None:
        if len(patterns) != len(initializers):
            raise InitAssertionError(
                f"Mixed: {len(patterns)} patterns but {len(initializers)} initializers"
            )
        try:
            self.map = [(re.compile(p), init) for p, init in zip(patterns, initializers)]
        except re.error as e:
            raise NNVMError(f"Mixed: invalid pattern: {e}") from None

    def __call__(self, name: Any, arr: Any) -> None:
        _check_array("Mixed", name, arr)
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise NoMatchingPattern(
            f"Mixed: parameter {name!r} matches none of the patterns "
            f"{[p.pattern for p, _ in self.map]}; add '.*' last for a default"
        )


def init_params(
    initializer: Any,
    arrays: Mapping[str, Any],
    attrs: Mapping[str, Mapping[str, str]] | None = None,
) -> None:
    """Run `initializer` on every named array, with each name's attributes in its InitDesc.

    `attrs` is `Symbol.attr_dict()`, so variables created with `init=` keep their own rule.
    """
    init = create(initializer) if not isinstance(initializer, Load | Mixed) else initializer
    global_init = init if isinstance(init, Initializer) else None
    for name, arr in arrays.items():
        init(InitDesc(name, (attrs or {}).get(name), global_init), arr)
