"""Host builtins on tensors whose element type and shape only the run knows
(`load_npy`: `Tensor<?, ?>`, so the type checker cannot refuse them): each
misuse must stop with a located error and a help line, never an internal
error. Found by the hrev review (2026-12-04): `maximum`/`where`/`fma`/`pow`
with shapes that do not broadcast, `!` of floats, `-` of `bool`, `pow` of
integers, `&` of floats, a method of the scalar a full reduction gives, and a
compound assignment that would change the variable's shape were NumPy
exceptions reported as internal compiler errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.clirunner import invoke

ARRAYS = {
    "f32x32": np.ones((3, 2), np.float32),
    "f32x23": np.ones((2, 3), np.float32),
    "i32x23": np.arange(6, dtype=np.int32).reshape(2, 3),
    "bool2": np.ones((2,), np.bool_),
    "f32_2": np.ones((2,), np.float32),
}
CASES = [
    ("f32x23", "maximum(m, x)"),
    ("f32x23", "minimum(x, m)"),
    ("i32x23", "where(m > 0, x, x)"),
    ("f32_2", "where(m, x, x)"),
    ("f32x32", "where(m, m, m)"),
    ("f32x23", "fma(m, x, x)"),
    ("f32x23", "pow(x, m)"),
    ("i32x23", "m.pow(2.0)"),
    ("f32x32", "!m"),
    ("bool2", "-m"),
    ("f32x32", "m & m"),
    ("f32x32", "m.sum(0).sum(0).sum(0)"),
    ("i32x23", "maximum(m, m as f32)"),
]


@pytest.mark.parametrize(("array", "expr"), CASES, ids=[f"{a}-{e}" for a, e in CASES])
def test_located_error_not_internal(tmp_path: Path, array: str, expr: str) -> None:
    npy = tmp_path / f"{array}.npy"
    np.save(npy, ARRAYS[array])
    src = tmp_path / "p.tile"
    src.write_text("#[allow(unused_variables)]\nfn main() {\n"
                   f"    let m = load_npy(\"{npy}\");\n    let x = ones::<f32>([2]);\n    print({expr});\n}}\n",
                   encoding="utf-8")
    r = invoke("run", "--device", "cpu", "--error-format", "json", str(src))
    assert "Traceback" not in r.output and "internal compiler error" not in r.output, r.output
    assert r.exit_code not in (0, 101), r.output
    errors = [d for d in (json.loads(x) for x in r.stderr.splitlines() if x.startswith("{"))
              if d["severity"] == "error"]
    assert errors, r.output
    primary = [lb for lb in errors[0]["labels"] if lb["primary"]]
    assert primary and primary[0]["line"] == 5, errors[0]
    assert errors[0]["help"], errors[0]


def test_compound_assignment_keeps_the_shape(tmp_path: Path) -> None:
    npy = tmp_path / "m.npy"
    np.save(npy, ARRAYS["f32x32"])
    src = tmp_path / "p.tile"
    src.write_text(f"fn main() {{\n    let m = load_npy(\"{npy}\");\n    let mut d = zeros::<f32>([2]);\n"
                   "    d += m;\n    print(d);\n}\n", encoding="utf-8")
    r = invoke("run", "--device", "cpu", "--error-format", "json", str(src))
    assert "internal compiler error" not in r.output, r.output
    d = json.loads(next(x for x in r.stderr.splitlines() if x.startswith("{")))
    assert d["code"] == "E0714" and d["help"], d
