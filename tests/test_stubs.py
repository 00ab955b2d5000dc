"""The generated .pyi stubs: fresh, valid Python typed from the Parameter fields, and good
enough for mypy to reject a misspelled op keyword."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nnvmpy as nv
from nnvmpy import stubs
from nnvmpy.param import Parameter, Shape, field


def test_committed_stubs_match_the_registry() -> None:
    # a fresh interpreter: ops other tests register in this process must not count
    run = subprocess.run(
        [sys.executable, "-m", "nnvmpy.cli", "stubs", "--check"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, f"stale stubs, run `nnvmpy stubs`:\n{run.stdout}{run.stderr}"


def test_every_op_namespace_has_a_stub_shipped_with_the_package() -> None:
    names = {t.module for t in stubs.targets()}
    assert {"nnvmpy.ndarray", "nnvmpy.symbol", "nnvmpy.ndarray.linalg"} <= names
    assert {"nnvmpy.symbol.linalg", "nnvmpy.ndarray.contrib", "nnvmpy.symbol.contrib"} <= names
    package = Path(nv.__file__).parent
    assert (package / "py.typed").exists()
    for target in stubs.targets():
        assert target.path().parent.is_relative_to(package)


class _StubParam(Parameter):
    kernel = field(Shape, describe="window")
    act = field(str, default="relu", enum=["relu", "tanh"], describe="kind")
    scale = field(float, default=1.5)
    axis = field(int, default=None)
    flag = field(bool, default=False)


def test_op_stub_types_each_parameter_kind(scoped_registry: None) -> None:
    (
        nv.register_op("stubbed_test_op")
        .describe("A test op.")
        .set_attr_parser(_StubParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr("FListInputNames", lambda attrs: ["lhs", "rhs"])
        .add_argument("lhs", "NDArray-or-Symbol", "left")
        .add_argument("rhs", "NDArray-or-Symbol", "right")
        .add_arguments(_StubParam.fields())
    )
    op = nv.Op.get("stubbed_test_op")
    text = stubs.op_stub("stubbed_test_op", nv.nd.stubbed_test_op, op, "NDArray")
    fn = ast.parse(text).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert [a.arg for a in fn.args.args] == ["lhs", "rhs"]
    kw = {a.arg: ast.unparse(a.annotation) for a in fn.args.kwonlyargs if a.annotation}
    assert kw["kernel"] == "_Shape"
    assert kw["act"] == "Literal['relu', 'tanh'] | str"
    assert kw["scale"] == "float"
    assert kw["axis"] == "int | None"
    assert kw["flag"] == "bool | int"
    defaults = dict(zip([a.arg for a in fn.args.kwonlyargs], fn.args.kw_defaults))
    assert defaults["kernel"] is None  # required: no default
    assert ast.literal_eval(defaults["scale"]) == 1.5
    assert ast.literal_eval(defaults["act"]) == "relu"
    assert ast.unparse(fn.returns) == "NDArray"
    assert "A test op." in ast.get_docstring(fn)


def test_stub_files_parse_and_define_the_ops() -> None:
    for target in stubs.targets():
        tree = ast.parse(target.path().read_text())
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        module = importlib.import_module(target.module)
        assert set(module._ops.names()) - set(vars(module)) - defined <= {
            n for n in module._ops.names() if not n.isidentifier()
        }


_SCRIPT = """
import nnvmpy as nv

x = nv.nd.ones((1, 2, 5, 5))
w = nv.nd.ones((4, 2, 3, 3))
y = nv.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
z = nv.nd.Activation(y, act_type="relu")
total: float = float(z.asnumpy().sum())
s = nv.sym.FullyConnected(nv.sym.Variable("d"), num_hidden=3, name="fc")
v = nv.sym.var("v")  # an alias: the stub must re-export it as itself
g = nv.nd.linalg.gemm2(x, x, transpose_b=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_accepts_real_calls_and_rejects_misspelled_keywords(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent(_SCRIPT))
    bad = tmp_path / "bad.py"
    bad.write_text(
        good.read_text()
        .replace("num_filter=4", "num_filtr=4")
        .replace("num_hidden=3", "num_hiden=3")
        .replace("transpose_b", "transpose_c")
    )
    cmd = [sys.executable, "-m", "mypy", "--no-incremental", "--no-error-summary"]
    ok = subprocess.run([*cmd, str(good)], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    run = subprocess.run([*cmd, str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1
    out = run.stdout
    assert 'Unexpected keyword argument "num_filtr" for "Convolution"' in out
    assert 'Unexpected keyword argument "num_hiden" for "FullyConnected"' in out
    assert 'Unexpected keyword argument "transpose_c" for "gemm2"' in out


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_modules_behind_the_stubs_still_type_check() -> None:
    # a whole-package mypy run reads the .pyi instead of the .py beside it: name the
    # .py files, so the code the stubs stand for is still checked
    root = Path(__file__).resolve().parents[1]
    files = [str(t.path().with_suffix(".py")) for t in stubs.targets()]
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", *files],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert run.returncode == 0, run.stdout + run.stderr
