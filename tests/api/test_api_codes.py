"""Every error the Python API raises carries a code, a message and a help line.

The API's own failures (a Python value that is not an array, a graph used out
of order, ...) have the E08xx codes (`diagnostics/codes/api.py`, whose
explanations carry Python examples: `tests/unit/test_registry.py` runs them);
the rest carry the language's code for the same mistake. This file keeps it
so: `test_every_raise_site_passes_a_code_and_a_help` reads the API's source
and fails on any construction of an API error without `code=` and `help=`,
any helper whose `code`/`help` may be left out, and any other exception
raised that is not listed below with its reason. A new uncoded error fails
here, not in a user's hands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.api import errors, module
from tilelang.diagnostics.codes import REGISTRY

API = Path(tilelang.__file__).parent / "api"

# Exceptions of other kinds raised in tilelang/api, each with why it is not an APIError.
NOT_API_ERRORS = {
    ("module.py", "AttributeError(name)"): "a dunder lookup (`__len__`, pickling): Python's protocol",
    ("operation.py", "ValueError(\"the kernel's arguments are not the plan's arrays and numbers\")"):
        "internal: caught a few lines below, the launch takes the checked path",
}
# arrays.py's signals to its callers, which word them as E0800 (`NotAnArray`) and
# E0801 (`Unsupported`, with its reason and fix) for the parameter they concern.
SIGNALS = {"NotAnArray", "Unsupported"}
# API errors built without `code=`/`help=` in the source, each with where they come from.
CODED_ELSEWHERE = {
    ("__init__.py", "CompileError(report, diags)"): "the code of the program's first error",
    ("errors.py", "cls(str(err))"): "a TileError without diagnostics (an internal error's)",
}


def _api_error_classes() -> set[str]:
    return {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.APIError)}


def _final_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def test_every_raise_site_passes_a_code_and_a_help() -> None:
    classes = _api_error_classes()
    assert {"CallError", "BorrowError", "ExecutionError", "DeviceError", "CompileError",
            "NameLookupError"} <= classes
    bad: list[str] = []
    seen = 0
    for path in sorted(API.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        raised = {id(n.exc) for n in ast.walk(tree) if isinstance(n, ast.Raise)}
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                name = _final_name(node.func)
                # `cls(..)`: a classmethod's or a helper's class argument, checked
                # where it is raised (and in errors.py, whose classmethods build them)
                if name not in classes and not (
                        name == "cls" and (id(node) in raised or path.name == "errors.py")):
                    continue
                text = ast.unparse(node)
                if (path.name, text) in CODED_ELSEWHERE:
                    continue
                seen += 1
                kws = {k.arg: k.value for k in node.keywords}
                for kw in ("code", "help"):
                    v = kws.get(kw)
                    if v is None or (isinstance(v, ast.Constant) and v.value is None):
                        bad.append(f"{where}: `{text[:80]}` has no `{kw}=`")
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = _final_name(node.exc.func)
                if name in classes or name in SIGNALS or name == "cls" or name.startswith("from_"):
                    continue
                if (path.name, ast.unparse(node.exc)) not in NOT_API_ERRORS:
                    bad.append(f"{where}: raises `{name}`, not an API error with a code")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and path.name != "errors.py":
                a = node.args
                params = [*a.posonlyargs, *a.args]
                defaults = dict(zip([p.arg for p in params[len(params) - len(a.defaults):]], a.defaults, strict=True))
                defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
                for kw in ("code", "help"):
                    d = defaults.get(kw)
                    if isinstance(d, ast.Constant) and d.value is None:
                        bad.append(f"{where}: `{node.name}` lets its caller leave `{kw}` out")
    assert seen >= 50, f"the scan found only {seen} API errors built: is it broken?"
    assert not bad, "\n".join(bad)


def test_the_allowlists_name_real_sites() -> None:
    """An entry above that no longer matches the source is stale: remove it."""
    for file, text in [*NOT_API_ERRORS, *CODED_ELSEWHERE]:
        tree = ast.parse((API / file).read_text(encoding="utf-8"))
        assert any(isinstance(n, ast.Call) and ast.unparse(n) == text for n in ast.walk(tree)), (file, text)


def test_every_api_code_is_raised_somewhere() -> None:
    from tilelang.diagnostics.codes import api as acodes

    names = {n for n, v in vars(acodes).items() if isinstance(v, str) and v in REGISTRY}
    assert len(names) >= 16
    text = "\n".join(p.read_text(encoding="utf-8") for p in API.glob("*.py"))
    unused = sorted(n for n in names if f"acodes.{n}" not in text)
    assert not unused, f"E08xx codes no API error carries: {unused}"


# ---------------------------------------------------------------- the GPU's codes, on a fake GPU
SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}

fn total(x: &Tensor<f32, [?]>) -> f32 {
    x.sum()
}
"""


@pytest.fixture
def fake(monkeypatch):  # type: ignore[no-untyped-def]
    from test_cuda_plumbing import FakeCudaDevice

    dev = FakeCudaDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    yield dev
    assert tilelang.in_flight() == 0


def _raises(code: str, fn, *args):  # type: ignore[no-untyped-def]
    with pytest.raises(tilelang.APIError) as e:
        fn(*args)
    text = str(e.value)
    assert e.value.code == code and text.startswith(f"error[{code}]: ") and "\n  help: " in text, text
    return e.value


def test_mixed_devices_and_host_arrays_on_a_fake_gpu(fake) -> None:  # type: ignore[no-untyped-def]
    from test_cuda_plumbing import FakeCudaArray

    mod = tilelang.compile(SOURCE)
    x, z = np.ones(64, np.float32), np.zeros(64, np.float32)
    err = _raises("E0804", mod.add, tilelang.partition(FakeCudaArray(z), [64]), x, FakeCudaArray(x))
    assert "must be on one device" in err.message
    err = _raises("E0805", mod.total, FakeCudaArray(x))
    assert "host functions take host arrays" in err.message
    with tilelang.graph() as g:  # one graph, one device
        mod.add(tilelang.partition(FakeCudaArray(z), [64]), FakeCudaArray(x), FakeCudaArray(x)).sync()
        err = _raises("E0804", mod.add(tilelang.partition(z, [64]), x, x).sync)
    assert "one graph run on one device" in err.message and len(g.operations) == 1


def test_the_remaining_call_errors_carry_their_codes() -> None:
    mod = tilelang.compile(SOURCE)
    x, z = np.ones(64, np.float32), np.zeros(64, np.float32)
    P = tilelang.partition
    _raises("E0800", mod.add, "z", x, x)
    _raises("E0203", mod.add, P(z, [64]), P(x, [64]), x)
    _raises("E0808", mod.add[{"B": 1.5}], P(z, [64]), x, x)
    _raises("E0808", mod.add["f32"], P(z, [64]), x, x)
    _raises("E0111", lambda: mod.add[64, 32])
    with tilelang.graph() as g:
        mod.add(P(z, [64]), x, x).sync()
        _raises("E0809", tilelang.graph().__enter__)
        _raises("E0809", g.replay)
    _raises("E0809", g.__enter__)
    _raises("E0809", g.replay, 0)
    with pytest.raises(tilelang.DeviceError) as e:
        tilelang.compile("fn main() {}", device="tpu")
    assert e.value.code == "E0806" and e.value.help
    _raises("E0811", tilelang.torch_op, mod.add)  # no tile for `z`, checked before PyTorch is imported
    err = _raises("E0813", tilelang.compile, b"fn main() {}")
    assert "source.decode()" in (err.help or "")
    assert isinstance(err, TypeError)  # as before: a caller catching TypeError still does


def test_repr_of_an_api_error_shows_its_code_and_message() -> None:
    # repr() (a traceback's last line under some runners, a logged exception,
    # `pytest.raises`' report) showed `CallError('tile error')`: Exception's
    # args held a placeholder, not the message
    mod = tilelang.compile(SOURCE)
    x = np.ones(64, np.float32)
    err = _raises("E0800", mod.add, "z", x, x)
    r = repr(err)
    assert r.startswith("CallError(") and "tile error" not in r, r
    assert err.message in r and "E0800" in r, r
    assert err.args == (err.message,)
    bad = _raises("E0813", tilelang.compile, b"fn main() {}")
    assert "tile error" not in repr(bad) and "E0813" in repr(bad), repr(bad)
    with pytest.raises(tilelang.CompileError) as e:
        tilelang.compile("fn main() { let x: i32 = 1.5; }")
    assert "tile error" not in repr(e.value) and e.value.code in repr(e.value), repr(e.value)
