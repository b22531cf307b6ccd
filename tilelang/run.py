"""`tilec run`: check a program, then run its `main` on the CPU or the GPU.

`run_file(path, device=...)` is what the CLI calls; it prints diagnostics
with the session's renderer settings (`diagnostics/render.py`) and returns
the exit status:

    0    the program ran to the end
    1    the program has errors (type, ownership, syntax), or its file
         cannot be read: nothing ran
    3    a run-time error: a failed `assert`/`assert_close`, a launch-time
         check (E05xx), a device `assert`, a file that cannot be read (E07xx),
         or a device that cannot be used (`--device gpu` without a GPU: a
         plain `error:` line, since no source line is at fault)
    101  an internal error (a bug in tilec): the message asks for a report
    130  interrupted (Ctrl-C)

`execute(source, device=...)` is the Python API underneath (tests use it): it
returns an `Execution` with the evaluator (`main_locals` holds the tensors
`main` bound) or raises `TileError` / `CheckFailed`.

Sanitizer: `run_file(..., sanitize=True)` (`tilec run --sanitize`) and
`execute(..., sanitize=True)` run every launch under the dynamic race and
bounds oracle (`tilelang.interp.sanitize`) on the CPU interpreter; the
environment variable `TILE_SANITIZE=1` turns it on for both. Its errors
(E0730-E0733) stop the run like any run-time error; its warnings (E0734) are
printed after the run (`Execution.warnings`). `execute(..., ownership=False)`
skips the ownership checker (the types are still checked): the property test
uses it to run racy programs under the sanitizer, the oracle the checker is
judged against.

Engine choice: `cpu` is the NumPy interpreter (`runtime/cpu.py`); `gpu` is
helper E's CUDA device (`runtime/cuda.py`, class `CudaDevice`); `auto` takes
the GPU when `tilelang.runtime.cuda.is_available()` says there is one and its
device class exists, else the CPU.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.limits import RECURSION_LIMIT, ensure_recursion_budget
from tilelang.source import SourceMap, read_error, read_source

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_RUNTIME = 3
EXIT_ICE = 101
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
EXIT_BROKEN_PIPE = 141  # stdout closed by its reader, as shells report SIGPIPE
# Host functions run on Python's stack, several frames per Tile call; one
# process-wide budget (`tilelang.limits`) serves them and every stage.
HOST_RECURSION_LIMIT = RECURSION_LIMIT


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
    """One finished run: the sources, the evaluator (its `main_locals`), the
    device it ran on and the sanitizer's warnings (empty without it)."""

    sources: SourceMap
    evaluator: Any
    device: Any
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def main_locals(self) -> dict[str, Any]:
        return dict(self.evaluator.main_locals)


# ---------------------------------------------------------------- devices
def _gpu_missing() -> str | None:
    """Why the GPU engine cannot be used here, or None when it can (`cuda.why_unavailable`'s words)."""
    try:
        from tilelang.runtime import cuda
    except ImportError:
        return "the CUDA runtime of tilec is not installed"
    return cuda.why_unavailable()


def gpu_available() -> bool:
    return _gpu_missing() is None


def make_device(choice: str, out: IO[str]) -> Any:
    """The `Device` for `--device choice`; raises `GpuUnavailable` when the
    GPU is asked for and cannot be used (`fell_back` says when `auto` fell
    back to the CPU)."""
    from tilelang.runtime.cpu import CpuDevice

    def device_print(text: str) -> None:
        out.write(text + "\n")

    if choice not in ("cpu", "gpu", "auto"):
        raise ValueError(f"unknown device `{choice}`")
    if choice != "cpu":
        why = _gpu_missing()  # asked once: it initialises the CUDA driver
        if why is None:
            from tilelang.runtime.cuda import CudaDevice

            try:
                return CudaDevice(out=device_print)
            except TileError as e:  # a GPU that is there but cannot be opened (busy, exclusive mode, no memory)
                from tilelang.env_switch import SwitchError

                if choice == "gpu" or isinstance(e, SwitchError):  # (a switch set wrong: E0604, not "the GPU is busy")
                    raise
                cpu = CpuDevice(out=device_print)
                cpu.fallback_reason = f"the GPU could not be opened ({e.diagnostics[0].message})"  # (`fell_back`)
                return cpu
        if choice == "gpu":
            raise GpuUnavailable(why)
    return CpuDevice(out=device_print)


def fell_back(choice: str, dev: Any, err: IO[str]) -> None:
    """`--device auto` on the CPU: say so, once a run, on `err` where an NVIDIA driver is installed but the GPU
    cannot be used (a GPU the user may expect); nothing on a machine without a driver (the CPU is what `auto`
    means there) or where the GPU was taken."""
    if choice != "auto" or getattr(dev, "kind", "") != "cpu":
        return
    why = getattr(dev, "fallback_reason", None) or _gpu_missing()
    if not why or why.startswith(_NO_DRIVER):
        return
    from tilelang.diagnostics import render

    render.plain_note(f"running on the CPU interpreter: {why}",
                      "`--device cpu` says the same without this note; `--device gpu` makes it an error", file=err)


_NO_DRIVER = ("cuda-python is not installed", "no NVIDIA driver is installed",
              "the CUDA runtime of tilec is not installed")


# ---------------------------------------------------------------- the pipeline
def sanitize_requested(flag: bool | None = None) -> bool:
    """`flag` when given, else the environment's `TILE_SANITIZE` (`1`, `true`, `yes`, `on`; `0`, `false`, `no`,
    `off` or unset: off; anything else is E0604, `SwitchError`: `TILE_SANITIZE=2` ran unsanitized)."""
    if flag is not None:
        return flag
    raw = os.environ.get("TILE_SANITIZE", "")
    want = raw.strip().lower()
    if want not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        from tilelang.env_switch import SwitchError

        raise SwitchError("TILE_SANITIZE", raw, "1 (on) or 0 (off)")
    return want in ("1", "true", "yes", "on")


def execute(source: str | os.PathLike[str], device: str = "cpu", *, out: IO[str] | None = None,
            name: str = "<input>", sanitize: bool | None = None,
            ownership: bool = True, deny_warnings: bool = False) -> Execution:
    """Check `source` (a path, or program text when a `str` with a newline or
    `name` is given) and run its `main`. Raises `CheckFailed` when the checker
    reports errors, `TileError` for a run-time error. `sanitize`: run under
    the sanitizer (default: `TILE_SANITIZE`); `ownership=False` skips the
    ownership checker (for the sanitizer as an oracle)."""
    out = out if out is not None else sys.stdout
    sources = SourceMap()
    if isinstance(source, str) and ("\n" in source or name != "<input>"):
        sf = sources.add(name, source)
    else:
        sf = sources.add(str(source), read_source(Path(source)))
    return _execute_source(sf, sources, device, out, sanitize=sanitize_requested(sanitize),
                           ownership=ownership, deny_warnings=deny_warnings)


def _read_stdin() -> str:
    """`tilec run -`: the program piped in (as `tilec check -` reads it)."""
    from tilelang.source import MAX_SOURCE_BYTES, decode_source

    raw = getattr(sys.stdin, "buffer", None)
    return decode_source(raw.read(MAX_SOURCE_BYTES + 1), "<stdin>") if raw is not None else sys.stdin.read()


def run_file(path: str | os.PathLike[str], device: str = "auto", *,
             out: IO[str] | None = None, err: IO[str] | None = None,
             sanitize: bool | None = None, deny_warnings: bool = False) -> int:
    """`tilec run PATH`: check, run `main`, print diagnostics (warnings too,
    before the run); the exit status. `sanitize` (default: `TILE_SANITIZE`):
    under the sanitizer, on the CPU."""
    from tilelang.diagnostics import render

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        sanitize = sanitize_requested(sanitize)
    except TileError as e:  # `TILE_SANITIZE` set to a value it does not take (E0604)
        render.report(e.diagnostics, SourceMap(), file=err)
        return EXIT_ERRORS
    sources = SourceMap()
    ensure_recursion_budget()
    try:
        try:
            text = _read_stdin() if str(path) == "-" else read_source(Path(path))
        except OSError as e:
            render.plain_error(read_error(path, e), file=err)
            return EXIT_ERRORS
        sf = sources.add("<stdin>" if str(path) == "-" else str(path), text)
        warnings: list[Diagnostic] = []

        def warn(diags: list[Diagnostic]) -> None:
            render.report(diags, sources, file=err)

        try:
            execution = _execute_source(sf, sources, device, out, sanitize=sanitize,
                                        warnings=warnings, deny_warnings=deny_warnings,
                                        on_warnings=warn, err=err)
        except CheckFailed as e:
            render.report(e.diagnostics, e.sources, file=err)
            return EXIT_ERRORS
        except TileError as e:
            out.flush()
            render.report([*warnings, *e.diagnostics], sources, file=err)
            return EXIT_RUNTIME
        except SanitizerNeedsCpu as e:
            render.plain_error(str(e), ["drop `--device gpu`: the sanitizer runs kernels on the CPU interpreter"],
                               file=err)
            return EXIT_RUNTIME
        except GpuUnavailable as e:
            render.plain_error(str(e), ["run on the CPU interpreter with `--device cpu` "
                                        "(`--device auto` falls back to it)"], file=err)
            return EXIT_RUNTIME
        if warnings:
            out.flush()
            render.report(warnings, sources, file=err)
        del execution
        return EXIT_OK
    except KeyboardInterrupt:
        out.flush()
        render.plain_error("interrupted", file=err)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`tilec run f.tile | head`): stop quietly, as
        # `cat` does, with the shell's status for SIGPIPE.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ICE, Exception) as e:  # the last line of defence: a bug in tilec
        from tilelang.diagnostics.ice import write_report

        try:
            out.flush()
        except (OSError, ValueError):
            _silence_stdout()
        write_report(e, err, context=" with the program and the trace file")
        return EXIT_ICE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's flush at exit does not
    raise a second `BrokenPipeError`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class SanitizerNeedsCpu(Exception):
    """`--sanitize` with `--device gpu`: the sanitizer is the CPU interpreter."""

    def __init__(self) -> None:
        super().__init__("the sanitizer cannot run on the GPU")


def _check(sf: Any, sources: SourceMap, ownership: bool,
           deny_warnings: bool = False) -> tuple[Any, Any, list[Diagnostic]]:
    """(the `Checked` output, the root AST, the warnings) of `tilec check`, or
    of the type checker alone (no warnings) when `ownership` is False."""
    from tilelang import driver

    if ownership:
        options = driver.Options(deny_warnings=deny_warnings)
        result = driver.compile(sf, until="checked", sources=sources, options=options)
        if not result.ok:
            raise CheckFailed(list(result.diagnostics), result.sources)
        return result.output, result.context.outputs["ast"], list(result.diagnostics)
    from tilelang.diagnostics.model import DiagnosticSink
    from tilelang.sema import check_program

    parsed = driver.compile(sf, until="ast", sources=sources)
    if not parsed.ok:
        raise CheckFailed(list(parsed.diagnostics), parsed.sources)
    sink = DiagnosticSink()
    program = check_program(parsed.output, sources, sink)
    if sink.has_errors:
        raise CheckFailed(list(sink.diagnostics), sources)
    return driver.Checked(program, _unsafe_facts(program)), parsed.output, []


def _unsafe_facts(program: Any) -> Any:
    """For a run without the ownership checker: only which `&` parameters
    each kernel's `unsafe` code writes, so that the run-time defence
    (`runtime/inflight.py`) still counts those arguments as written."""
    from tilelang.diagnostics.model import DiagnosticSink
    from tilelang.ownership.env import ProgramView
    from tilelang.ownership.facts import OwnershipFacts
    from tilelang.ownership.kernel import check_kernels

    facts = OwnershipFacts()
    facts.unsafe_writes.update(check_kernels(ProgramView(program), DiagnosticSink(), []))
    return facts


def _lower_unchecked(program: Any, kernel: str, inst: dict[str, Any], facts: dict[str, Any]) -> Any:
    """The lowering for a program run without the ownership checker: its
    defence-in-depth refusals off, so the sanitizer sees what the kernel does."""
    from tilelang.ir.lower import lower_kernel

    return lower_kernel(program, kernel, inst, facts, defend=False)


def _execute_source(sf: Any, sources: SourceMap, device: str, out: IO[str], *,
                    sanitize: bool = False, ownership: bool = True,
                    warnings: list[Diagnostic] | None = None, deny_warnings: bool = False,
                    on_warnings: Callable[[list[Diagnostic]], None] | None = None,
                    err: IO[str] | None = None) -> Execution:
    from tilelang.runtime import tensor as tensor_mod
    from tilelang.runtime.host import HostEvaluator
    from tilelang.runtime.launch import Runtime

    checked, root, lints = _check(sf, sources, ownership, deny_warnings)
    if lints and on_warnings is not None:
        on_warnings(lints)
    san = None
    if sanitize:
        if device == "gpu":
            raise SanitizerNeedsCpu()
        from tilelang.interp.sanitize import Sanitizer
        from tilelang.runtime.cpu import CpuDevice

        san = Sanitizer()
        if warnings is not None:
            san.warnings = warnings
        dev = CpuDevice(out=lambda text: out.write(text + "\n"), sanitizer=san)
    else:
        dev = make_device(device, out)
        if err is not None:
            fell_back(device, dev, err)
    runtime = Runtime(dev, checked.program)
    if not ownership:
        runtime.lower = _lower_unchecked
    if san is not None:
        runtime.inflight.strict = False  # the sanitizer decides element by element
        runtime.inflight.sanitizer = san
    ev = HostEvaluator(checked.program, root, sources, runtime, out=out,
                       ownership=checked.ownership)
    main = ev.find_main()
    if main is None:
        raise TileError(_no_main(root))
    saved_hook = tensor_mod.HOST_ACCESS
    if san is not None:
        tensor_mod.HOST_ACCESS = san.host_access
    try:
        ev.run_main(main)
    finally:
        tensor_mod.HOST_ACCESS = saved_hook
        out.flush()
    return Execution(sources, ev, dev, list(san.warnings) if san is not None else [])


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


def _no_main(root: Any) -> Diagnostic:
    """E0717, at a function that looks meant as `main` (`Main`, `main_`, `mian`, a kernel named `main`) when
    there is one: its name is what to fix, not a new function."""
    import difflib

    from tilelang.syntax import ast

    fns = [i for i in root.items if isinstance(i, ast.FnDecl)]
    near = next((f for f in fns if f.name.name.strip("_").lower() == "main"), None) or next(
        (f for f in fns if difflib.get_close_matches(f.name.name, ["main"], n=1, cutoff=0.75)), None)
    d = Diagnostic.error(rcodes.NO_MAIN, "this program has no `fn main()` to run")
    if near is None:
        return d.primary(root.span.at_end(), "`main` is missing").with_help(
            "add `fn main() { ... }`: `tilec run` starts there")
    name = near.name.name
    if near.is_kernel:
        return d.primary(near.name.span, "a kernel, not the host function `tilec run` starts at").with_help(
            f"`main` is a host function: rename the kernel (`kernel fn {name}_kernel`) and launch it from a "
            "`fn main() { ... }`")
    return d.primary(near.name.span, f"`{name}` is not `main`").with_help(
        f"rename it `fn main()`: `tilec run` starts at the function named exactly `main`"
        + (", which takes no parameters" if near.params else ""))
