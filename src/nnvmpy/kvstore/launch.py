"""`nnvmpy launch -n N [--hostfile F] -- python train.py ...`: start N workers over MPI.

It runs MPICH's `mpiexec` (the one installed beside this Python by the `mpich` wheel,
else the one on PATH): on one machine the workers talk over loopback; with a hostfile
(one `host[:slots]` a line) they spread over those machines; inside a Slurm allocation
`--launcher srun` uses Slurm's own launcher. `-disable-auto-cleanup` keeps the other
workers alive when one dies, so they stop with kvstore's named error (after
NNVMPY_KVSTORE_TIMEOUT seconds, `--timeout`) instead of being killed without a word.

Threads: every worker would otherwise start one OpenMP / Numba / OpenBLAS thread per core
of the machine, so N workers on one machine run N times as many busy threads as cores
(and OpenMP's spinning waits make that far worse than N times slower). Unless the
environment already says otherwise, each worker gets cores // workers-per-machine of each.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from ..base import NNVMError

DEFAULT_TIMEOUT = 120.0
THREAD_VARS = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_SIGNALS = (signal.SIGABRT, signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM)


def find_mpiexec() -> str:
    """The mpiexec beside this Python (pip's mpich wheel), else the first on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        raise NNVMError(
            "nnvmpy launch: no mpiexec found; pip install 'nnvmpy[dist]' (mpi4py, mpich)"
        )
    return found


def command_line(
    n: int,
    cmd: list[str],
    hostfile: str | None = None,
    launcher: str = "mpiexec",
) -> list[str]:
    """The launcher's command line for `n` workers running `cmd`."""
    if n < 1:
        raise NNVMError(f"nnvmpy launch: -n must be at least 1, got {n}")
    if not cmd:
        raise NNVMError("nnvmpy launch: no command to run (nnvmpy launch -n 2 -- python x.py)")
    if launcher == "srun":
        return ["srun", f"--ntasks={n}", "--mpi=pmi2", *cmd]
    if launcher != "mpiexec":
        raise NNVMError(f"nnvmpy launch: --launcher must be mpiexec or srun, got {launcher!r}")
    args = [find_mpiexec(), "-disable-auto-cleanup", "-n", str(n)]
    if hostfile is not None:
        if not Path(hostfile).is_file():
            raise NNVMError(f"nnvmpy launch: --hostfile {hostfile!r} is not a file")
        args += ["-f", hostfile]
    return [*args, *cmd]


def _hosts(hostfile: str) -> int:
    """How many machines an MPICH hostfile names (`host[:slots]` lines, # comments)."""
    with open(hostfile) as f:
        lines = [line.split("#", 1)[0].strip() for line in f]
    return max(1, sum(1 for line in lines if line))


def worker_threads(n: int, hostfile: str | None = None, cores: int | None = None) -> int:
    """Compute threads for each of `n` workers: this machine's cores shared by the workers
    that run on one machine (all of them, or an even share of the hostfile's machines;
    the other machines are assumed to have as many cores as this one)."""
    per_machine = n if hostfile is None else math.ceil(n / _hosts(hostfile))
    return max(1, (cores or os.cpu_count() or 1) // max(1, per_machine))


def run(
    n: int,
    cmd: list[str],
    hostfile: str | None = None,
    launcher: str = "mpiexec",
    timeout: float | None = None,
    **popen: object,
) -> subprocess.CompletedProcess:
    """Run `cmd` on `n` workers and wait; NNVMPY_KVSTORE_TIMEOUT defaults to `timeout`, the
    thread counts (THREAD_VARS) to `worker_threads`."""
    env = dict(os.environ)
    env.setdefault("NNVMPY_KVSTORE_TIMEOUT", str(timeout or DEFAULT_TIMEOUT))
    if timeout is not None:
        env["NNVMPY_KVSTORE_TIMEOUT"] = str(timeout)
    argv = command_line(n, cmd, hostfile, launcher)
    if launcher == "mpiexec":  # under srun, Slurm's --cpus-per-task says how many cores
        threads = str(worker_threads(n, hostfile))
        for var in THREAD_VARS:
            env.setdefault(var, threads)
    return subprocess.run(argv, env=env, **popen)  # type: ignore[call-overload]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `launch` subcommand of the nnvmpy CLI."""
    p = sub.add_parser("launch", help="run a training script on N workers over MPI")
    p.add_argument("-n", "--num-workers", type=int, required=True, help="worker processes")
    p.add_argument("--hostfile", default=None, help="MPICH hostfile: one host[:slots] a line")
    p.add_argument("--launcher", default="mpiexec", choices=["mpiexec", "srun"])
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"seconds a worker waits for the others before failing (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("worker_cmd", nargs=argparse.REMAINDER, help="-- python train.py ...")
    p.set_defaults(fn=main)


def main(args: argparse.Namespace) -> int:
    cmd = list(args.worker_cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    done = run(args.num_workers, cmd, args.hostfile, args.launcher, args.timeout)
    if done.returncode != 0:
        print(f"nnvmpy launch: {failure_message(done.returncode)}", file=sys.stderr)
    return int(done.returncode)


def failure_message(returncode: int) -> str:
    """What mpiexec's exit status says about the failed job."""
    text = f"the job failed (exit status {returncode})"
    if returncode in _SIGNALS:  # hydra reports a worker killed by signal N as status N
        name = signal.Signals(returncode).name
        text += (
            f": a worker was probably ended by {name}, and the process manager stopped the others "
            "(a KVStore dist_sync job cannot go on without every worker)"
        )
    elif returncode == -signal.SIGPIPE:  # mpiexec itself, writing to a worker that died
        text += (
            ": the process manager itself was ended by SIGPIPE: its connection to a worker "
            "broke, so a worker had probably died (a KVStore dist_sync job cannot go on "
            "without every worker)"
        )
    elif returncode < 0:
        text += f": the process manager itself was ended by {signal.Signals(-returncode).name}"
    return text
