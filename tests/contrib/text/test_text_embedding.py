"""nv.contrib.text.embedding: loading `token v1 v2 ...` files, re-indexing to a
vocabulary, composites, lookups and updates, the registry of pre-trained embeddings; every
expected vector is written out from the file contents the test itself creates."""

from __future__ import annotations

import functools
import hashlib
import http.server
import re
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.contrib.text import embedding, vocab

A = [0.5, -1.0, 2.0]
B = [1.5, 0.25, -3.0]
C = [4.0, 4.5, 5.0]
UNK = [9.0, 8.0, 7.0]


def _write(path, lines, delim="\t"):
    path.write_text("".join(delim.join(map(str, line)) + "\n" for line in lines))
    return str(path)


@pytest.fixture
def ab_file(tmp_path):
    return _write(tmp_path / "ab.txt", [["a", *A], ["b", *B]])


def test_custom_embedding_indexes_file_tokens_after_unknown(ab_file):
    e = embedding.CustomEmbedding(ab_file, "\t")
    assert e.idx_to_token == ["<unk>", "a", "b"]
    assert e.vec_len == 3
    assert len(e) == 3
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[0, 0, 0], A, B])
    assert e.idx_to_vec.dtype == np.float32


def test_init_unknown_vec_is_called_with_the_vector_length(ab_file):
    seen = []

    def init(shape):
        seen.append(shape)
        return nv.nd.ones(shape) * 2

    e = embedding.CustomEmbedding(ab_file, "\t", init_unknown_vec=init, reserved_tokens=["<p>"])
    assert seen == [3]
    assert e.idx_to_token == ["<unk>", "<p>", "a", "b"]
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[2, 2, 2], [2, 2, 2], A, B])


def test_a_line_for_the_unknown_token_gives_its_vector(tmp_path):
    path = _write(tmp_path / "u.txt", [["a", *A], ["<u>", *UNK]])
    e = embedding.CustomEmbedding(path, "\t", init_unknown_vec=nv.nd.ones, unknown_token="<u>")
    assert e.idx_to_token == ["<u>", "a"]
    np.testing.assert_allclose(e.get_vecs_by_tokens("never seen").asnumpy(), UNK)


def test_header_and_repeated_lines_are_skipped_with_a_warning(tmp_path):
    path = _write(tmp_path / "h.vec", [[2, 3], ["a", *A], ["a", *B], ["b", *B]], delim=" ")
    with pytest.warns(UserWarning, match="header|repeated") as record:
        e = embedding.CustomEmbedding(path)
    assert len(record) == 2
    assert e.idx_to_token == ["<unk>", "a", "b"]
    np.testing.assert_allclose(e.idx_to_vec.asnumpy()[1:], [A, B])


@pytest.mark.parametrize(
    ("bad_line", "message", "builtin"),
    [
        (["c"], "expected a token and its vector", AssertionError),
        (["c", 1, 2], "has 2 elements, expected 3", AssertionError),
        (["c", 1, "x", 2], "not a number", ValueError),
    ],
)
def test_malformed_files_are_errors_naming_file_and_line(tmp_path, bad_line, message, builtin):
    path = _write(tmp_path / "bad.txt", [["a", *A], bad_line])
    with pytest.raises(NNVMError, match=re.escape(message)) as err:
        embedding.CustomEmbedding(path, "\t")
    assert "line 2" in str(err.value)
    assert "bad.txt" in str(err.value)
    assert isinstance(err.value, builtin)  # the class MXNet raises there


def test_missing_or_empty_file_is_an_error(tmp_path):
    with pytest.raises(NNVMError, match="does not exist"):
        embedding.CustomEmbedding(str(tmp_path / "nope.txt"))
    with pytest.raises(NNVMError, match="holds no vector"):
        embedding.CustomEmbedding(_write(tmp_path / "empty.txt", []))


def test_lookup_single_list_and_lower_case_backup(ab_file):
    e = embedding.CustomEmbedding(ab_file, "\t")
    assert e.get_vecs_by_tokens("a").shape == (3,)
    np.testing.assert_allclose(e.get_vecs_by_tokens(["b"]).asnumpy(), [B])
    np.testing.assert_allclose(e.get_vecs_by_tokens(["A", "b"]).asnumpy(), [[0, 0, 0], B])
    np.testing.assert_allclose(
        e.get_vecs_by_tokens(["A", "b"], lower_case_backup=True).asnumpy(), [A, B]
    )


def test_reindexing_to_a_vocabulary(ab_file):
    v = vocab.Vocabulary(Counter(["c", "c", "b", "a", "a", "a"]), reserved_tokens=["<p>"])
    e = embedding.CustomEmbedding(ab_file, "\t", init_unknown_vec=nv.nd.ones, vocabulary=v)
    assert e.idx_to_token == ["<unk>", "<p>", "a", "c", "b"]
    assert e.token_to_idx == v.token_to_idx
    assert e.reserved_tokens == ["<p>"]
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[1] * 3, [1] * 3, A, [1] * 3, B])


def test_vocabulary_unknown_token_takes_the_unknown_vector(ab_file):
    v = vocab.Vocabulary(Counter(["b"]), unknown_token="a")
    e = embedding.CustomEmbedding(ab_file, "\t", vocabulary=v)
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[0, 0, 0], B])


def test_update_token_vectors(ab_file):
    e = embedding.CustomEmbedding(ab_file, "\t")
    e.update_token_vectors(["b", "a"], nv.nd.array([[1, 1, 1], [2, 2, 2]]))
    e.update_token_vectors("<unk>", nv.nd.array([3, 3, 3]))
    e.update_token_vectors(["<unk>"], nv.nd.array([[4, 4, 4]]))
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[4] * 3, [2] * 3, [1] * 3])


@pytest.mark.parametrize(
    ("tokens", "vectors", "error"),
    [
        ("zzz", [1, 1, 1], ValueError),
        ("a", [[1, 1, 1], [1, 1, 1]], AssertionError),
        ("a", [1], AssertionError),
        (["a", "b"], [1, 1, 1], AssertionError),
    ],
)
def test_update_token_vectors_rejects_unknown_tokens_and_bad_shapes(
    ab_file, tokens, vectors, error
):
    e = embedding.CustomEmbedding(ab_file, "\t")
    with pytest.raises(NNVMError) as err:
        e.update_token_vectors(tokens, nv.nd.array(vectors))
    assert isinstance(err.value, error)
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[0, 0, 0], A, B])


def test_composite_concatenates_vectors_per_vocabulary_token(tmp_path, ab_file):
    e1 = embedding.CustomEmbedding(ab_file, "\t", init_unknown_vec=nv.nd.ones)
    e2 = embedding.CustomEmbedding(
        _write(tmp_path / "cu.txt", [["c", *C], ["<u>", *UNK]]), "\t", unknown_token="<u>"
    )
    v = vocab.Vocabulary(Counter(["a", "c", "c", "d"]), unknown_token="a")
    ce = embedding.CompositeEmbedding(v, [e1, e2])
    assert ce.idx_to_token == ["a", "c", "d"]
    assert ce.vec_len == 6
    # row 0 is v's unknown token "a": each embedding's unknown vector, not e1's "a"
    np.testing.assert_allclose(
        ce.idx_to_vec.asnumpy(), [[1, 1, 1, *UNK], [1, 1, 1, *C], [1, 1, 1, *UNK]]
    )
    single = embedding.CompositeEmbedding(v, e2)
    np.testing.assert_allclose(single.idx_to_vec.asnumpy(), [UNK, C, UNK])
    with pytest.raises(NNVMError, match="token embeddings"):
        embedding.CompositeEmbedding(v, [v])


def test_registry_create_and_pretrained_names(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding, "_REGISTRY", dict(embedding._REGISTRY))
    data = b"hello 1 2\nworld 3 4\n"

    @embedding.register
    class Tiny(embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"tiny.vec": hashlib.sha1(data).hexdigest()}
        namespace = "tiny"

        def __init__(self, embedding_root=str(tmp_path), **kwargs):
            super().__init__(**kwargs)
            Tiny._load_pretrained(self, "tiny.vec", embedding_root, nv.nd.zeros, None, " ")

    assert embedding.get_pretrained_file_names("tiny") == ["tiny.vec"]
    assert embedding.get_pretrained_file_names()["tiny"] == ["tiny.vec"]
    with pytest.raises(NNVMError, match="not found"):
        embedding.create("tiny")
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "tiny.vec").write_bytes(b"hello 0 0\n")  # wrong checksum
    with pytest.raises(NNVMError, match="not found"):
        embedding.create("tiny")
    (tmp_path / "tiny" / "tiny.vec").write_bytes(data)
    e = embedding.create("Tiny")
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[0, 0], [1, 2], [3, 4]])
    with pytest.raises(KeyError, match="not registered") as err:
        embedding.create("no-such-embedding")
    assert isinstance(err.value, AssertionError)  # what MXNet's create raises
    with pytest.raises(KeyError):
        embedding.get_pretrained_file_names("no-such-embedding")
    with pytest.raises(NNVMError, match="_TokenEmbedding subclass"):
        embedding.register(dict)


@pytest.fixture
def http_repo(tmp_path):
    """A local HTTP server over tmp_path/repo (the fetch path, without the network)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(repo))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield repo, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_fetch_from_repo_url_checks_the_checksum(tmp_path, http_repo):
    repo, url = http_repo
    (repo / "r").mkdir()
    data = b"x 1 2\n"
    (repo / "r" / "r.vec").write_bytes(data)

    class Remote(embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"r.vec": hashlib.sha1(data).hexdigest()}
        namespace = "r"
        repo_url = url

    path = Remote._get_pretrained_file(str(tmp_path / "root"), "r.vec")
    assert Path(path).read_bytes() == data
    Remote.pretrained_file_name_sha1 = {"r.vec": "0" * 40}
    with pytest.raises(NNVMError, match="SHA-1"):
        Remote._get_pretrained_file(str(tmp_path / "root2"), "r.vec")


def test_glove_and_fasttext_read_local_files(tmp_path):
    names = embedding.get_pretrained_file_names()
    assert len(names["glove"]) == 10
    assert len(set(names["fasttext"])) == len(names["fasttext"])
    assert "wiki.en.vec" in names["fasttext"]
    assert "glove.6B.50d.txt" in names["glove"]
    assert all(n.endswith(".vec") for n in names["fasttext"])
    (tmp_path / "glove").mkdir()
    _write(tmp_path / "glove" / "glove.6B.50d.txt", [["a", *A]], delim=" ")
    g = embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))
    np.testing.assert_allclose(g.get_vecs_by_tokens("a").asnumpy(), A)
    (tmp_path / "fasttext").mkdir()
    _write(tmp_path / "fasttext" / "wiki.simple.vec", [[1, 3], ["b", *B]], delim=" ")
    with pytest.warns(UserWarning, match="header"):
        f = embedding.FastText(embedding_root=str(tmp_path))
    assert f.idx_to_token == ["<unk>", "b"]
    with pytest.raises(KeyError):
        embedding.GloVe("glove.nope.txt", embedding_root=str(tmp_path))


def test_mxnet_name_is_importable():
    assert nv.contrib.text.embedding is embedding
    assert nv.contrib.text.vocab.Vocabulary is vocab.Vocabulary
