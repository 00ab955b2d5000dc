"""Regenerate tests/data/mxnet_op_aliases.json and mxnet_op_params.json from MXNet itself.

    .venv/bin/python tools/mxnet_op_tables.py --mxnet .mxenv

MXNet 1.9.1 (in its own venv, never a dependency) is asked through its C API for every op
name (MXListAllOpNames), the op each name is (NNGetOpHandle, then the name
MXSymbolGetAtomicSymbolInfo reports: an alias reports its op's name) and the op's
parameters in declaration order (the arguments that are not NDArray/Symbol inputs).
Kept: the aliases outside MXNet's numpy and sparse front-ends (plus cumsum, whose
registered name is _np_cumsum), and the parameter lists of the names nnvmpy registers.
tests/test_op_aliases.py and tests/test_param_order.py read the two files.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import nnvmpy  # noqa: F401 - registers the built-in ops
from nnvmpy.registry import Op

MXNET_SCRIPT = r"""
import ctypes, json
import mxnet  # noqa: F401
from mxnet.base import _LIB, c_str, check_call, mx_uint, py_str
n = mx_uint(); names = ctypes.POINTER(ctypes.c_char_p)()
check_call(_LIB.MXListAllOpNames(ctypes.byref(n), ctypes.byref(names)))
table = {}
for name in sorted(py_str(names[i]) for i in range(n.value)):
    h = ctypes.c_void_p()
    check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(h)))
    real, desc, kv, rt = (ctypes.c_char_p() for _ in range(4))
    count = mx_uint()
    args, types, docs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    check_call(_LIB.MXSymbolGetAtomicSymbolInfo(
        h, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(count), ctypes.byref(args),
        ctypes.byref(types), ctypes.byref(docs), ctypes.byref(kv), ctypes.byref(rt)))
    params = [py_str(args[i]) for i in range(count.value)
              if not py_str(types[i]).startswith(("NDArray", "Symbol"))]
    table[name] = {"op": py_str(real.value), "params": params}
print(json.dumps(table))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mxnet", default=".mxenv", help="a venv with mxnet==1.9.1")
    parser.add_argument("--out", default="tests/data", help="where the two files go")
    args = parser.parse_args()
    python = Path(args.mxnet) / "bin" / "python"
    proc = subprocess.run([str(python), "-c", MXNET_SCRIPT], capture_output=True, text=True,
                          check=True)  # fmt: skip
    table = json.loads(proc.stdout.strip().splitlines()[-1])
    aliases = {
        name: entry["op"]
        for name, entry in table.items()
        if entry["op"] != name and (not name.startswith(("_np", "_sparse")) or name == "cumsum")
    }
    ours = set(Op.list_op_names())
    params = {name: e["params"] for name, e in table.items() if name in ours and e["params"]}
    out = Path(args.out)
    for file, data in (("mxnet_op_aliases.json", aliases), ("mxnet_op_params.json", params)):
        (out / file).write_text(json.dumps(data, indent=1 if "aliases" in file else 0,
                                           sort_keys=True))  # fmt: skip
        print(f"wrote {out / file}: {len(data)} entries")


if __name__ == "__main__":
    main()
