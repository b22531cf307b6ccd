"""A failed device assert must be reported by the launch that failed (hostile
review, round 10). Each launch of a kernel with asserts writes a failure into
its own pair of error words, handed out round a buffer of 4,096 words; a
`.launch()` not yet waited for while 2,047 more asserting launches were made
(a long kernel launched, a loop of short ones synced meanwhile) had its pair
handed to another launch: that one's check read the first one's failure as
its own (a wrong message, or an assert number past its own list: an internal
error) and reset the words, so the first one's wait reported nothing. The GPU
is the only engine with such words, so `CudaDevice`'s bookkeeping is run here
on a stand-in with the driver stubbed."""

from __future__ import annotations

import gc
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest

from tilelang.runtime import cuda

Dev = cuda.CudaDevice


def _device(monkeypatch: pytest.MonkeyPatch, words: int = 8) -> Any:
    monkeypatch.setattr(cuda, "_check", lambda result, what, span=None: None)
    d = SimpleNamespace(cuMemcpyDtoH=lambda *a: (0,), cuMemsetD32=lambda *a: (0,), cuGraphLaunch=lambda *a: (0,),
                        cuStreamEndCapture=lambda *a: (0,), cuGraphInstantiate=lambda *a: (0,))
    dev = SimpleNamespace(_err_words=words, _err_next=2, _err_busy={}, _err=SimpleNamespace(ptr=0),
                          ctx=SimpleNamespace(d=d, stream=object()), _pending_asserts=defaultdict(list),
                          _graph_asserts={}, _graph_prints={}, _capture_prints={}, _capturing=set(), _streams=[],
                          _arrive=SimpleNamespace(take=lambda s: None))
    for name in ("_take_err_word", "_release_err_words", "_drop_graph_asserts", "_check_asserts"):
        setattr(dev, name, getattr(Dev, name).__get__(dev))
    return dev


def _pending(word: int) -> tuple[int, Any, None, tuple[int, ...]]:
    return (word, SimpleNamespace(asserts=[]), None, (1,))


def test_a_launch_in_flight_keeps_its_error_words(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dev = _device(monkeypatch)  # three pairs: words 2, 4, 6
    held = dev._take_err_word()  # a `.launch()` not yet waited for
    assert held == 2
    for _ in range(5):  # asserting launches, each synced (checked) at once
        w = dev._take_err_word()
        assert w != held
        dev._check_asserts([_pending(w)])
    dev._check_asserts([_pending(held)])  # its wait
    assert dev._err_busy == {}
    assert 2 in {dev._take_err_word() for _ in range(3)}  # free again


def test_when_every_pair_is_held_the_next_is_shared(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dev = _device(monkeypatch)
    got = [dev._take_err_word() for _ in range(4)]
    assert got[:3] == [2, 4, 6] and got[3] in (2, 4, 6)  # no endless search, no error
    assert sum(dev._err_busy.values()) == 4


def test_taking_a_pair_costs_the_same_with_every_pair_but_one_held(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """2,046 `.launch()`es in flight (not yet waited for): each further asserting launch, checked at
    once, takes the one free pair without walking the buffer (it was ~2,046 lookups a launch)."""
    class Counted(dict):  # type: ignore[type-arg]
        gets = 0

        def get(self, *a: Any) -> Any:
            Counted.gets += 1
            return super().get(*a)

    dev = _device(monkeypatch, words=4096)
    dev._err_busy = Counted()
    held = [dev._take_err_word() for _ in range(2046)]
    assert len(set(held)) == 2046
    Counted.gets = 0
    for _ in range(200):
        w = dev._take_err_word()
        assert w not in held
        dev._check_asserts([_pending(w)])
    assert Counted.gets <= 200 * 4
    dev._check_asserts([_pending(w) for w in held])
    assert dev._err_busy == {}
    assert len({dev._take_err_word() for _ in range(2047)}) == 2047  # every pair free again, each once


def test_a_graphs_words_are_held_while_it_lives(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dev = _device(monkeypatch)
    s = object()
    w = dev._take_err_word()  # a launch captured on `s`
    dev._pending_asserts[id(s)].append(_pending(w))
    class G:  # a graph object the finalizer can watch
        graph = exec = None

    monkeypatch.setattr(cuda, "Graph", lambda ctx: G())
    monkeypatch.setattr(cuda.cuda_pdl, "forget", lambda stream: None)
    monkeypatch.setattr(cuda, "_handle_int", lambda h: 0)
    g = Dev.end_capture(dev, s)
    assert dev._err_busy == {w: 1}
    Dev.replay(dev, g, s)  # a replay holds them once more until its check
    assert dev._err_busy == {w: 2}
    dev._check_asserts(dev._pending_asserts.pop(id(s)))
    assert dev._err_busy == {w: 1}
    assert w not in {dev._take_err_word() for _ in range(2)}
    del g
    gc.collect()
    assert w not in dev._err_busy and dev._graph_asserts == {}
