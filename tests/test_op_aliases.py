"""Op aliases: one op under several names, saved under its own name as MXNet saves it.

tests/data/mxnet_op_aliases.json is MXNet 1.9.1's own alias table ({alias: op name}),
read from its C API (NNGetOpHandle of every name in MXListAllOpNames, then the name
MXSymbolGetAtomicSymbolInfo reports), without the `_np*`/`_sparse_*` front-end names;
tools/mxnet_op_tables.py regenerates it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.registry import Op, register_op, scoped_registry

MXNET_ALIASES = json.loads((Path(__file__).parent / "data" / "mxnet_op_aliases.json").read_text())


@pytest.mark.parametrize("alias", sorted(MXNET_ALIASES))
def test_mxnet_aliases_are_one_op(alias: str) -> None:
    assert Op.get(alias) is Op.get(MXNET_ALIASES[alias])


def test_list_op_names_has_aliases_and_list_ops_has_each_op_once() -> None:
    names = Op.list_op_names()
    assert {"concat", "Concat", "split", "SliceChannel"} <= set(names)
    ops = Op.list_ops()
    assert len(ops) == len({id(op) for op in ops})
    assert Op.get("Concat") in ops
    assert all(name in names for op in ops for name in (op.name, *op.aliases))
    assert len(names) == sum(1 + len(op.aliases) for op in ops)


@pytest.mark.parametrize(
    ("make", "op", "node"),
    [  # what MXNet 1.9.1 writes for these (checked on it): the op's name, the alias's hint
        (lambda a, b: nv.sym.concat(a, b, dim=1), "Concat", "concat0"),
        (lambda a, b: nv.sym.Concat(a, b, dim=1), "Concat", "concat0"),
        (lambda a, b: nv.sym.reshape(a, shape=(-1,)), "Reshape", "reshape0"),
        (lambda a, b: nv.sym.flatten(a), "Flatten", "flatten0"),
        (lambda a, b: nv.sym.cast(a, dtype="float16"), "Cast", "cast0"),
        (lambda a, b: nv.sym.swapaxes(a, dim1=0, dim2=1), "SwapAxis", "swapaxes0"),
        (lambda a, b: nv.sym.split(a, num_outputs=2)[0], "SliceChannel", "split0"),
        (lambda a, b: nv.sym.linalg_gemm2(a, b), "_linalg_gemm2", "linalg_gemm20"),
        (lambda a, b: nv.sym.linalg.gemm2(a, b), "_linalg_gemm2", "gemm20"),
        (lambda a, b: nv.sym.stop_gradient(a), "BlockGrad", "stop_gradient0"),
    ],
)
def test_a_symbol_made_through_an_alias_saves_the_op_name(make, op: str, node: str) -> None:
    with nv.name.NameManager():
        out = make(nv.sym.var("a"), nv.sym.var("b"))
    last = json.loads(out.tojson())["nodes"][-1]
    assert (last["op"], last["name"]) == (op, node)


def test_a_file_written_with_alias_names_loads_and_is_saved_with_op_names() -> None:
    graph = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "flatten", "name": "f", "inputs": [[0, 0, 0]]},
            {"op": "_Plus", "name": "p", "inputs": [[1, 0, 0], [1, 0, 0]]},
            {"op": "sum_axis", "name": "s", "attrs": {"axis": "1"}, "inputs": [[2, 0, 0]]},
        ],
        "arg_nodes": [0],
        "heads": [[3, 0, 0]],
    }
    net = nv.sym.load_json(json.dumps(graph))
    ops = [n["op"] for n in json.loads(net.tojson())["nodes"]]
    assert ops == ["null", "Flatten", "elemwise_add", "sum"]
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = net.eval(x=nv.nd.array(x))[0].asnumpy()
    np.testing.assert_allclose(got, 2 * x.reshape(2, 12).sum(axis=1))


def test_nd_functions_of_aliases_compute_as_the_op() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert nv.nd.flip.__name__ == "flip"
    np.testing.assert_array_equal(nv.nd.flip(nv.nd.array(x), axis=1).asnumpy(), x[:, ::-1])
    np.testing.assert_array_equal(nv.nd.identity(nv.nd.array(x)).asnumpy(), x)
    np.testing.assert_array_equal(nv.nd.sum_axis(nv.nd.array(x), axis=0).asnumpy(), x.sum(0))


def test_add_alias_shares_later_attributes_and_is_undone_by_a_scope() -> None:
    with scoped_registry():
        op = register_op("_test_alias_target").set_num_inputs(1)
        op.add_alias("_test_alias")
        assert register_op("_test_alias") is op
        assert Op.get("_test_alias") is op
        op.set_attr("FTestAttr", 3)
        assert Op.get("_test_alias").get_attr("FTestAttr") == 3
        assert op.aliases == ("_test_alias",)
    assert "_test_alias" not in Op.list_op_names()
    assert "_test_alias_target" not in Op.list_op_names()


def test_an_alias_cannot_take_another_ops_name() -> None:
    with scoped_registry():
        register_op("_test_alias_a")
        register_op("_test_alias_b")
        with pytest.raises(NNVMError, match="cannot add alias '_test_alias_b'"):
            Op.get("_test_alias_a").add_alias("_test_alias_b")
        assert Op.get("_test_alias_b").name == "_test_alias_b"  # untouched
        with pytest.raises(NNVMError, match="non-empty name"):
            Op.get("_test_alias_a").add_alias("")
