"""nv.test_utils scaffolding: download (against a local HTTP server), DummyIter,
same_symbol_structure, and the runtime queries (environment, machine, GPU)."""

from __future__ import annotations

import http.server
import os
import platform
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import test_utils as tu

# -- download ------------------------------------------------------------------------------------


class _Server:
    """A localhost HTTP server: /data.bin answers PAYLOAD after `failures` 500s."""

    PAYLOAD = bytes(range(256)) * 40

    def __init__(self) -> None:
        self.requests = 0
        self.failures = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests += 1
                if self.path != "/data.bin":
                    self.send_error(404)
                    return
                if owner.failures > 0:
                    owner.failures -= 1
                    self.send_error(500)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(owner.PAYLOAD)))
                self.end_headers()
                self.wfile.write(owner.PAYLOAD)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def test_download_names_the_file_after_the_url(server: _Server, tmp_path: Path) -> None:
    fname = tu.download(server.url + "/data.bin", dirname=str(tmp_path / "new" / "dir"))
    assert fname == str(tmp_path / "new" / "dir" / "data.bin")
    assert Path(fname).read_bytes() == server.PAYLOAD
    assert os.listdir(tmp_path / "new" / "dir") == ["data.bin"]  # no temporary left behind


def test_download_skips_an_existing_file_unless_overwrite(server: _Server, tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")
    assert tu.download(server.url + "/data.bin", fname=str(target)) == str(target)
    assert target.read_bytes() == b"old"
    assert server.requests == 0
    tu.download(server.url + "/data.bin", fname=str(target), overwrite=True)
    assert target.read_bytes() == server.PAYLOAD
    assert server.requests == 1


def test_download_retries_then_succeeds(server: _Server, tmp_path: Path) -> None:
    server.failures = 2  # `retries` counts attempts, as MXNet's: the third one succeeds
    fname = tu.download(server.url + "/data.bin", fname=str(tmp_path / "d"), retries=3)
    assert Path(fname).read_bytes() == server.PAYLOAD
    assert server.requests == 3


def test_download_raises_the_last_failure_and_leaves_no_file(
    server: _Server, tmp_path: Path
) -> None:
    server.failures = 5
    with pytest.raises(OSError, match="500"):
        tu.download(server.url + "/data.bin", fname=str(tmp_path / "d"), retries=2)
    assert server.requests == 2
    with pytest.raises(OSError, match="500"):
        tu.download(server.url + "/data.bin", fname=str(tmp_path / "d"), retries=0)
    assert server.requests == 3  # retries=0 still makes one attempt
    assert os.listdir(tmp_path) == []
    with pytest.raises(OSError, match="404"):
        tu.download(server.url + "/missing", fname=str(tmp_path / "m"), retries=0)


def test_download_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(nv.NNVMError, match="retries expects an int >= 0"):
        tu.download("http://127.0.0.1:9/x", fname=str(tmp_path / "x"), retries=-1)
    with pytest.raises(nv.NNVMError, match="cannot guess a file name"):
        tu.download("http://127.0.0.1:9/dir/")


# -- DummyIter -----------------------------------------------------------------------------------


def test_dummy_iter_repeats_the_first_batch_forever() -> None:
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    real = nv.io.NDArrayIter(data, np.arange(10, dtype=np.float32), batch_size=4)
    dummy = tu.DummyIter(real)
    assert isinstance(dummy, nv.io.DataIter)
    assert dummy.batch_size == 4
    assert dummy.provide_data == real.provide_data
    assert dummy.provide_label == real.provide_label
    first = next(dummy)
    assert first.data is not None
    np.testing.assert_array_equal(first.data[0].asnumpy(), data[:4])
    for seen, batch in enumerate(dummy, start=1):  # more batches than the real iterator has
        assert batch is first
        if seen == 7:
            break
    dummy.reset()
    assert dummy.next() is first


# -- same_symbol_structure -----------------------------------------------------------------------


def test_same_symbol_structure_ignores_names_and_attributes() -> None:
    x, y = nv.sym.var("x"), nv.sym.var("y")
    assert tu.same_symbol_structure(nv.sym.relu(x, name="a"), nv.sym.relu(y, name="b"))
    assert tu.same_symbol_structure(
        nv.sym.Dropout(x, p=0.1, name="d1"), nv.sym.Dropout(y, p=0.5, name="d2")
    )
    assert tu.same_symbol_structure(x + y, y + x)  # var x, var y, add: same shape of graph


def test_same_symbol_structure_sees_ops_wiring_and_size() -> None:
    x, y = nv.sym.var("x"), nv.sym.var("y")
    assert not tu.same_symbol_structure(nv.sym.relu(x), nv.sym.sigmoid(x))
    assert not tu.same_symbol_structure(nv.sym.relu(x), nv.sym.relu(nv.sym.relu(x)))
    assert not tu.same_symbol_structure(nv.sym.relu(nv.sym.relu(x)), nv.sym.relu(x))
    assert not tu.same_symbol_structure(x + nv.sym.relu(y), nv.sym.relu(x) + y)
    # same nodes, different wiring: x - relu(x) vs relu(x) - x
    r = nv.sym.relu(x)
    assert not tu.same_symbol_structure(x - r, r - x)


def test_same_symbol_structure_needs_symbols() -> None:
    with pytest.raises(nv.NNVMError, match="same_symbol_structure: expects Symbols"):
        tu.same_symbol_structure(nv.sym.var("x"), "x")


# -- runtime queries -----------------------------------------------------------------------------


def test_getenv_and_setenv_go_through_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNVMPY_TEST_UTILS_VAR", raising=False)
    assert tu.getenv("NNVMPY_TEST_UTILS_VAR") is None
    tu.setenv("NNVMPY_TEST_UTILS_VAR", "7")
    assert os.environ["NNVMPY_TEST_UTILS_VAR"] == "7"
    assert tu.getenv("NNVMPY_TEST_UTILS_VAR") == "7"
    tu.setenv("NNVMPY_TEST_UTILS_VAR", None)
    assert "NNVMPY_TEST_UTILS_VAR" not in os.environ
    with pytest.raises(nv.NNVMError, match="setenv: expects a str name"):
        tu.setenv("NNVMPY_TEST_UTILS_VAR", 7)  # type: ignore[arg-type]


def test_machine_and_operator_queries() -> None:
    assert tu.is_aarch64_run() == (platform.machine().lower() in ("aarch64", "arm64"))
    assert tu.has_tvm_ops() is False
    assert tu.is_op_runnable() is True
    assert tu.current_context() == nv.cpu(0)


def test_cuda_compute_capability_needs_a_gpu_context() -> None:
    with pytest.raises(nv.NNVMError, match="expects a gpu context"):
        tu.get_cuda_compute_capability(nv.cpu())
    with pytest.raises(nv.NNVMError, match="is not available"):
        tu.get_cuda_compute_capability(nv.gpu(nv.num_gpus() + 3))


@pytest.mark.gpu
def test_cuda_compute_capability_of_a_gpu_is_major_times_ten_plus_minor() -> None:
    from numba import cuda

    major, minor = cuda.gpus[0].compute_capability
    assert tu.get_cuda_compute_capability(nv.gpu(0)) == 10 * major + minor
