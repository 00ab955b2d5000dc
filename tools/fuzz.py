"""Untrusted-input soak: the CI fuzz tests (tests/fuzz/) for as long as you like.

Each round picks one target at random, weighted: a corrupted symbol file (sym.load /
load_json, both JSON dialects), a corrupted .params file (nd.load, load_frombuffer,
unpickling), or a hostile call of a registered op through nd and sym. The property is
the CI one: it works or raises a named NNVMError, and the registry, the engine and an
executor bound before still work. Run:

    .venv/bin/python tools/fuzz.py --minutes 10
    .venv/bin/python tools/fuzz.py --minutes 2 --op Convolution --seed 3

It prints each new kind of finding when found and progress every 30 s, then every finding
grouped by (target, exception type) with a repro line for the first few; the exit status
is 1 if there was one. A round that runs longer than --hang-seconds prints every thread's
stack (a call that never returns is a finding too).
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzz_common import Chooser, Finding, Health
from fuzz_json import check_corrupted_symbol
from fuzz_ops import check_op_call
from fuzz_params import check_corrupted_params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to run")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    ap.add_argument("--op", default=None, help="fuzz only this registered op")
    ap.add_argument("--show", type=int, default=3, help="repro lines printed per group")
    ap.add_argument(
        "--hang-seconds",
        type=float,
        default=60.0,
        help="a round running this long prints every thread's stack (and the run goes on)",
    )
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    chooser = Chooser(random.Random(seed))
    op = None
    if args.op is not None:
        from nnvmpy.registry import Op
        from nnvmpy.stubs import load_all_ops

        load_all_ops()  # _FusedOp and the lazy modules' ops register on first use
        op = Op.get(args.op)
    warnings.simplefilter("ignore")  # partial-inference warnings of hostile shapes
    health = Health()
    groups: dict[tuple[str, str], list[Finding]] = collections.defaultdict(list)
    counts: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + 60 * args.minutes
    last_print = time.monotonic()
    print(f"fuzz: seed {seed}, {args.minutes} min" + (f", op {args.op}" if op else ""))
    with tempfile.TemporaryDirectory(prefix="nnvmpy-fuzz-") as tmp:
        scratch = Path(tmp)
        while time.monotonic() < deadline:
            kind = "op" if op is not None else chooser.choice(["symbol", "params", "op", "op"])
            faulthandler.dump_traceback_later(args.hang_seconds, exit=False)
            if kind == "symbol":
                found = check_corrupted_symbol(chooser, health, scratch)
            elif kind == "params":
                found = check_corrupted_params(chooser, health, scratch)
            else:
                found = check_op_call(chooser, health, op)
            faulthandler.cancel_dump_traceback_later()
            counts[kind] += 1
            for f in found:
                if f.key not in groups:  # shown at once: a later hang must not lose it
                    print(f"  new: {str(f)[:700]}", flush=True)
                groups[f.key].append(f)
            if time.monotonic() - last_print > 30:
                last_print = time.monotonic()
                total = sum(len(v) for v in groups.values())
                print(f"  {dict(counts)} calls, {total} findings", flush=True)
    print(f"fuzz: {dict(counts)} calls, {sum(len(v) for v in groups.values())} findings")
    for (target, kind), found in sorted(groups.items()):
        print(f"\n{target}: {kind} ({len(found)}x)")
        for f in found[: args.show]:
            print(f"  {f.message[:300]}\n    repro: {f.repro[:400]}")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
