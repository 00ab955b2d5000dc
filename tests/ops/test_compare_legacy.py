"""MXNet's older comparison names (`_Greater_Equal`, `_GreaterEqualScalar`, ...) load from
symbol files and compute what the current names do."""

from __future__ import annotations

import json

import numpy as np

import nnvmpy as nv


def test_a_symbol_file_with_legacy_comparison_names_loads_and_runs() -> None:
    graph = {
        "nodes": [
            {"op": "null", "name": "a", "inputs": []},
            {"op": "null", "name": "b", "inputs": []},
            {"op": "_Greater_Equal", "name": "ge", "inputs": [[0, 0, 0], [1, 0, 0]]},
            {"op": "_NotEqualScalar", "name": "ne", "attrs": {"scalar": "1"},
             "inputs": [[2, 0, 0]]},
        ],
        "arg_nodes": [0, 1],
        "heads": [[3, 0, 0]],
        "attrs": {"mxnet_version": ["int", 905]},
    }  # fmt: skip
    sym = nv.sym.load_json(json.dumps(graph))
    a, b = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])
    exe = sym.simple_bind(nv.cpu(), a=(3,), b=(3,), grad_req="null")
    out = exe.forward(a=a, b=b)[0].asnumpy()
    np.testing.assert_array_equal(out, ((a >= b).astype(np.float32) != 1).astype(np.float32))
