"""`tilelang.run.run_file`: what `tilec run` prints and its exit statuses."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tilelang import run

ROOT = Path(__file__).resolve().parents[2]


def run_text(tmp_path: Path, text: str, device: str = "cpu") -> tuple[int, str, str]:
    p = tmp_path / "prog.tile"
    p.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    status = run.run_file(p, device=device, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_success_is_0_and_prints_stdout(tmp_path):
    status, out, err = run_text(tmp_path, "fn main() {\n    print(1 + 2);\n}\n")
    assert (status, out, err) == (0, "3\n", "")


def test_check_errors_are_1_and_nothing_runs(tmp_path):
    status, out, err = run_text(tmp_path, 'fn main() {\n    print("ran");\n    let x: i32 = 1.5;\n}\n')
    assert status == 1 and out == "" and "error[E" in err


def test_runtime_error_is_3_after_the_output_so_far(tmp_path):
    status, out, err = run_text(tmp_path, 'fn main() {\n    print("before");\n    assert(1 == 2);\n}\n')
    assert status == 3 and out == "before\n"
    assert "error[E0710]: assertion failed: `1 == 2`" in err and "prog.tile:3:12" in err
    assert "Traceback" not in err


def test_internal_error_is_101_with_a_report_request(tmp_path, monkeypatch):
    from tilelang.runtime import host

    def boom(self, main):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(host.HostEvaluator, "run_main", boom)
    status, _, err = run_text(tmp_path, "fn main() {}\n")
    assert status == 101
    assert "internal compiler error: RuntimeError: simulated bug" in err and "please report" in err
    assert "the full trace is in" in err


def test_missing_file_is_1(tmp_path):
    err = io.StringIO()
    assert run.run_file(tmp_path / "nope.tile", out=io.StringIO(), err=err) == 1
    assert "couldn't read" in err.getvalue()  # one wording with `tilec check` (source.read_error)


def test_gpu_without_a_gpu_is_a_clear_error(tmp_path):
    if run.gpu_available():
        pytest.skip("this machine has a GPU")
    status, out, err = run_text(tmp_path, "fn main() {\n    print(1);\n}\n", device="gpu")
    assert status == 3 and out == ""
    assert err.startswith("error: cannot run on the GPU: ") and "--device cpu" in err


def test_auto_falls_back_to_the_cpu(tmp_path):
    if run.gpu_available():
        pytest.skip("this machine has a GPU")
    status, out, _ = run_text(tmp_path, "fn main() {\n    print(2);\n}\n", device="auto")
    assert (status, out) == (0, "2\n")


def test_execute_returns_mains_tensors():
    ex = run.execute(str(ROOT / "examples" / "saxpy.tile"), "cpu", out=io.StringIO())
    assert ex.device.kind == "cpu"
    assert ex.main_locals["y"].shape == (100_000,)


RUN_PASS = sorted(p for p in (ROOT / "tests" / "run").glob("*.tile")
                  if "//@ run-fail" not in p.read_text())


@pytest.mark.gpu
@pytest.mark.parametrize("path", RUN_PASS, ids=lambda p: p.stem)
def test_run_pass_programs_print_the_same_on_gpu_and_cpu(path):
    outs = []
    for device in ("cpu", "gpu"):
        out, err = io.StringIO(), io.StringIO()
        status = run.run_file(path, device=device, out=out, err=err)
        assert status == 0, err.getvalue()
        outs.append(out.getvalue())
    assert outs[0] == outs[1]


def test_a_device_error_in_a_host_statement_names_the_statement(tmp_path, monkeypatch):
    # E0610 from a device allocation (`zeros` uploads its tensor): the driver's
    # check has no span to give, so the report had no file:line:col; the host
    # statement that met it is where it happened. (A CPU stand-in for
    # cuMemAlloc's CUDA_ERROR_OUT_OF_MEMORY, worded as `cuda_driver` words it.)
    from tilelang.runtime import cpu
    from tilelang.runtime.cuda_driver import cuda_error

    real = cpu.CpuDevice.upload

    def upload(self, host, dtype=None):  # type: ignore[no-untyped-def]
        if host.nbytes > 1 << 16:
            raise cuda_error("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                             help="the GPU's memory is full: use smaller tensors")
        return real(self, host, dtype)

    monkeypatch.setattr(cpu.CpuDevice, "upload", upload)
    status, out, err = run_text(tmp_path, "fn main() {\n    let a = zeros::<f32>([16]);\n"
                                          "    let b = zeros::<f32>([1 << 20]);\n    print(a.sum(), b.sum());\n}\n")
    assert status == 3 and out == "", err
    assert "error[E0610]: CUDA error in cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY" in err, err
    assert "prog.tile:3:5" in err and "help: the GPU's memory is full" in err, err
    assert "Traceback" not in err


def test_load_npy_of_too_many_dimensions_is_an_error_not_a_crash(tmp_path):
    # a 40-dimensional array loaded, then `t + t`: NumPy's own limit (32)
    # raised inside the run, an internal error
    import numpy as np

    np.save(tmp_path / "r40.npy", np.zeros([1] * 40, np.float32))
    np.save(tmp_path / "r16.npy", np.ones([1] * 15 + [2], np.float32))
    status, out, err = run_text(tmp_path, f'fn main() {{\n    let a = load_npy("{tmp_path}/r16.npy");\n'
                                          f'    print((a + a).sum());\n'
                                          f'    let t = load_npy("{tmp_path}/r40.npy");\n    print((t + t).sum());\n}}\n')
    assert status == 3 and out == "4.0\n", (out, err)
    assert "error[E0713]: " in err and "40 dimensions" in err and "prog.tile:4:13" in err, err
    assert "internal compiler error" not in err
