"""The `nnvmpy` command: list ops, show an op's attributes, run the demo, draw a network."""

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
        op = Op.get(name)
        first = op.description.strip().splitlines()
        about = f"(alias of {op.name})" if op.name != name else first[0] if first else ""
        print(f"{name:<{width}}  {about}")
    print(f"\n{len(names)} operators" + ("" if args.all else " (--all lists internal ones)"))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    import nnvmpy  # noqa: F401

    op = Op.get(args.op)
    print(f"{op.name}  (registered at {op.source})")
    if op.aliases:
        print("also named: " + ", ".join(sorted(op.aliases)))
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
    from nnvmpy.demo import run_demo

    return run_demo(quick=args.quick)


def _parse_shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """['data=1,3,224,224', ...] -> {'data': (1, 3, 224, 224)}."""
    shapes = {}
    for item in items:
        name, sep, dims = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            shapes[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise NNVMError(
                f"--shape expects NAME=D1,D2,... (e.g. data=1,3,224,224), got {item!r}"
            ) from None
    return shapes


def cmd_plot(args: argparse.Namespace) -> int:
    from pathlib import Path

    from nnvmpy.symbol import load
    from nnvmpy.viz import plot_network

    out = Path(args.output)
    fmt = out.suffix.lstrip(".") or "svg"
    title = args.title or Path(args.symbol).name.removesuffix(".json").removesuffix("-symbol")
    digraph = plot_network(
        load(args.symbol),
        title=title,
        save_format=fmt,
        shape=_parse_shapes(args.shape) if args.shape else None,
        hide_weights=not args.show_weights,
    )
    if fmt in ("gv", "dot"):
        out.write_text(digraph.source)
    else:
        import graphviz

        try:
            out.write_bytes(digraph.pipe(format=fmt))
        except graphviz.ExecutableNotFound as e:
            raise NNVMError(
                f"rendering {out} needs Graphviz's `dot` program (apt-get install graphviz); "
                f"-o {out.with_suffix('.gv')} writes the DOT source without it"
            ) from e
    print(f"wrote {out}")
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from nnvmpy.symbol import load
    from nnvmpy.viz import print_summary

    shapes = _parse_shapes(args.shape) if args.shape else None
    print_summary(load(args.symbol), shape=shapes, line_length=args.line_length)
    return 0


def cmd_stubs(args: argparse.Namespace) -> int:
    from nnvmpy.stubs import stale_stubs, write_stubs

    if args.check:
        stale = stale_stubs()
        for path in stale:
            print(f"stale: {path}")
        return 1 if stale else 0
    for path in write_stubs():
        print(f"wrote {path}")
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from nnvmpy.opdocs import stale_pages, write_pages

    directory = Path(args.output)
    if args.check:
        stale = stale_pages(directory)
        for name in stale:
            print(f"stale: {directory / name}")
        return 1 if stale else 0
    written, removed = write_pages(directory)
    for path in removed:
        print(f"removed {path}")
    print(f"wrote {len(written)} page(s) to {directory}")
    return 0


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
    shape_help = "input shape NAME=D1,D2,... (repeatable), e.g. data=1,3,224,224"
    plot = sub.add_parser("plot", help="draw a symbol file's network (needs nnvmpy[viz])")
    plot.add_argument("symbol", help="a model-symbol.json file")
    plot.add_argument("--shape", action="append", metavar="NAME=DIMS", help=shape_help)
    plot.add_argument("-o", "--output", default="net.svg", help="svg/pdf/png/... or .gv source")
    plot.add_argument("--title", help="graph title (default: the file's model name)")
    plot.add_argument("--show-weights", action="store_true", help="draw weight/bias edges")
    plot.set_defaults(fn=cmd_plot)
    summary = sub.add_parser("summary", help="print a symbol file's layer table")
    summary.add_argument("symbol", help="a model-symbol.json file")
    summary.add_argument("--shape", action="append", metavar="NAME=DIMS", help=shape_help)
    summary.add_argument("--line-length", type=int, default=120)
    summary.set_defaults(fn=cmd_summary)
    stubs = sub.add_parser("stubs", help="regenerate the .pyi stubs of nv.nd / nv.sym")
    stubs.add_argument("--check", action="store_true", help="only list stale stubs (exit 1)")
    stubs.set_defaults(fn=cmd_stubs)
    docs = sub.add_parser("docs", help="write the op reference (one Markdown page per family)")
    docs.add_argument("-o", "--output", default="docs/ops", help="directory (docs/ops)")
    docs.add_argument("--check", action="store_true", help="only list stale pages (exit 1)")
    docs.set_defaults(fn=cmd_docs)
    from nnvmpy.kvstore.launch import add_parser as add_launch_parser

    add_launch_parser(sub)  # nnvmpy launch -n N -- python train.py
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except NNVMError as e:
        print(f"nnvmpy: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
