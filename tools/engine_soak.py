"""Engine soak: random push programs on every engine and worker count, against an oracle.

Each program (tests/engine/engine_programs.py) reads and writes shared variables, fails
some steps, waits while work is in flight, pushes async and nested work and deletes
variables; every engine configuration must give what a sequential Python oracle gives
(values seen by each step, writers per variable, errors reported by each wait, values
seen by delete functions). The CI test runs ~40k pushes of the same check; this runs as
many as you ask. Run:

    .venv/bin/python tools/engine_soak.py --pushes 1000000
    .venv/bin/python tools/engine_soak.py --minutes 30 --seed 7 --length 2000

It prints progress, then every disagreement with the seed that reproduces it; the exit
status is 1 if there was one. A program that hangs for --hang-seconds is reported with
every thread's stack (faulthandler) and the run stops.
"""

from __future__ import annotations

import argparse
import faulthandler
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))

from engine_programs import (
    ENGINE_CONFIGS,
    Completer,
    avoid_known_issue,
    check_program,
    random_program,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pushes", type=int, default=1_000_000, help="stop after this many pushes")
    ap.add_argument("--minutes", type=float, default=None, help="or after this long")
    ap.add_argument("--seed", type=int, default=0, help="first program seed")
    ap.add_argument("--length", type=int, default=500, help="steps per program")
    ap.add_argument("--engines", default="all", help="comma-separated labels, or 'all'")
    ap.add_argument("--hang-seconds", type=float, default=120.0)
    ap.add_argument(
        "--with-known-issue",
        action="store_true",
        help="keep nested pushes on variables deleted later (engine_programs: KNOWN ENGINE ISSUE)",
    )
    args = ap.parse_args(argv)
    configs = [
        (label, make)
        for label, make in ENGINE_CONFIGS
        if args.engines == "all" or label in args.engines.split(",")
    ]
    if not configs:
        print(f"no engine matches {args.engines!r}; labels: {[c[0] for c in ENGINE_CONFIGS]}")
        return 2
    makers = dict(configs)
    engines = [(label, make()) for label, make in configs]
    completer = Completer()
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else float("inf")
    pushes = programs = 0
    failures: list[str] = []
    start = last_report = time.monotonic()
    seed = args.seed
    try:
        while pushes < args.pushes and time.monotonic() < deadline:
            program = random_program(random.Random(seed), args.length)
            if not args.with_known_issue:
                program = avoid_known_issue(program)
            for k, (label, eng) in enumerate(engines):
                faulthandler.dump_traceback_later(args.hang_seconds, exit=True)
                try:
                    pushes += check_program(eng, program, completer)
                except Exception as e:
                    failures.append(f"seed {seed} on {label}: {type(e).__name__}: {e}")
                    print("FAIL", failures[-1][:500], flush=True)
                    eng.shutdown()  # a fresh engine: leftovers must not fail the next program
                    engines[k] = (label, makers[label]())
                finally:
                    faulthandler.cancel_dump_traceback_later()
            programs += 1
            seed += 1
            now = time.monotonic()
            if now - last_report > 10:
                rate = pushes / (now - start)
                print(f"{pushes:>10} pushes, {programs} programs, {rate:,.0f} pushes/s", flush=True)
                last_report = now
    finally:
        for _, eng in engines:
            eng.shutdown()
        completer.close()
    took = time.monotonic() - start
    print(
        f"done: {pushes} pushes in {programs} programs (seeds {args.seed}..{seed - 1}) on "
        f"{', '.join(label for label, _ in engines)} in {took:.0f} s; "
        f"{len(failures)} disagreement(s)"
    )
    for f in failures:
        print(" ", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
