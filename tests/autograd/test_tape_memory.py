"""What the tape keeps alive, and when it lets go; and that recording state is per thread.

Arrays are freed by reference counting alone (the garbage collector is off in these
tests): a recorded graph must hold no reference cycle through its arrays.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.autograd.tape import gradient_reads
from nnvmpy.kernel import storage

nd, ag = nv.nd, nv.autograd


@pytest.fixture(autouse=True)
def no_gc() -> Iterator[None]:
    nd.waitall()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def alive(ref: weakref.ref) -> bool:  # type: ignore[type-arg]
    return ref() is not None


def test_the_gradient_reads_decide_what_is_kept() -> None:
    op = nv.Op.get
    assert gradient_reads(op("exp").parse_attrs({}), 1, 1) == ((), (0,))  # UseOut
    assert gradient_reads(op("sin").parse_attrs({}), 1, 1) == ((0,), ())  # UseIn
    assert gradient_reads(op("elemwise_add").parse_attrs({}), 2, 1) == ((), ())  # UseNone
    assert gradient_reads(op("elemwise_mul").parse_attrs({}), 2, 1) == ((0, 1), ())
    fc = op("FullyConnected").parse_attrs({"num_hidden": 3})
    assert gradient_reads(fc, 3, 1) == ((0, 1), ())  # data and weight, not the bias


def test_an_input_no_gradient_reads_is_freed_while_the_graph_lives() -> None:
    x = nd.ones((100,))
    x.attach_grad()
    with ag.record():
        a = x * 2  # its consumer below reads nothing
        b = a + 1.0
        c = nd.exp(b)  # exp keeps its output, not its input
    a_chunk, b_chunk, c_chunk = (weakref.ref(t._chunk) for t in (a, b, c))
    del a, b
    assert not alive(a_chunk)
    assert not alive(b_chunk)
    del c
    assert not alive(c_chunk)  # nobody differentiates the graph: all of it goes


def test_kept_values_go_after_backward_without_retain_graph() -> None:
    x = nd.ones((100,))
    x.attach_grad()
    with ag.record():
        y = nd.exp(x)
        z = nd.sin(y)  # keeps y
    kept = weakref.ref(y._chunk)
    exp_node, sin_node = weakref.ref(y._entry.node), weakref.ref(z._entry.node)
    del y
    assert alive(kept)
    z.backward(retain_graph=True)
    assert alive(kept)
    assert alive(exp_node)
    z.backward()
    assert not alive(kept)
    assert not alive(exp_node)
    assert alive(sin_node)  # z still refers to its node, which no longer refers to exp's
    del z
    assert not alive(sin_node)


def test_storage_returns_to_its_level_when_a_graph_is_dropped() -> None:
    ctx = nv.cpu()
    x = nd.ones((1000,))
    x.attach_grad()

    def step(differentiate: bool) -> None:
        with ag.record():
            h = nd.relu(x * 3.0 - 1.0)
            y = nd.sum(nd.exp(h) * h)
        if differentiate:
            y.backward()
        nd.waitall()

    step(True)  # warm the pool
    nd.waitall()
    base = storage.stats(ctx).bytes_in_use
    for differentiate in (False, True, False):
        step(differentiate)
        nd.waitall()
        assert storage.stats(ctx).bytes_in_use == base


def test_a_marked_variable_does_not_keep_its_graph_alive() -> None:
    x = nd.ones((10,))
    x.attach_grad()
    with ag.record():
        y = x * 2
    node = weakref.ref(y._entry.node)
    del y
    assert not alive(node)
    assert x.grad is not None


# -- threads --------------------------------------------------------------------------------------


def test_recording_is_per_thread() -> None:
    x = nd.ones((3,))
    x.attach_grad()
    seen: dict[str, object] = {}
    ready, done = threading.Event(), threading.Event()

    def other() -> None:
        ready.wait()
        seen["recording"] = ag.is_recording()
        seen["training"] = ag.is_training()
        seen["entry"] = ag.entry_of(nd.relu(x))
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with ag.record():
        ready.set()
        done.wait()
        y = x * 2
    t.join()
    assert seen == {"recording": False, "training": False, "entry": None}
    assert ag.entry_of(y) is not None


def test_threads_record_and_differentiate_their_own_graphs() -> None:
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(20):
                x = nd.array(np.arange(5.0) + k)
                x.attach_grad()
                with ag.record():
                    y = x * x * float(k + 1)
                y.backward()
                np.testing.assert_allclose(x.grad.asnumpy(), 2 * (k + 1) * x.asnumpy())
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
