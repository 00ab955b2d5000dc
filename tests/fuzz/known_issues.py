"""KNOWN ISSUES: what the fuzzer found in code this work may not edit.

!!! This is the one list the fuzz tests skip. The lead empties it as the owners fix
!!! the findings; an entry that no longer fails should be deleted
!!! (`tools/fuzz.py --minutes 2 --op NAME` checks one op).

Keys:
  "OP"             every call of op OP (its registered name) is skipped;
  "OP:nd", "OP:sym"  only that path;
  "*:sym:DTYPE"    the sym path of every op when an input has that dtype.
Values: the finding, and whose file it is in.
"""

from __future__ import annotations

from collections.abc import Iterable

KNOWN_ISSUES: dict[str, str] = {}


def skip_reason(op_name: str, path: str, dtypes: Iterable[str]) -> str | None:
    """Why a call of `op_name` through `path` ("nd" or "sym") is skipped, or None."""
    for key in (op_name, f"{op_name}:{path}", *(f"*:{path}:{d}" for d in dtypes)):
        if key in KNOWN_ISSUES:
            return KNOWN_ISSUES[key]
    return None


def skipped_ops() -> frozenset[str]:
    """Ops skipped on every path."""
    return frozenset(k for k in KNOWN_ISSUES if ":" not in k)


__all__ = ["KNOWN_ISSUES", "skip_reason", "skipped_ops"]
