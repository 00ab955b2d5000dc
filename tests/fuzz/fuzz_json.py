"""Corrupted symbol files: mutations of MXNet symbol JSON, and what loading one must do.

Seeds are the shared model files (MLP, LeNet, ResNet-18), their legacy-dialect form
("param"/"attr", no version) and small generated graphs. A mutation works on the text
(truncate, flip, insert, delete bytes) or on the parsed document (a value replaced by a
hostile one, a key dropped, an index out of range, a cycle, an unknown op, a parameter
string that does not parse). Loading the result must give a Symbol or an NNVMError; a
Symbol that loads must also list, infer, re-save and bind without a raw exception.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_common import Chooser, Finding, Health, checked

import nnvmpy as nv

MODEL_NAMES = ("mlp", "lenet", "resnet18_v1")


def models_dir() -> Path | None:
    """`<repo>/../shared/models` (the CI layout), else this machine's shared folder."""
    repo = Path(__file__).resolve().parents[2]
    for candidate in (repo.parent / "shared" / "models", Path("/work/shared/models")):
        if candidate.is_dir():
            return candidate
    return None


@cache
def seeds() -> tuple[tuple[str, str, dict[str, tuple[int, ...]]], ...]:
    """(name, JSON text, input shapes) of every seed document."""
    out = []
    folder = models_dir()
    if folder is not None:
        for name in MODEL_NAMES:
            text = (folder / f"{name}-symbol.json").read_text()
            expected = json.loads((folder / f"{name}-expected.json").read_text())
            shapes = {k: tuple(v) for k, v in expected["input_shapes"].items()}
            out.append((name, text, shapes))
            out.append((f"{name}-legacy", json.dumps(legacy_dialect(json.loads(text))), shapes))
    for name, (sym, shapes) in generated_graphs().items():
        out.append((name, sym.tojson(), shapes))
    return tuple(out)


def legacy_dialect(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as MXNet 0.8 wrote it: "param"/"attr" instead of "attrs", no version."""
    doc = copy.deepcopy(doc)
    for node in doc["nodes"]:
        attrs = node.pop("attrs", {})
        node["param"] = {k: v for k, v in attrs.items() if not k.startswith("__")}
        node["attr"] = {k.strip("_"): v for k, v in attrs.items() if k.startswith("__")}
    doc.pop("attrs", None)
    return doc


def generated_graphs() -> dict[str, tuple[Any, dict[str, tuple[int, ...]]]]:
    """Small graphs over op families the shared models lack."""
    x, y = nv.sym.Variable("x"), nv.sym.Variable("y")
    a = nv.sym.broadcast_add(nv.sym.exp(x), nv.sym.Reshape(y, shape=(-1, 4)))
    b = nv.sym.SliceChannel(a, num_outputs=2, axis=1)
    c = nv.sym.Concat(b[1], b[0], dim=0) * 2.0
    d = nv.sym.sum(nv.sym.transpose(c), axis=1, keepdims=True)
    pooled = nv.sym.Pooling(
        nv.sym.Convolution(x.reshape((1, 1, 2, 4)), kernel=(1, 2), num_filter=2, name="conv"),
        kernel=(1, 2),
        pool_type="avg",
    )
    return {
        "generated-mixed": (
            nv.sym.Group([d, nv.sym.softmax(c, axis=-1)]),
            {"x": (2, 4), "y": (8,)},
        ),
        "generated-conv": (nv.sym.Flatten(pooled), {"x": (2, 4)}),
    }


# -- mutations --------------------------------------------------------------------------------

HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1,
    7,
    2**31,
    2**63,
    -(2**63) - 1,
    10**30,
    1.5,
    float("nan"),
    float("inf"),
    "",
    "x",
    "0",
    "(2,",
    "(0, 0)",
    "(-1, 3)",
    "1e999",
    "None",
    "null",
    [],
    [0],
    [0, 0],
    [0, 0, 0, 0],
    [[0, 0, 0]],
    [-1, 0, 0],
    [10**9, 0, 0],
    [0, 10**9, 0],
    [0, -1, 0],
    ["0", 0, 0],
    [None, None, None],
    {},
    {"a": 1},
    {"op": "null"},
    [[[[[[]]]]]],
)

HOSTILE_PARAM_STRINGS = (
    "",
    " ",
    "(",
    ")",
    "()",
    "(,)",
    "(0,)",
    "(0, 0)",
    "(-1, -1)",
    "(1, 1, 1, 1, 1, 1, 1, 1, 1)",
    "(99999999999, 99999999999)",
    "-1",
    "0",
    "1e999",
    "-1e999",
    "nan",
    "inf",
    "True",
    "None",
    "[1, [2]]",
    "1.5",
    "2147483648",
    "9" * 40,
    "relu",
    "\x00",
    "\u00e9",
)

OP_NAMES_TO_TRY = (
    "",
    "nonexistent_op",
    "null",
    "Convolution",
    "FullyConnected",
    "Concat",
    "SliceChannel",
    "Reshape",
    "BatchNorm",
    "_backward_FullyConnected",
    "elemwise_add",
    "sum",
    "_full",
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indices) into the document, the root excluded."""
    out = []
    if isinstance(doc, dict):
        items: Any = doc.items()
    elif isinstance(doc, list):
        items = enumerate(doc)
    else:
        return out
    for k, v in items:
        out.append((*prefix, k))
        out.extend(_paths(v, (*prefix, k)))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _nodes(doc: Any) -> list[Any]:
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    return nodes if isinstance(nodes, list) else []


def mutate_doc(c: Chooser, doc: Any) -> str:
    """One structural mutation of `doc` (in place); returns what it did."""
    nodes = _nodes(doc)
    op_nodes = [n for n in nodes if isinstance(n, dict) and n.get("op") not in (None, "null")]
    kind = c.integer(0, 9)
    if kind == 0 or not nodes:  # replace any value anywhere
        paths = _paths(doc)
        if not paths:
            return "nothing to mutate"
        path = c.choice(paths)
        value = c.choice(HOSTILE_VALUES)
        _get(doc, path[:-1])[path[-1]] = copy.deepcopy(value)
        return f"set {list(path)} = {value!r:.40}"
    if kind == 1:  # drop a key or an item
        paths = _paths(doc)
        path = c.choice(paths)
        parent = _get(doc, path[:-1])
        del parent[path[-1]]
        return f"deleted {list(path)}"
    if kind == 2 and op_nodes:  # a parameter string that may not parse
        node = c.choice(op_nodes)
        attrs = node.setdefault("attrs", {}) if isinstance(node.get("attrs", {}), dict) else {}
        keys = [*attrs, "num_hidden", "kernel", "shape", "axis", "num_outputs", "dim", "bogus"]
        key = c.choice(keys)
        attrs[key] = c.choice(HOSTILE_PARAM_STRINGS)
        return f"node {node.get('name')!r}: attrs[{key!r}] = {attrs[key]!r}"
    if kind == 3:  # an input reading a later node, itself, or an output that is not there
        node = c.choice(nodes)
        if not isinstance(node, dict) or not isinstance(node.get("inputs"), list):
            return "no inputs"
        nid = nodes.index(node)
        target = c.choice([nid, nid + 1, len(nodes) - 1, len(nodes), -1, 0])
        entry = [target, c.choice([0, 0, 1, 2, 99]), c.choice([0, 0, 1])]
        if node["inputs"] and c.chance(0.7):
            node["inputs"][c.integer(0, len(node["inputs"]) - 1)] = entry
        else:
            node["inputs"].append(entry)
        return f"node {nid} input -> {entry}"
    if kind == 4:  # a different (or unknown) op on a node
        node = c.choice(nodes)
        if isinstance(node, dict):
            node["op"] = c.choice(OP_NAMES_TO_TRY)
            return f"node {node.get('name')!r} op = {node['op']!r}"
        return "node not a dict"
    if kind == 5:  # heads
        heads = [
            [c.integer(-2, len(nodes) + 1), c.integer(-1, 3), 0] for _ in range(c.integer(0, 3))
        ]
        doc["heads"] = heads
        return f"heads = {heads}"
    if kind == 6:  # control dependencies
        node = c.choice(nodes)
        if isinstance(node, dict):
            node["control_deps"] = [c.integer(-1, len(nodes) + 1) for _ in range(c.integer(1, 3))]
            return f"control_deps = {node['control_deps']}"
        return "node not a dict"
    if kind == 7:  # graph attributes and version
        value = c.choice(HOSTILE_VALUES)
        doc["attrs"] = c.choice(
            [
                {"mxnet_version": ["int", value]},
                {"mxnet_version": value},
                {"mxnet_version": ["list_shape", value]},
                {"x": ["list_shape", [[1, 2], value]]},
                value,
            ]
        )
        return f"graph attrs = {doc['attrs']!r:.60}"
    if kind == 8 and len(nodes) > 1:  # swap two nodes (breaks topological order)
        i, j = c.integer(0, len(nodes) - 1), c.integer(0, len(nodes) - 1)
        nodes[i], nodes[j] = nodes[j], nodes[i]
        return f"swapped nodes {i} and {j}"
    node = c.choice(nodes)  # a name or hint attribute of an odd type
    if isinstance(node, dict):
        key = c.choice(["name", "attrs", "param", "attr", "inputs", "op"])
        node[key] = copy.deepcopy(c.choice(HOSTILE_VALUES))
        return f"node[{key!r}] = {node[key]!r:.40}"
    return "node not a dict"


def mutate_text(c: Chooser, text: str) -> tuple[str | bytes, str]:
    """One byte-level mutation; bytes when the result is not valid UTF-8."""
    raw = text.encode()
    kind = c.integer(0, 4)
    pos = c.integer(0, len(raw))
    if kind == 0:
        return raw[:pos].decode(errors="ignore"), f"truncated at {pos}"
    if kind == 1 and raw:
        pos = min(pos, len(raw) - 1)
        flipped = raw[:pos] + bytes([raw[pos] ^ (1 << c.integer(0, 7))]) + raw[pos + 1 :]
        return _text_or_bytes(flipped), f"bit flipped at {pos}"
    if kind == 2:
        junk = c.choice([b"{", b"}", b"[", b"]", b",", b'"', b"\\", b"\xff", b"0", b"-", b"null"])
        return _text_or_bytes(raw[:pos] + junk + raw[pos:]), f"inserted {junk!r} at {pos}"
    if kind == 3:
        n = c.integer(1, 64)
        return _text_or_bytes(raw[:pos] + raw[pos + n :]), f"deleted {n} bytes at {pos}"
    return c.choice(["", "{}", "[]", "null", '{"nodes": 3}', "\xef\xbb\xbf{}"]), "replaced"


def _text_or_bytes(raw: bytes) -> str | bytes:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return raw


def corrupted_symbol(c: Chooser) -> tuple[str, str | bytes, dict[str, tuple[int, ...]], str]:
    """(seed name, corrupted document, the seed's input shapes, what was done)."""
    name, text, shapes = c.choice(seeds())
    steps = []
    if c.chance(0.3):
        out, what = mutate_text(c, text)
        steps.append(what)
    else:
        doc = json.loads(text)
        steps.extend(mutate_doc(c, doc) for _ in range(c.integer(1, 3)))
        out = json.dumps(doc)
    return name, out, shapes, "; ".join(steps)


# -- what loading must do ---------------------------------------------------------------------


def use_symbol(sym: Any, shapes: dict[str, tuple[int, ...]]) -> None:
    """What a user does with a loaded symbol; every step may only raise NNVMError."""
    sym.list_arguments()
    sym.list_outputs()
    sym.list_auxiliary_states()
    sym.attr_dict()
    nv.sym.load_json(sym.tojson())
    known = {k: v for k, v in shapes.items() if k in sym.list_arguments()}
    arg_shapes, _, _ = sym.infer_shape_partial(**known)
    sym.infer_type()
    complete = arg_shapes is not None and all(s and 0 not in s for s in arg_shapes)
    if known and complete and sum(int(np.prod(s)) for s in arg_shapes) < 4_000_000:
        exe = sym.simple_bind(nv.cpu(), grad_req="null", **known)
        exe.forward(is_train=False)
        nv.nd.waitall()


def check_corrupted_symbol(c: Chooser, health: Health, tmp_dir: Path) -> list[Finding]:
    """Load one corrupted document through load_json, load (a file) and pickle."""
    name, doc, shapes, what = corrupted_symbol(c)
    repro = f"seed {name}: {what}"
    path = tmp_dir / "corrupt-symbol.json"
    path.write_bytes(doc if isinstance(doc, bytes) else doc.encode())

    def via_file() -> None:
        use_symbol(nv.sym.load(str(path)), shapes)

    found = checked(health, "sym.load", via_file, repro)
    if isinstance(doc, str):

        def via_string() -> None:
            use_symbol(nv.sym.load_json(doc), shapes)

        def via_pickle() -> None:
            sym = nv.sym.Symbol.__new__(nv.sym.Symbol)
            sym.__setstate__({"handle": doc})
            use_symbol(sym, shapes)

        found += checked(health, "sym.load_json", via_string, repro)
        found += checked(health, "Symbol.__setstate__", via_pickle, repro)
    return found


__all__ = ["check_corrupted_symbol", "corrupted_symbol", "legacy_dialect", "seeds", "use_symbol"]
