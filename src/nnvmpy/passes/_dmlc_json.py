"""dmlc::JSONWriter's layout, so saved symbol files match MXNet's byte for byte.

MXNet writes JSON with dmlc-core's writer, whose whitespace differs from `json.dumps`:
an object or array spans lines unless it is small ("{" + one key, or an array of at most
10 plain numbers / entry triples), items are separated by ", " even at a line end, and
each nesting level indents by two spaces. Only strings are escaped, and only \\r \\n \\\\
\\t and \\" (other characters are written as they are).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_ESCAPES = str.maketrans({"\r": "\\r", "\n": "\\n", "\\": "\\\\", "\t": "\\t", '"': '\\"'})


class Inline(tuple[Any, ...]):
    """An array written on one line whatever it holds (dmlc's `any`: ["int", 10901])."""

    __slots__ = ()


class Triple(Inline):
    """A [node_id, index, version] entry: one line, and a plain value inside arrays."""

    __slots__ = ()


def dumps(value: Any) -> str:
    """`value` (dicts, lists, tuples, str, int, float) in dmlc's layout; top level spans lines."""
    writer = _Writer()
    writer.write(value, top=True)
    return "".join(writer.out)


class _Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.multi_line: list[bool] = []
        self.counts: list[int] = []

    def write(self, value: Any, top: bool = False) -> None:
        if isinstance(value, str):
            self.out.append(f'"{value.translate(_ESCAPES)}"')
        elif isinstance(value, bool):
            self.out.append("true" if value else "false")
        elif isinstance(value, int | float):
            self.out.append(repr(value))
        elif isinstance(value, Mapping):
            self._object(value, multi_line=top or len(value) > 1)
        elif isinstance(value, Sequence):
            self._array(value)
        else:
            raise TypeError(f"cannot write {type(value).__name__} as JSON")

    def _object(self, value: Mapping[str, Any], multi_line: bool) -> None:
        self._begin("{", multi_line)
        for key, item in value.items():
            self._next()
            self.out.append(f'"{key}": ')
            self.write(item)
        self._end("}")

    def _array(self, value: Sequence[Any]) -> None:
        plain = isinstance(value, Inline) or (
            len(value) <= 10 and all(isinstance(v, int | float | Triple) for v in value)
        )
        self._begin("[", not plain)
        for item in value:
            self._next()
            self.write(item)
        self._end("]")

    def _begin(self, bracket: str, multi_line: bool) -> None:
        self.out.append(bracket)
        self.multi_line.append(multi_line)
        self.counts.append(0)

    def _next(self) -> None:
        if self.counts[-1]:
            self.out.append(", ")
        self.counts[-1] += 1
        self._separator()

    def _end(self, bracket: str) -> None:
        multi_line, count = self.multi_line.pop(), self.counts.pop()
        if multi_line and count:
            self._separator()
        self.out.append(bracket)

    def _separator(self) -> None:
        if not self.multi_line or self.multi_line[-1]:
            self.out.append("\n" + " " * (2 * len(self.multi_line)))


def as_triples(entries: Sequence[Sequence[int]]) -> list[Triple]:
    return [Triple((int(e[0]), int(e[1]), int(e[2]))) for e in entries]


__all__ = ["Inline", "Triple", "as_triples", "dumps"]
