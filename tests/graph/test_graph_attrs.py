"""GraphAttr keys: strings that carry a type and a docstring."""

from __future__ import annotations

from nnvmpy.graph import Graph
from nnvmpy.graph import attrs as gattrs
from nnvmpy.graph.attrs import SHAPE, STORAGE_ID, GraphAttr


def test_keys_are_nnvm_names_and_index_like_strings() -> None:
    assert (SHAPE, gattrs.DTYPE, STORAGE_ID, gattrs.STORAGE_INPLACE_INDEX) == (
        "shape",
        "dtype",
        "storage_id",
        "storage_inplace_index",
    )
    g = Graph([], {"shape": [(2,)]})
    assert g.attrs[SHAPE] == [(2,)]
    assert g.attrs.get(STORAGE_ID, None) is None


def test_every_key_documents_who_provides_and_reads_it() -> None:
    keys = {name: v for name, v in vars(gattrs).items() if isinstance(v, GraphAttr)}
    assert len(keys) >= 20
    for name, key in keys.items():
        assert "Provided" in key.doc or "read" in key.doc.lower(), key
        assert name in gattrs.__all__
