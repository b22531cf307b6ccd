"""`tilec run`: check a program, then run its `main` on the CPU or the GPU.

`run_file(path, device=...)` is what the CLI calls; it prints diagnostics
with the session's renderer settings (`diagnostics/render.py`) and returns
the exit status:

    0    the program ran to the end
    1    the program has errors (type, ownership, syntax): nothing ran
    3    a run-time error: a failed `assert`/`assert_close`, a launch-time
         check (E05xx), a device `assert`, a file that cannot be read (E07xx),
         or a device that cannot be used (`--device gpu` without a GPU: a
         plain `error:` line, since no source line is at fault)
    101  an internal error (a bug in tilec): the message asks for a report
    130  interrupted (Ctrl-C)

`execute(source, device=...)` is the Python API underneath (tests use it): it
returns an `Execution` with the evaluator (`main_locals` holds the tensors
`main` bound) or raises `TileError` / `CheckFailed`.

Engine choice: `cpu` is the NumPy interpreter (`runtime/cpu.py`); `gpu` is
helper E's CUDA device (`runtime/cuda.py`, class `CudaDevice`); `auto` takes
the GPU when `tilelang.runtime.cuda.is_available()` says there is one and its
device class exists, else the CPU.
"""

from __future__ import annotations

import io
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.source import SourceMap

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_RUNTIME = 3
EXIT_ICE = 101
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
EXIT_BROKEN_PIPE = 141  # stdout closed by its reader, as shells report SIGPIPE
HOST_RECURSION_LIMIT = 20_000


class GpuUnavailable(Exception):
    """`--device gpu` on a machine (or a build) without a usable GPU engine."""

    def __init__(self, why: str) -> None:
        super().__init__(f"cannot run on the GPU: {why}")
        self.why = why


class CheckFailed(Exception):
    """The program did not pass the checker; `diagnostics` says why."""

    def __init__(self, diagnostics: list[Diagnostic], sources: SourceMap) -> None:
        super().__init__(f"{len(diagnostics)} diagnostics")
        self.diagnostics = diagnostics
        self.sources = sources


@dataclass(slots=True)
class Execution:
    """One finished run: the sources, the evaluator (its `main_locals`) and
    the device it ran on."""

    sources: SourceMap
    evaluator: Any
    device: Any

    @property
    def main_locals(self) -> dict[str, Any]:
        return dict(self.evaluator.main_locals)


# ---------------------------------------------------------------- devices
def _gpu_missing() -> str | None:
    """Why the GPU engine cannot be used here, or None when it can."""
    try:
        from tilelang.runtime import cuda
    except ImportError:
        return "the CUDA runtime of tilec is not installed"
    if not cuda.is_available():
        return "no CUDA driver or device was found on this machine"
    return None


def gpu_available() -> bool:
    return _gpu_missing() is None


def make_device(choice: str, out: IO[str]) -> Any:
    """The `Device` for `--device choice`; raises `GpuUnavailable` when the
    GPU is asked for and cannot be used."""
    from tilelang.runtime.cpu import CpuDevice

    def device_print(text: str) -> None:
        out.write(text + "\n")

    if choice not in ("cpu", "gpu", "auto"):
        raise ValueError(f"unknown device `{choice}`")
    if choice != "cpu":
        why = _gpu_missing()  # asked once: it initialises the CUDA driver
        if why is None:
            from tilelang.runtime.cuda import CudaDevice

            return CudaDevice(out=device_print)
        if choice == "gpu":
            raise GpuUnavailable(why)
    return CpuDevice(out=device_print)


# ---------------------------------------------------------------- the pipeline
def execute(source: str | os.PathLike[str], device: str = "cpu", *, out: IO[str] | None = None,
            name: str = "<input>") -> Execution:
    """Check `source` (a path, or program text when a `str` with a newline or
    `name` is given) and run its `main`. Raises `CheckFailed` when the checker
    reports errors, `TileError` for a run-time error."""
    out = out if out is not None else sys.stdout
    sources = SourceMap()
    if isinstance(source, str) and ("\n" in source or name != "<input>"):
        sf = sources.add(name, source)
    else:
        sf = sources.add(str(source), Path(source).read_text(encoding="utf-8"))
    return _execute_source(sf, sources, device, out)


def run_file(path: str | os.PathLike[str], device: str = "auto", *,
             out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """`tilec run PATH`: check, run `main`, print diagnostics; the exit status."""
    from tilelang.diagnostics import render

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    sources = SourceMap()
    # Host functions run on Python's stack, several frames per Tile call.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), HOST_RECURSION_LIMIT))
    try:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            err.write(f"error: cannot read `{path}`: {e.strerror or e}\n")
            return EXIT_ERRORS
        sf = sources.add(str(path), text)
        try:
            execution = _execute_source(sf, sources, device, out)
        except CheckFailed as e:
            render.report(e.diagnostics, e.sources, file=err)
            return EXIT_ERRORS
        except TileError as e:
            out.flush()
            render.report(list(e.diagnostics), sources, file=err)
            return EXIT_RUNTIME
        except GpuUnavailable as e:
            err.write(f"error: {e}\n")
            err.write("help: run on the CPU interpreter with `--device cpu` "
                      "(`--device auto` falls back to it)\n")
            return EXIT_RUNTIME
        del execution
        return EXIT_OK
    except KeyboardInterrupt:
        out.flush()
        err.write("error: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`tilec run f.tile | head`): stop quietly, as
        # `cat` does, with the shell's status for SIGPIPE.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ICE, Exception) as e:  # the last line of defence: a bug in tilec
        out.flush()
        err.write(f"error: internal compiler error: {e}\n")
        err.write("note: this is a bug in tilec, not in your program; please report it "
                  "with the program and the trace below\n\n")
        err.write("".join(traceback.format_exception(e)))
        return EXIT_ICE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's flush at exit does not
    raise a second `BrokenPipeError`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _execute_source(sf: Any, sources: SourceMap, device: str, out: IO[str]) -> Execution:
    from tilelang import driver
    from tilelang.runtime.host import HostEvaluator
    from tilelang.runtime.launch import Runtime

    result = driver.compile(sf, until="checked", sources=sources, strict=True)
    if not result.ok:
        raise CheckFailed(list(result.diagnostics), result.sources)
    checked = result.output
    root = result.context.outputs["ast"]
    dev = make_device(device, out)
    runtime = Runtime(dev, checked.program)
    ev = HostEvaluator(checked.program, root, result.sources, runtime, out=out,
                       ownership=checked.ownership)
    main = ev.find_main()
    if main is None:
        raise TileError(Diagnostic.error(rcodes.NO_MAIN, "this program has no `fn main()` to run")
                        .primary(root.span.at_end(), "`main` is missing")
                        .with_help("add `fn main() { ... }`: `tilec run` starts there"))
    try:
        ev.run_main(main)
    finally:
        out.flush()
    return Execution(result.sources, ev, dev)


def run_source(text: str, device: str = "cpu", name: str = "<input>") -> tuple[int, str, str]:
    """Run program text as `tilec run` would; (status, stdout, stderr)."""
    from tilelang.diagnostics import render

    out, err = io.StringIO(), io.StringIO()
    sources = SourceMap()
    sf = sources.add(name, text)
    try:
        _execute_source(sf, sources, device, out)
        status = EXIT_OK
    except CheckFailed as e:
        err.write(render.render(e.diagnostics, e.sources, "short"))
        status = EXIT_ERRORS
    except TileError as e:
        err.write(render.render(list(e.diagnostics), sources, "short"))
        status = EXIT_RUNTIME
    return status, out.getvalue(), err.getvalue()
