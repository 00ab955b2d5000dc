"""nv.viz against MXNet 1.9.1's own mx.viz output (tests/data/viz_reference.json, written by
tools/make_viz_reference.py under .mxenv): the same summary text, the same DOT nodes,
labels, colours and edges."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import viz

REFERENCE = json.loads((Path(__file__).parent / "data" / "viz_reference.json").read_text())
CASES = sorted(REFERENCE)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[\[\]={};]|[^\s\[\]={};"]+')


def _unquote(token: str) -> str:
    return token[1:-1].replace('\\"', '"') if token.startswith('"') else token


def parse_dot(source: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict]]]:
    """(nodes {name: attrs}, edges [(tail, head, attrs)]) of a `digraph { ... }` source, so
    sources written by different graphviz package versions (quoting) compare equal."""
    tokens = _TOKEN.findall(source)
    body = tokens[tokens.index("{") + 1 : tokens.index("}", len(tokens) - 1)]
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict]] = []
    i = 0
    while i < len(body):
        ids = [_unquote(body[i])]
        i += 1
        while i < len(body) and body[i] == "->":
            ids.append(_unquote(body[i + 1]))
            i += 2
        attrs: dict[str, str] = {}
        if i < len(body) and body[i] == "[":
            i += 1
            while body[i] != "]":
                attrs[_unquote(body[i])] = _unquote(body[i + 2])
                i += 3
            i += 1
        if len(ids) == 1:
            nodes[ids[0]] = attrs
        else:
            edges.append((ids[0], ids[1], attrs))
    return nodes, edges


def _case(name: str) -> tuple[nv.sym.Symbol, dict]:
    case = REFERENCE[name]
    return nv.sym.load_json(case["symbol"]), {k: tuple(v) for k, v in case["shape"].items()}


def _printed(*args: object, **kwargs: object) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        viz.print_summary(*args, **kwargs)  # type: ignore[arg-type]
    return buf.getvalue()


@pytest.mark.parametrize("name", CASES)
def test_print_summary_prints_mxnets_table(name: str) -> None:
    symbol, shape = _case(name)
    assert _printed(symbol, shape=shape) == REFERENCE[name]["summary"]
    assert _printed(symbol) == REFERENCE[name]["summary_no_shape"]
    narrow = _printed(symbol, shape, line_length=80, positions=[30, 50, 60, 80])
    assert narrow == REFERENCE[name]["summary_narrow"]


def test_resnet18_total_matches_its_parameter_arrays() -> None:
    # independent of the printed rules: for ResNet-18 (convolutions without bias, one
    # dense layer after global pooling) MXNet's count is every weight/bias/gamma/beta
    symbol, shape = _case("resnet18_v1")
    arg_shapes, _, _ = symbol.infer_shape(**shape)
    learnable = sum(
        int(np.prod(s))
        for n, s in zip(symbol.list_arguments(), arg_shapes)
        if n not in ("data", "softmax_label")
    )
    assert f"Total params: {learnable}\n" in _printed(symbol, shape)


@pytest.mark.parametrize("name", CASES)
def test_plot_network_draws_mxnets_graph(name: str) -> None:
    pytest.importorskip("graphviz")
    symbol, shape = _case(name)
    ref = REFERENCE[name]
    assert parse_dot(viz.plot_network(symbol, title=name).source) == parse_dot(ref["dot"])
    full = viz.plot_network(
        symbol,
        title=name,
        shape=shape,
        dtype=dict.fromkeys(shape, "float32"),
        hide_weights=False,
        node_attrs={"shape": "oval", "fixedsize": "false"},
    )
    assert parse_dot(full.source) == parse_dot(ref["dot_shape_type"])


def test_plot_network_warns_once_about_repeated_names() -> None:
    pytest.importorskip("graphviz")
    s = nv.sym
    net = s.FullyConnected(s.Variable("data"), name="fc", num_hidden=128)
    net = s.Activation(net, name="relu1", act_type="relu")
    net = s.SoftmaxOutput(s.FullyConnected(net, name="fc", num_hidden=10), name="out")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        viz.plot_network(net, shape={"data": (100, 200)}, node_attrs={"fixedsize": "false"})
    assert len(caught) == 1
    assert caught[0].category is RuntimeWarning
    assert "multiple variables with the same name" in str(caught[0].message)
    assert "fc" in str(caught[0].message)


def test_bad_input_raises_named_errors_and_viz_keeps_working() -> None:
    with pytest.raises(nv.NNVMError, match=r"print_summary: symbol must be a Symbol"):
        viz.print_summary("not a symbol")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="plot_network"):
        viz.plot_network(42)
    symbol, shape = _case("mlp")
    with pytest.raises(nv.NNVMError):
        viz.print_summary(symbol, shape={"data": (4, 3, 2), "fc1_weight": (1, 1)})
    assert _printed(symbol, shape=shape) == REFERENCE["mlp"]["summary"]


def test_nv_viz_is_the_module() -> None:
    assert nv.viz.print_summary is viz.print_summary
    assert nv.visualization is nv.viz


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_resnet18_renders_to_svg_with_every_layer_and_edge(tmp_path: Path) -> None:
    pytest.importorskip("graphviz")
    symbol, shape = _case("resnet18_v1")
    digraph = viz.plot_network(symbol, title="resnet18", save_format="svg", shape=shape)
    path = Path(digraph.render(filename="net", directory=str(tmp_path), cleanup=True))
    svg = path.read_text()
    graph = json.loads(symbol.tojson())
    ops = [n["name"] for n in graph["nodes"] if n["op"] != "null"]
    assert svg.count('class="node"') == len(ops) + 2  # data and softmax_label
    for name in ops:
        assert f"<title>{name}</title>" in svg
    _, edges = parse_dot(digraph.source)
    assert svg.count('class="edge"') == len(edges)
    for tail, head, _ in edges:
        assert f"<title>{tail}&#45;&gt;{head}</title>" in svg


def test_incomplete_shapes_raise_a_named_infer_error() -> None:
    net = nv.sym.FullyConnected(nv.sym.Variable("a"), num_hidden=3, name="fc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(nv.InferError, match=r"viz.print_summary: the input shapes"):
            viz.print_summary(net, shape={})
