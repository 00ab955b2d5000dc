"""The `nnvmpy` command: list ops, show an op's attributes, run the demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .base import NNVMError
from .registry import Op


def cmd_ops(args: argparse.Namespace) -> int:
    import nnvmpy  # noqa: F401 - registers the built-in ops

    names = Op.list_op_names()
    if not args.all:
        names = [n for n in names if not n.startswith("_")]
    width = max(map(len, names), default=0)
    for name in names:
        first = Op.get(name).description.strip().splitlines()
        print(f"{name:<{width}}  {first[0] if first else ''}")
    print(f"\n{len(names)} operators" + ("" if args.all else " (--all lists internal ones)"))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    import nnvmpy  # noqa: F401

    op = Op.get(args.op)
    print(f"{op.name}  (registered at {op.source})")
    if op.description:
        print("\n" + op.description.strip())
    n_in = "variable" if callable(op.num_inputs) else op.num_inputs
    n_out = "variable" if callable(op.num_outputs) else op.num_outputs
    print(f"\ninputs: {n_in}   outputs: {n_out}")
    print("\nattributes:")
    for key, entry in op.attr_entries().items():
        value = getattr(entry.value, "__qualname__", None) or repr(entry.value)
        print(f"  {key:<26} {value:<40} plevel {entry.plevel:<3} {entry.source}")
    print("\narguments:")
    for arg in op.arguments:
        print(f"  {arg.name:<12} {arg.type_info}")
        if arg.description:
            print(f"  {'':<12} {arg.description}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(quick=args.quick)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nnvmpy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ops = sub.add_parser("ops", help="list registered operators")
    ops.add_argument("--all", action="store_true", help="include internal (_name) ops")
    ops.set_defaults(fn=cmd_ops)
    info = sub.add_parser("info", help="every attribute and argument of one operator")
    info.add_argument("op")
    info.set_defaults(fn=cmd_info)
    demo = sub.add_parser("demo", help="run the quadratic-op tutorial end to end")
    demo.add_argument("--quick", action="store_true", help="smaller problem sizes")
    demo.set_defaults(fn=cmd_demo)
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except NNVMError as e:
        print(f"nnvmpy: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
