"""`tilec`, the command-line front end: argument plumbing over `tilelang.driver`.

Commands: check, emit, run, explain, repl, lsp, cache. Global options:
`--error-format human|short|json` and `--color auto|always|never` (also
`NO_COLOR`).

Exit statuses: 0 success; 1 the program has errors (diagnostics printed);
2 bad command-line usage (click's default); 3 a run-time error in `tilec run`;
101 an internal compiler error (a bug in tilec: the message asks for a report
and shows the traceback).

Invariants: no logic beyond plumbing lives here; heavy modules (NumPy,
llvmlite, cuda-python, pygls, prompt_toolkit) are imported inside the command
that needs them, so `tilec --help` and `tilec check` start fast; a user error
never shows a Python traceback.
"""

from __future__ import annotations

import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from tilelang import __version__

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3
EXIT_ICE = 101

ISSUES_NOTE = "note: this is a bug in tilec; please report it with the program that triggered it"


class ErrorFormat(StrEnum):
    human = "human"
    short = "short"
    json = "json"


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class EmitStage(StrEnum):
    ast = "ast"
    ir = "ir"
    gpu = "gpu"
    llvm = "llvm"
    ptx = "ptx"


class DeviceChoice(StrEnum):
    cpu = "cpu"
    gpu = "gpu"
    auto = "auto"


app = typer.Typer(
    name="tilec",
    help="The Tile compiler: check, run and compile `.tile` programs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
cache_app = typer.Typer(help="Inspect or clear the compiled-kernel cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tilec {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    error_format: Annotated[
        ErrorFormat, typer.Option("--error-format", help="How diagnostics are printed.")
    ] = ErrorFormat.human,
    color: Annotated[
        Color, typer.Option("--color", help="Colour in diagnostics (auto: on a terminal).")
    ] = Color.auto,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    from tilelang.diagnostics import render

    render.configure(format=error_format.value, color=color.value)


# Each command repeats the global diagnostic options, so that they work after
# the subcommand too (`tilec check FILE --error-format json`), as users write
# them; given there, they override the ones before the subcommand.
LocalErrorFormat = Annotated[
    ErrorFormat | None,
    typer.Option("--error-format", help="How diagnostics are printed (also before the command)."),
]
LocalColor = Annotated[
    Color | None,
    typer.Option("--color", help="Colour in diagnostics (also before the command)."),
]


def _local_options(error_format: ErrorFormat | None, color: Color | None) -> None:
    from tilelang.diagnostics import render

    render.configure(
        format=None if error_format is None else error_format.value,
        color=None if color is None else color.value,
    )


# ---------------------------------------------------------------- helpers
def _fail(message: str, status: int = EXIT_ERRORS) -> NoReturn:
    """A one-line `error: ...` (not tied to a source location) and exit."""
    _print_plain_error(message)
    raise typer.Exit(status)


def _print_plain_error(message: str) -> None:
    from tilelang.diagnostics import render

    s = render.settings()
    if s.format == "json":
        import json

        typer.echo(
            json.dumps(
                {
                    "code": "",
                    "message": message,
                    "severity": "error",
                    "labels": [],
                    "notes": [],
                    "help": [],
                }
            ),
            err=True,
        )
        return
    if render.use_color(s.color, sys.stderr):
        typer.echo(
            typer.style("error", fg="red", bold=True) + typer.style(": " + message, bold=True),
            err=True,
        )
    else:
        typer.echo(f"error: {message}", err=True)


def _note(message: str) -> None:
    from tilelang.diagnostics import render

    if render.settings().format == "human":
        typer.echo(f"note: {message}", err=True)


def _read_error(path: Path, err: OSError) -> str:
    reason = err.strerror or type(err).__name__
    return f"couldn't read `{path}`: {reason}"


# ---------------------------------------------------------------- commands
@app.command()
def check(
    files: Annotated[
        list[Path],
        typer.Argument(help="The `.tile` files to check (`-`: stdin).", metavar="FILE..."),
    ],
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """Parse and check programs (names, types, ownership); print diagnostics only."""
    _local_options(error_format, color)
    from tilelang import driver
    from tilelang.diagnostics import render
    from tilelang.source import SourceMap

    sources = SourceMap()
    diagnostics = []
    missing: list[str] = []
    unavailable = None
    for path in files:
        try:
            if str(path) == "-":  # editors pipe an unsaved buffer
                from tilelang.source import MAX_SOURCE_BYTES, decode_source

                raw = getattr(sys.stdin, "buffer", None)
                text = (decode_source(raw.read(MAX_SOURCE_BYTES + 1), "<stdin>") if raw is not None
                        else sys.stdin.read())
                result = driver.check(text, name="<stdin>", sources=sources)
            else:
                result = driver.check(path, sources=sources)
        except OSError as e:
            _fail(_read_error(path, e))
        diagnostics.extend(result.diagnostics)
        if result.unavailable is not None and unavailable is None:
            unavailable = result.unavailable
        missing.extend(m for _, m in result.context.missing if m not in missing)
    render.report(diagnostics, sources)
    if unavailable is not None:
        if unavailable.stage == "ast":
            _fail(f"{unavailable}: nothing could be checked")
        _note(f"{unavailable}: only the earlier stages were checked")
    for module in missing:
        _note(f"`{module}` is not available yet: that part of the check was skipped")
    if any(d.severity.value == "error" for d in diagnostics):
        raise typer.Exit(EXIT_ERRORS)


@app.command()
def emit(
    file: Annotated[Path, typer.Argument(help="The `.tile` file to compile.")],
    stage: Annotated[EmitStage, typer.Option("--stage", "-s", help="What to print.")],
    kernel: Annotated[str | None, typer.Option("--kernel", "-k", help="Only this kernel.")] = None,
    arch: Annotated[
        str, typer.Option("--arch", help="GPU architecture for gpu/llvm/ptx, e.g. sm_80, sm_90a.")
    ] = "sm_80",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """Print an intermediate form of a program: its AST, Tile IR, GPU IR, LLVM IR or PTX."""
    _local_options(error_format, color)
    import re

    from tilelang import driver
    from tilelang.diagnostics import render

    if not re.fullmatch(r"sm_\d+a?", arch):
        raise typer.BadParameter(
            f"`{arch}` is not an architecture like `sm_80`", param_hint="--arch"
        )
    options = driver.Options(arch=arch, kernel=kernel)
    try:
        result = driver.compile(file, stage.value, options=options, strict=True)
    except OSError as e:
        _fail(_read_error(file, e))
    except driver.StageUnavailable as e:
        _fail(str(e))
    if result.diagnostics:
        render.report(result.diagnostics, result.sources)
    if not result.ok:
        raise typer.Exit(EXIT_ERRORS)
    try:
        text = driver.format_output(stage.value, result)
    except driver.StageUnavailable as e:
        _fail(str(e))
    if stage.value != "ast" and not text.strip():
        checked = result.context.outputs.get("checked")
        kernels = getattr(getattr(checked, "program", None), "kernels", {}) or {}
        if kernel is not None and kernel not in kernels:
            known = ", ".join(f"`{k}`" for k in kernels) or "none"
            _fail(f"there is no kernel named `{kernel}` in `{file}` (kernels: {known})")
        what = f"kernel `{kernel}`" if kernel is not None else "any kernel"
        _fail(
            f"no launch of {what} in `{file}` fixes its const generics at compile time, "
            "so there is no instance to show"
        )
    if output is not None:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        typer.echo(text.rstrip("\n"))


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="The `.tile` program whose `main` to run.")],
    device: Annotated[
        DeviceChoice,
        typer.Option(
            "--device", "-d", help="cpu: the interpreter; gpu: CUDA; auto: gpu if present."
        ),
    ] = DeviceChoice.auto,
    profile: Annotated[
        bool,
        typer.Option(
            "--profile",
            help="Print a table of every kernel launch (time, bytes, FLOPs, % of peak) to stderr.",
        ),
    ] = False,
    trace: Annotated[
        Path | None,
        typer.Option("--trace", help="Write a Chrome/Perfetto trace of the launches to this file."),
    ] = None,
    sanitize: Annotated[
        bool,
        typer.Option(
            "--sanitize",
            help="Run every launch block by block on the CPU and report data races, "
            "races with launches in flight and unsafe writes outside a tensor "
            "(also TILE_SANITIZE=1).",
        ),
    ] = False,
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """Check a program, then run its `main`."""
    _local_options(error_format, color)
    try:
        from tilelang.run import run_file
    except ModuleNotFoundError as e:
        if e.name in ("tilelang.run",):
            _fail("`tilec run` is not available yet (`tilelang.run` is missing)")
        raise
    sanitize_flag = True if sanitize else None
    if profile or trace is not None:
        from tilelang.profiler import Profile

        with Profile(print_table=profile, trace=str(trace) if trace is not None else None):
            status = run_file(file, device=device.value, sanitize=sanitize_flag)
    else:
        status = run_file(file, device=device.value, sanitize=sanitize_flag)
    raise typer.Exit(int(status or 0))


@app.command()
def explain(
    code: Annotated[
        str | None, typer.Argument(help="An error code, e.g. E0302; none: list every code.")
    ] = None,
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """Print the long explanation of an error code, with examples."""
    _local_options(error_format, color)
    from tilelang.diagnostics import explain as ex
    from tilelang.diagnostics import render

    if code is None:
        from tilelang.diagnostics.codes import REGISTRY

        for entry in sorted(REGISTRY.values(), key=lambda e: e.code):
            retired = " (no longer emitted)" if entry.retired else ""
            typer.echo(f"{entry.code}  {entry.name:<32} {entry.summary}{retired}")
        return
    normal = ex.normalize_code(code)
    if normal is None:
        _fail(f"`{code}` is not an error code (codes look like `E0302`)")
    text = ex.explain_text(normal)
    if text is None:
        if ex.is_registered(normal):
            _fail(f"error code `{normal}` has no long explanation yet")
        _fail(f"`{normal}` is not a known error code")
    if not render.use_color(render.settings().color, sys.stdout):
        # Piped or colourless: the Markdown source is the most readable form.
        typer.echo(text.rstrip("\n"))
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(force_terminal=True, highlight=False).print(Markdown(text, code_theme="ansi_dark"))


@app.command()
def repl(
    device: Annotated[
        DeviceChoice,
        typer.Option("--device", "-d", help="Where launches run (as for `tilec run`)."),
    ] = DeviceChoice.cpu,
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """An interactive session: define kernels and functions, evaluate host code."""
    _local_options(error_format, color)
    main_fn = _optional("tilelang.repl", "main", "`tilec repl`")
    raise typer.Exit(int(main_fn(device=device.value) or 0))


@app.command()
def lsp(
    stdio: Annotated[
        bool,
        # Language clients (vscode-languageclient) add `--stdio` when they
        # talk over stdin/stdout; that is the only transport, so accept it.
        typer.Option(
            "--stdio", help="Talk LSP over stdin/stdout (the default and only transport)."
        ),
    ] = False,
) -> None:
    """Start the language server on stdin/stdout (for editors)."""
    serve = _optional("tilelang.lsp.server", "serve", "`tilec lsp`")
    serve()


@cache_app.command("list")
def cache_list() -> None:
    """List the cached compiled kernels and the tuner's records."""
    fn = _optional("tilelang.runtime.cache", "cache_list", "`tilec cache list`")
    for line in fn():
        typer.echo(line)
    from tilelang.tuner.records import list_lines

    for line in list_lines():
        typer.echo(line)


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete every cached compiled kernel and tuning record."""
    fn = _optional("tilelang.runtime.cache", "cache_clear", "`tilec cache clear`")
    n = fn()
    from tilelang.tuner.records import default_store

    r = default_store().clear()
    typer.echo(
        f"removed {n} cache entr{'y' if n == 1 else 'ies'} and {r} tuning record{'s' if r != 1 else ''}"
    )


@app.command()
def tune(
    file: Annotated[
        Path,
        typer.Argument(help="A `.tile` program (its `main` runs) or a Python script that calls kernels."),
    ],
    device: Annotated[
        DeviceChoice,
        typer.Option("--device", "-d", help="cpu: the interpreter; gpu: CUDA; auto: gpu if present."),
    ] = DeviceChoice.auto,
    error_format: LocalErrorFormat = None,
    color: LocalColor = None,
) -> None:
    """Tune `#[autotune]` kernels ahead of time: run FILE with every tuned launch
    timing its candidates again, and list the records it made (kept beside
    the compile cache, reused by later runs)."""
    _local_options(error_format, color)
    import runpy
    import time

    from tilelang.tuner import records, state

    start = time.time()
    state.FORCE = True
    status = 0
    try:
        if file.suffix == ".py":
            sys.argv = [str(file)]
            try:
                runpy.run_path(str(file), run_name="__main__")
            except SystemExit as e:
                status = int(e.code or 0) if not isinstance(e.code, str) else 1
        else:
            from tilelang.run import run_file

            status = int(run_file(file, device=device.value) or 0)
    finally:
        state.FORCE = False
    made = [r for r in records.default_store().all() if r.created >= start - 1]
    typer.echo(f"{len(made)} tuning record{'s' if len(made) != 1 else ''} made:")
    for r in made:
        typer.echo(f"  {r.summary()}")
        for cfg, why in r.skipped:
            typer.echo(f"    skipped {', '.join(f'{k}={v}' for k, v in cfg.items())}: {why}")
    raise typer.Exit(status)


def _optional(module: str, name: str, what: str):  # type: ignore[no-untyped-def]
    """Import `module.name`, or exit with a clear message if it is not written yet."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            _fail(f"{what} is not available yet (`{module}` is missing)")
        raise
    fn = getattr(mod, name, None)
    if fn is None:
        _fail(f"{what} is not available yet (`{module}.{name}` is missing)")
    return fn


# ---------------------------------------------------------------- entry point
def main(argv: list[str] | None = None) -> NoReturn:
    """The `tilec` console script. Turns any escaping exception into an
    internal-compiler-error report with status 101."""
    try:
        app(args=argv, prog_name="tilec", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # `tilec emit ... | head`: the reader went away; stop quietly.
        from tilelang.run import EXIT_BROKEN_PIPE, _silence_stdout

        _silence_stdout()
        sys.exit(EXIT_BROKEN_PIPE)
    except BaseException as e:  # the last line of defence: any escape is a bug
        report_ice(e)
        sys.exit(EXIT_ICE)
    sys.exit(EXIT_OK)


def report_ice(e: BaseException) -> None:
    sys.stderr.write(f"internal compiler error: {type(e).__name__}: {e}\n")
    sys.stderr.write(f"{ISSUES_NOTE}\n")
    sys.stderr.write(f"note: tilec {__version__}, Python {sys.version.split()[0]}\n\n")
    sys.stderr.write("".join(traceback.format_exception(e)))
    sys.stderr.flush()
