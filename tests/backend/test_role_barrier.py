"""A barrier inside a warp role (hrev19). The attention pipeline's short keys' variant (a launch whose keys have at
most 512 rows: `facts.Short`) of a user's loop with a per-head scalar read before it (`slopes.partition([1])
.load([h]).item()`, ALiBi: tests/user a12) broadcast that scalar through shared memory inside the consumers' tile
walk, between two CTA barriers (`bar.sync 0`). Only the consumer warps reach them: the producer warp waited for a
free ring stage, the consumers for the producer at the barrier, and the CTA hung (llsim: a deadlock at 500 keys;
at 100 keys the producer had loaded every stage and exited first). A barrier inside a role is now the role's own
(a named barrier over its threads, `codegen/core.ROLE_BARRIER`)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice, sim_runtime_device

import tilelang.run as run
from tilelang import driver
from tilelang.backend.facts import TensorFacts

A12 = (Path(__file__).parents[1] / "user" / "programs" / "a12_alibi_softcap_attention.tile").read_text(encoding="utf-8")


def _program(heads: int, keys: int) -> str:
    return A12.replace("let h = 4;", f"let h = {heads};").replace("let s = 100;", f"let s = {keys};")


def test_the_consumers_barriers_are_their_own() -> None:
    k = next(x for x in driver.compile(_program(1, 500), "ir").output if x.name == "alibi_attn")
    shapes = {"o": (1, 500, 64), "q": (1, 500, 64), "k": (1, 500, 64), "v": (1, 500, 64), "slopes": (1,)}
    facts = {n: TensorFacts.of_launch(0, s) for n, s in shapes.items()}
    facts["k"] = dataclasses.replace(facts["k"], rows_at_most=512)  # the short keys' variant (`choose_variant`'s)
    text = SimDevice("sm_90a").compile(k, facts)[0].source
    roles = text[text.index("role_consumer"):]
    assert "barrier.cta.sync.aligned.all" not in roles.split("roles_done")[0]
    assert re.search(r"barrier\.cta\.sync\.aligned\.count\(i32 14, i32 128\)", roles)


@pytest.mark.heavy  # (~30 s of llsim; the default test above checks the barriers in its LLVM)
def test_the_short_variant_runs_to_the_interpreters_tensors(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    src = _program(1, 500)
    want = run.execute(src, "cpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
    monkeypatch.setattr(run, "make_device", lambda choice, o: sim_runtime_device("sm_90a", sms=8))
    got = run.execute(src, "cpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2e-3, atol=2e-3)
