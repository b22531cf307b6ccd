"""Every example runs on the CPU interpreter, checks itself (`assert_close` in
its `main`), and its tensors also agree with NumPy computed here in Python."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tilelang.run import execute

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def pcg(seed: int) -> np.random.Generator:
    """The generator `rand`/`randn` use (see `tilelang/runtime/builtins.py`)."""
    return np.random.Generator(np.random.PCG64(seed))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_add(v):
    n = 1 << 20
    x = pcg(0).standard_normal(n).astype(np.float32)
    assert np.array_equal(v["x"], x)
    np.testing.assert_array_equal(v["z"], x + v["y"])


def check_saxpy(v):
    y0 = pcg(2).standard_normal(100_000).astype(np.float32)
    np.testing.assert_allclose(v["y"], 2.5 * v["x"] + y0, rtol=1e-6, atol=1e-6)


def check_softmax(v):
    np.testing.assert_allclose(v["y"], softmax(v["x"].astype(np.float64)), rtol=1e-5, atol=1e-7)


def check_softmax_wide(v):
    x = pcg(61).standard_normal((300, 768)).astype(np.float32) * 4.0
    np.testing.assert_array_equal(v["x"], x)
    np.testing.assert_allclose(v["y"], softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(v["p"], softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
    assert v["y"].shape == (300, 768)


def check_layernorm(v):
    x = v["x"].astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * v["w"] + v["b"]
    np.testing.assert_allclose(v["y"], want, rtol=1e-4, atol=1e-5)


def check_rmsnorm(v):
    x = v["x"].astype(np.float64)
    want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * v["w"].astype(np.float64)
    assert v["y"].dtype == np.float16
    np.testing.assert_allclose(v["y"].astype(np.float64), want, rtol=1e-2, atol=1e-2)


def check_gemm(v):
    want = v["a"].astype(np.float64) @ v["b"].astype(np.float64)
    np.testing.assert_allclose(v["c"], want, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(v["r"], want, rtol=1e-4, atol=1e-3)


def check_transpose(v):
    np.testing.assert_array_equal(v["y"], v["x"].T)
    np.testing.assert_array_equal(v["z"], v["x"])


def check_row_sum(v):
    np.testing.assert_allclose(v["y"], v["x"].astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)


def check_argmax(v):
    np.testing.assert_array_equal(v["idx"], v["x"].argmax(axis=1))


def check_cumsum(v):
    np.testing.assert_allclose(v["y"], np.cumsum(v["x"].astype(np.float64), axis=1), rtol=1e-5, atol=1e-4)


def check_pipeline(v):
    x = v["x"]
    np.testing.assert_allclose(v["c"], 2 * x + 3 * x, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(v["total"], 3 * x + 3, rtol=1e-6, atol=1e-5)


def check_graph(v):
    assert np.all(v["x"] == 4.0)
    assert np.all(v["y"] == 8.0)
    assert np.all(v["acc"] == 20.0)


def check_histogram(v):
    x = v["x"]
    np.testing.assert_array_equal(v["hist"], np.bincount(x, minlength=64))
    chunks = [np.bincount(x[i:i + 1024], minlength=64) for i in range(0, x.size, 1024)]
    np.testing.assert_array_equal(v["partial"], np.stack(chunks))


def check_attention(v):
    sys.path.insert(0, str(ROOT / "tests" / "std"))
    from attention_ref import attention

    want = attention(v["q"], v["k"], v["v"], 0.125, True)
    np.testing.assert_allclose(v["o"].astype(np.float64), want, rtol=1e-2, atol=4e-3)
    np.testing.assert_allclose(v["expected"], want, rtol=1e-4, atol=1e-4)
    # the cache: the prefix appended, the garbage after it kept
    np.testing.assert_array_equal(v["k_cache"][:, :200], v["k"])
    np.testing.assert_array_equal(v["k_cache"][:, 200:], pcg(5).standard_normal((4, 256, 64)).astype(np.float16)[:, 200:])
    step = attention(v["qd"].reshape(16, 1, 64), v["k_cache"], v["v_cache"], 0.125, False, cache_len=200)
    np.testing.assert_allclose(v["od"].astype(np.float64), step.reshape(4, 4, 64), rtol=1e-2, atol=4e-3)


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}


def test_every_example_has_a_numpy_check():
    names = sorted(p.stem for p in EXAMPLES.glob("*.tile"))
    assert names == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_on_cpu_matches_numpy(name):
    start = time.process_time()
    ex = execute(str(EXAMPLES / f"{name}.tile"), "cpu", out=io.StringIO())
    elapsed = time.process_time() - start
    values = {k: t.numpy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}
    CHECKS[name](values)
    # Generous against a loaded machine; each takes well under 2 s alone.
    assert elapsed < 10, f"{name} took {elapsed:.1f} s of CPU"


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.tile")))
def test_example_under_the_sanitizer(name):
    """`tilec run --sanitize`: every example runs clean under the race and
    bounds oracle (no race, no unsafe write outside a tensor, no warning) and
    computes the same values."""
    start = time.process_time()
    ex = execute(str(EXAMPLES / f"{name}.tile"), "cpu", out=io.StringIO(), sanitize=True)
    elapsed = time.process_time() - start
    assert not ex.warnings, [d.message for d in ex.warnings]
    assert ex.device.sanitizer is not None
    values = {k: t.numpy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}
    if name in CHECKS:
        CHECKS[name](values)
    assert elapsed < 30, f"{name} took {elapsed:.1f} s of CPU under the sanitizer"


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_on_gpu_matches_numpy_and_the_interpreter(name):
    gpu = execute(str(EXAMPLES / f"{name}.tile"), "gpu", out=io.StringIO())
    assert gpu.device.kind == "gpu"
    values = {k: t.numpy() for k, t in gpu.main_locals.items() if hasattr(t, "numpy")}
    CHECKS[name](values)
    cpu = execute(str(EXAMPLES / f"{name}.tile"), "cpu", out=io.StringIO())
    for k, t in cpu.main_locals.items():
        if hasattr(t, "numpy") and t.dtype.is_float:
            np.testing.assert_allclose(values[k], t.numpy(), rtol=1e-3, atol=1e-3, err_msg=k)
        elif hasattr(t, "numpy"):
            np.testing.assert_array_equal(values[k], t.numpy(), err_msg=k)


def test_tilec_run_add_prints_its_sum():
    proc = subprocess.run([sys.executable, "-m", "tilelang", "--color", "never", "run", "--device", "cpu",
                           str(EXAMPLES / "add.tile")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    x = pcg(0).standard_normal(1 << 20).astype(np.float32)
    y = pcg(1).standard_normal(1 << 20).astype(np.float32)
    assert abs(float(proc.stdout) - float(np.sum(x + y, dtype=np.float64))) < 1e-2
