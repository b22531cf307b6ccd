"""`tilec`, the command-line front end: argument plumbing over `tilelang.driver`.

Commands: check, emit, run, explain, doc, repl, lsp, cache. Global options:
`--error-format human|short|json` and `--color auto|always|never` (also
`NO_COLOR`), before or after the command; `--version`, `-h/--help`.

Exit statuses: 0 success; 1 the program has errors (diagnostics printed),
or a source file it names cannot be read; 2 bad command-line usage; 3 a run-time error in `tilec run`; 101 an internal
compiler error (a bug in tilec: a short report, the full trace in a file; see
`diagnostics/ice.py`).

The parser is the standard library's `argparse`: `tilec check` must start
fast (`benchmarks/startup.py`), and a command-line framework was most of its
start-up time.

Invariants: no logic beyond plumbing lives here; heavy modules (NumPy,
llvmlite, cuda-python, pygls, prompt_toolkit, rich) are imported inside the
command that needs them, so `tilec --help` and `tilec check` start fast; a
user error never shows a Python traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from tilelang import __version__

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3
EXIT_ICE = 101

ERROR_FORMATS = ("human", "short", "json")
COLORS = ("auto", "always", "never")
STAGES = ("ast", "ir", "gpu", "llvm", "ptx")
DEVICES = ("cpu", "gpu", "auto")


class Exit(Exception):
    """End the command with this status (the commands' `return` for errors)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


# ---------------------------------------------------------------- helpers
def _fail(message: str, status: int = EXIT_ERRORS) -> NoReturn:
    """A one-line `error: ...` (not tied to a source location) and exit."""
    _print_plain_error(message)
    raise Exit(status)


def _print_plain_error(message: str) -> None:
    from tilelang.diagnostics import render

    render.plain_error(message)


# ---------------------------------------------------------------- commands
def cmd_check(args: argparse.Namespace) -> int:
    """Parse and check programs (names, types, ownership); print diagnostics only."""
    from tilelang import driver
    from tilelang.diagnostics import render
    from tilelang.source import SourceMap

    sources = SourceMap()
    diagnostics = []
    unreadable = False
    for name in args.files:
        path = Path(name)
        try:
            if name == "-":  # editors pipe an unsaved buffer
                from tilelang.source import MAX_SOURCE_BYTES, decode_source

                raw = getattr(sys.stdin, "buffer", None)
                text = (decode_source(raw.read(MAX_SOURCE_BYTES + 1), "<stdin>") if raw is not None
                        else sys.stdin.read())
                result = driver.check(text, name="<stdin>", sources=sources, deny_warnings=args.deny)
            else:
                result = driver.check(path, sources=sources, deny_warnings=args.deny)
        except OSError as e:  # said, and the other files are still checked (`tilec check *.tile`)
            from tilelang.source import read_error

            _print_plain_error(read_error(path, e))
            unreadable = True
            continue
        diagnostics.extend(result.diagnostics)
    render.report(diagnostics, sources)
    return EXIT_ERRORS if unreadable or any(d.severity.value == "error" for d in diagnostics) else EXIT_OK


def _writable(path: str, flag: str) -> None:
    """Refuse, before any work, an output path that cannot be written: its
    directory missing or not a directory, or the path itself a directory
    (writing there was an internal error once the program had run)."""
    out = Path(path)
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        _print_plain_error(f"cannot write `{path}` (`{flag}`): it is a directory")
        _err(f"help: give a file in it: `{flag} {out / ('out' + {'-o': '.txt'}.get(flag, '.json'))}`")
        raise Exit(EXIT_USAGE)
    if not parent.is_dir():
        _print_plain_error(f"cannot write `{path}` (`{flag}`): the directory `{parent}` does not exist")
        _err(f"help: create it first (`mkdir -p {parent}`), or give a path in an existing directory")
        raise Exit(EXIT_USAGE)


def _write(path: Path, text: str, flag: str) -> None:
    try:
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as e:
        _print_plain_error(f"cannot write `{path}` (`{flag}`): {e.strerror or e}")
        _err("help: give a path in a directory you can write")
        raise Exit(EXIT_USAGE) from None


def cmd_emit(args: argparse.Namespace) -> int:
    """Print an intermediate form of a program: its AST, Tile IR, GPU IR, LLVM IR or PTX."""
    import re

    from tilelang import driver
    from tilelang.diagnostics import render
    from tilelang.diagnostics.model import TileError

    file = Path(args.file)
    from tilelang.backend.target import SUPPORTED_ARCHS  # no llvmlite: the table only

    if not re.fullmatch(r"sm_\d+a?", args.arch):
        _print_plain_error(f"invalid value for `--arch`: `{args.arch}` is not an architecture like `sm_80`")
        guess = re.sub(r"^(sm)?_?", "sm_", args.arch.strip().lower())  # `SM_90`, `sm90`, `90a`
        if guess in SUPPORTED_ARCHS:
            _err(f"help: did you mean `--arch {guess}`?")
        raise Exit(EXIT_USAGE)

    if args.stage in ("gpu", "llvm", "ptx") and args.arch not in SUPPORTED_ARCHS:
        _fail(f"unsupported value for `--arch`: tilec does not compile for `{args.arch}` "
              f"(supported: {', '.join(SUPPORTED_ARCHS)})", EXIT_USAGE)
    if args.output is not None:
        _writable(args.output, "-o")
    options = driver.Options(arch=args.arch, kernel=args.kernel, deny_warnings=args.deny, explain=args.explain)
    if args.explain and args.stage in ("ast", "ir"):
        _fail("`--explain` needs a GPU stage: `--stage gpu` (or llvm, ptx), with `--arch`", EXIT_USAGE)
    try:
        if args.file == "-":  # as `tilec check -` and `tilec run -` read it
            from tilelang.run import _read_stdin

            file = Path("<stdin>")
            result = driver.compile(_read_stdin(), args.stage, name="<stdin>", options=options)
        else:
            result = driver.compile(file, args.stage, options=options)
    except OSError as e:
        from tilelang.source import read_error

        _fail(read_error(file, e))
    if result.diagnostics:
        render.report(result.diagnostics, result.sources)
    if not result.ok:
        return EXIT_ERRORS
    try:
        text = driver.format_output(args.stage, result)
    except TileError as e:  # a `TILEC_*` switch the IR's warps read (`--stage ir`), set to a value it does not take
        render.report(list(e.diagnostics), result.sources)
        return EXIT_ERRORS
    if not text.strip():
        kernel = args.kernel
        checked = result.context.outputs.get("checked")
        kernels = checked.program.kernels if checked is not None else {}
        if args.stage == "ast":  # (no check ran: the file's own kernels)
            from tilelang.syntax import ast

            kernels = {i.name.name: i for i in result.context.outputs["ast"].items
                       if isinstance(i, ast.FnDecl) and i.is_kernel}
        if kernel is not None and kernel not in kernels:
            known = ", ".join(f"`{k}`" for k in kernels) or "none"
            _fail(f"there is no kernel named `{kernel}` in `{file}` (kernels: {known})")
        what = f"kernel `{kernel}`" if kernel is not None else "any kernel"
        _print_plain_error(f"no launch of {what} in `{file}` fixes its const generics at compile time, "
                           "so there is no instance to show")
        _err("help: `tilec emit` compiles the launches whose generics and element types the source fixes "
             "(`k::<64>(..)`, or constant shapes); one whose sizes are values known only when it runs (a "
             "generic `fn`'s parameters, a loop's variable, a tensor's shape) is compiled when it runs: add a "
             "launch with constants to `main` (`k::<f32, 64>(..)`) to see its code, or in `tilec repl` `:load` "
             "the file, run the code that launches it (a `fn` of the file, or the statements of its `main`, "
             "which `:load` leaves out) and `:ptx KERNEL` shows the instance it launched")
        raise Exit(EXIT_ERRORS)
    if args.output is not None:
        modules = result.context.outputs[args.stage] if args.stage in ("llvm", "ptx") else ()
        if len(modules) > 1:
            _write_modules(Path(args.output), modules)
        else:
            _write(Path(args.output), text, "-o")
    else:
        _out(text.rstrip("\n"))
        modules = result.context.outputs[args.stage] if args.stage in ("llvm", "ptx") else ()
        if len(modules) > 1:
            tool = "ptxas" if args.stage == "ptx" else "llc"
            _err(f"note: {len(modules)} kernel instances, so {len(modules)} modules one after another "
                 f"(`{tool}` takes one module a file)\n"
                 f"help: write one file an instance with `-o FILE.{args.stage if args.stage == 'ptx' else 'll'}`, "
                 "or pick a kernel with `--kernel NAME`")
    return EXIT_OK


def _write_modules(output: Path, modules: Any) -> None:
    """Several kernel instances at the `llvm`/`ptx` stage: one file each, so
    every file is one module that `llc`/`ptxas` take (modules written one
    after another in one file are not). `out.ptx` becomes `out.gemm.ptx`,
    `out.gemm_reference.ptx`, ..; a kernel with several instances numbers
    the second and later ones (`out.gemm.2.ptx`)."""
    seen: dict[str, int] = {}
    written = []
    for a in modules:
        seen[a.kernel] = seen.get(a.kernel, 0) + 1
        tag = a.kernel if seen[a.kernel] == 1 else f"{a.kernel}.{seen[a.kernel]}"
        path = output.with_name(f"{output.stem}.{tag}{output.suffix}")
        _write(path, a.text, "-o")
        written.append(str(path))
    _err(f"wrote {len(written)} modules, one for each kernel instance: " + ", ".join(written))


def cmd_run(args: argparse.Namespace) -> int:
    """Check a program, then run its `main`."""
    sanitize = True if args.sanitize else None
    for path, flag in ((args.trace, "--trace"), (args.block_trace, "--block-trace")):
        if path is not None:
            _writable(path, flag)
    if args.block_trace is not None:
        from tilelang.runtime import trace

        with trace.session(args.block_trace) as t:
            rc = _run_profiled(args, sanitize)
        assert t.trace is not None
        _err(t.trace.summary())
        _err(f"wrote the block timeline to {args.block_trace}")
        return rc
    return _run_profiled(args, sanitize)


def _run_profiled(args: argparse.Namespace, sanitize: bool | None) -> int:
    from tilelang.run import run_file

    if args.profile or args.trace is not None:
        from tilelang.profiler import Profile

        with Profile(print_table=args.profile, trace=args.trace):
            return int(run_file(Path(args.file), device=args.device, sanitize=sanitize,
                        deny_warnings=args.deny) or 0)
    return int(run_file(Path(args.file), device=args.device, sanitize=sanitize,
                        deny_warnings=args.deny) or 0)


def cmd_tune(args: argparse.Namespace) -> int:
    """Tune `#[autotune]` kernels ahead of time: run FILE with every tuned launch
    timing its candidates again, and list the records it made (kept beside
    the compile cache, reused by later runs)."""
    import runpy
    import time

    from tilelang.tuner import records, state

    file = Path(args.file)
    start = time.time()
    if file.suffix == ".py" and not file.is_file():  # (a `.tile` one: `run_file` says so)
        from tilelang.source import read_error, read_source

        try:
            read_source(file)
        except OSError as e:
            _fail(read_error(file, e))
    state.FORCE = True
    status = 0
    argv = sys.argv
    try:
        if file.suffix == ".py":
            sys.argv = [str(file)]
            try:
                runpy.run_path(str(file), run_name="__main__")
            except SystemExit as e:
                status = int(e.code or 0) if not isinstance(e.code, str) else 1
            except Exception as e:  # the script's own error (a TileError of its calls too): not tilec's bug
                _script_traceback(e, file)
                status = EXIT_RUNTIME
        else:
            from tilelang.run import run_file

            status = int(run_file(file, device=args.device) or 0)
    finally:
        state.FORCE = False
        sys.argv = argv
    made = [r for r in records.default_store().all() if r.created >= start - 1]
    if not made:
        if status == 0:
            _out("0 tuning records made: the program launched no `#[autotune]` kernel")
        return status
    _out(f"{len(made)} tuning record{'s' if len(made) != 1 else ''} made:")
    for r in made:
        _out(f"  {r.summary()}")
        for cfg, why in r.skipped:
            _out(f"    skipped {', '.join(f'{k}={v}' for k, v in cfg.items())}: {why}")
    return status


def _script_traceback(e: BaseException, file: Path) -> None:
    """`tilec tune script.py`: the script's exception as Python prints it,
    from the script's own frames (not `runpy`'s or tilec's)."""
    import traceback

    tb = e.__traceback__
    while tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() != file.resolve():
        tb = tb.tb_next
    _err("".join(traceback.format_exception(type(e), e, tb or e.__traceback__)).rstrip("\n"))


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the long explanation of an error code, with examples."""
    from tilelang.diagnostics import explain as ex

    code = args.code
    if code is None:
        from tilelang.diagnostics.codes import REGISTRY

        for entry in sorted(REGISTRY.values(), key=lambda e: e.code):
            retired = " (no longer emitted)" if entry.retired else ""
            _out(f"{entry.code}  {entry.name:<32} {entry.summary}{retired}")
        return EXIT_OK
    normal = ex.normalize_code(code)
    if normal is None:
        _fail(f"`{code}` is not an error code (codes look like `E0303`)")
    text = ex.explain_text(normal)
    if text is None:
        if ex.is_registered(normal):
            _fail(f"error code `{normal}` has no long explanation yet")
        from tilelang.diagnostics import render

        render.plain_error(f"`{normal}` is not a known error code",
                           help=["`tilec explain` with no code lists every code and what it means"])
        raise Exit(EXIT_ERRORS)
    _markdown(text)
    return EXIT_OK


def cmd_doc(args: argparse.Namespace) -> int:
    """Print an entry of the language reference: a built-in or a section."""
    from tilelang import doc

    if args.name is None:
        _out("Sections: " + ", ".join(s.slug for s in doc.sections()))
        _out("Built-ins: " + ", ".join(doc.builtin_names()))
        _out("`tilec doc NAME` prints one; docs/reference.md holds them all.")
        return EXIT_OK
    text = doc.entry(args.name)
    if text is None:
        from tilelang.sema.loader import ModuleLoader

        loader = ModuleLoader()  # `tilec doc softmax`: std's function; `tilec doc std::math`: its items
        text = loader.std_entry(args.name) or loader.std_module_entry(args.name)
    if text is None:
        import difflib

        from tilelang.sema.call_habits import function_habit, method_habit

        habit = function_habit(args.name) or method_habit(args.name)
        if habit is not None:  # NumPy's and PyTorch's names: how Tile spells them
            _print_plain_error(f"no entry named `{args.name}` in the reference: Tile has no `{args.name}`")
            _err(f"help: {habit}")
            raise Exit(EXIT_ERRORS)

        close = difflib.get_close_matches(args.name, doc.topics(), n=1, cutoff=0.6)
        guess = close[0] if close else None
        _fail(f"no entry named `{args.name}` in the reference"
              + (f"; did you mean `{guess}`?" if guess else " (`tilec doc` lists them)"))
    _markdown(text)
    return EXIT_OK


def _markdown(text: str) -> None:
    """Markdown on stdout: rendered by rich on a colour terminal, else the source."""
    from tilelang.diagnostics import render

    if not render.use_color(render.settings().color, sys.stdout):
        # Piped or colourless: the Markdown source is the most readable form.
        _out(text.rstrip("\n"))
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(force_terminal=True, highlight=False).print(Markdown(text, code_theme="ansi_dark"))


def cmd_repl(args: argparse.Namespace) -> int:
    """An interactive session: define kernels and functions, evaluate host code."""
    from tilelang.repl import main as repl_main

    return int(repl_main(device=args.device) or 0)


def cmd_lsp(args: argparse.Namespace) -> int:
    """Start the language server on stdin/stdout (for editors)."""
    from tilelang.lsp.server import serve

    serve()
    return EXIT_OK


def cmd_cache_list(args: argparse.Namespace) -> int:
    """List the cached compiled kernels and the tuner's records."""
    from tilelang.runtime.cache import cache_list, default_dir

    where = default_dir()
    if where.exists() and not where.is_dir():  # was "0 entries", as if caching worked and nothing was cached yet
        _print_plain_error(f"the compile cache `{where}` is a file, not a directory: nothing is cached")
        _err("help: point `TILEC_CACHE_DIR` at a directory (it is made when a kernel is first cached)"
             + ("" if os.environ.get("TILEC_CACHE_DIR") else f", or move the file `{where}` away"))
        return EXIT_ERRORS
    for line in cache_list():
        _out(line)
    from tilelang.tuner.records import list_lines

    for line in list_lines():
        _out(line)
    return EXIT_OK


def cmd_cache_clear(args: argparse.Namespace) -> int:
    """Delete every cached compiled kernel and tuning record."""
    from tilelang.runtime.cache import cache_clear

    n = cache_clear()
    from tilelang.tuner.records import default_store

    r = default_store().clear()
    _out(f"removed {n} cache entr{'y' if n == 1 else 'ies'} and {r} tuning record{'s' if r != 1 else ''}")
    return EXIT_OK


# ---------------------------------------------------------------- the parser
class _Parser(argparse.ArgumentParser):
    """argparse with the usage error status (2) and without a traceback."""

    def error(self, message: str) -> NoReturn:
        from tilelang.diagnostics import render

        json = _json_requested()
        if not json:
            self.print_usage(sys.stderr)
        helps = [f"`{self.prog} --help` lists the options"]
        guess = self._guess(message)
        if guess:
            helps.insert(0, guess)
        render.plain_error(message, helps, format="json" if json else "human")
        raise Exit(EXIT_USAGE)

    def _guess(self, message: str) -> str | None:
        """`--devcie` (unrecognized): the option it is close to, in any command;
        words after `tilec run FILE` (`-- 4 x.npy`): `main` takes no arguments."""
        import difflib
        import re

        command = re.match(r"argument COMMAND: invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if command is not None:  # `tilec chek`, `tilec help`, `tilec version`
            word = command.group(1)
            if word in ("help", "version"):
                return f"did you mean `tilec --{word}`?"
            close = difflib.get_close_matches(word, re.findall(r"'(\w+)'", command.group(2)), n=1, cutoff=0.6)
            return f"did you mean `tilec {close[0]}`?" if close else None
        option = re.match(r"argument (--[\w-]+)\S*: invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if option is not None:  # `--device cuda`, `--stage ptxx`, `--stage llvm-ir`
            choices = re.findall(r"'([\w-]+)'", option.group(3))
            word = {"cuda": "gpu", "nvidia": "gpu", "llvm-ir": "llvm", "asm": "ptx"}.get(option.group(2).lower(),
                                                                                        option.group(2).lower())
            close = [word] if word in choices else difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
            return f"did you mean `{option.group(1)} {close[0]}`?" if close else None
        if not message.startswith("unrecognized arguments: "):
            return None
        words = message[len("unrecognized arguments: "):].split()
        extra = [w for w in words if w != "--"]
        if _command() == "run" and extra and all(not w.startswith("-") for w in extra):
            if all(w.endswith(".tile") for w in extra):
                return "`tilec run` runs one program: run each on its own (`tilec check` takes several files)"
            return ("`tilec run` calls `fn main()`, which takes no arguments: build its inputs in `main` "
                    "(`load_npy(\"x.npy\")`, a `const`), or call a function of the program with arguments "
                    "from Python: `tilelang.load(\"FILE.tile\").f(..)`")
        options: set[str] = set()
        for action in self._actions:
            options.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for sp in action.choices.values():
                    for a in sp._actions:
                        options.update(o for o in a.option_strings if o.startswith("--"))
        for word in words:
            if word.startswith("--"):
                close = difflib.get_close_matches(word.split("=", 1)[0], sorted(options), n=1, cutoff=0.75)
                if close:
                    return f"did you mean `{close[0]}`?"
        return None


_ARGV: list[str] = []  # the command line `run` parses (for `_json_requested`)


def _command() -> str | None:
    """The command word of the command line being parsed (`run` of `tilec --color never run f.tile`)."""
    argv = iter(_ARGV)
    for a in argv:
        if a in ("--error-format", "--color"):
            next(argv, None)  # its value
        elif not a.startswith("-"):
            return a
    return None


def _json_requested() -> bool:
    """`--error-format json` (or `=json`) on the command line being parsed: a
    usage error comes before the parsed options are, and must still be JSON."""
    argv = _ARGV
    return any(a == "--error-format=json" or (a == "--error-format" and nxt == "json")
               for a, nxt in zip(argv, [*argv[1:], ""], strict=True))


def _deny_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--deny", "-D", choices=("warnings",), action="append", default=[],
                   help="`--deny warnings`: treat every warning as an error (exit status 1)")


def _diagnostic_options(p: argparse.ArgumentParser, where: str) -> None:
    # On the main parser they set the default; on a command (`tilec check FILE
    # --error-format json`, as users write it) they override it: SUPPRESS keeps
    # an option that was not given there from resetting the main one.
    command = where == "command"
    p.add_argument("--error-format", choices=ERROR_FORMATS,
                   default=argparse.SUPPRESS if command else "human",
                   help="how diagnostics are printed (default: human)")
    p.add_argument("--color", choices=COLORS, default=argparse.SUPPRESS if command else "auto",
                   help="colour in diagnostics (default: auto, on a terminal)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tilec",
                     description="The Tile compiler: check, run and compile `.tile` programs.")
    parser.add_argument("--version", action="version", version=f"tilec {__version__}",
                        help="print the version and exit")
    _diagnostic_options(parser, "main")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, fn: Callable[[argparse.Namespace], int],
                help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=(fn.__doc__ or help).strip())
        _diagnostic_options(p, "command")
        p.set_defaults(func=fn)
        return p

    p = command("check", cmd_check, "diagnostics only (exit 1 on errors)")
    p.add_argument("files", nargs="+", metavar="FILE", help="the `.tile` files to check (`-`: stdin)")
    _deny_option(p)

    p = command("emit", cmd_emit, "print the AST, Tile IR, GPU IR, LLVM IR or PTX of a program")
    p.add_argument("file", metavar="FILE", help="the `.tile` file to compile (`-`: stdin)")
    p.add_argument("--stage", "-s", choices=STAGES, required=True, help="what to print")
    p.add_argument("--kernel", "-k", help="only this kernel")
    p.add_argument("--arch", default="sm_80",
                   help="GPU architecture for gpu/llvm/ptx, e.g. sm_80, sm_90a (default: sm_80)")
    p.add_argument("--output", "-o", metavar="PATH", help="write to this file, not stdout")
    p.add_argument("--explain", action="store_true",
                   help="gpu/llvm/ptx: note on stderr the path each kernel takes (the Hopper attention or GEMM "
                        "pipeline, mma.sync, ...) and why a faster one refused its loop")
    _deny_option(p)

    p = command("run", cmd_run, "check a program, then run its `main`")
    p.add_argument("file", metavar="FILE", help="the `.tile` program whose `main` to run")
    p.add_argument("--device", "-d", choices=DEVICES, default="auto",
                   help="cpu: the interpreter; gpu: CUDA; auto: gpu if present (default)")
    p.add_argument("--profile", action="store_true",
                   help="print a table of every kernel launch (time, bytes, FLOPs, %% of peak) to stderr")
    p.add_argument("--trace", metavar="PATH",
                   help="write a Chrome/Perfetto trace of the launches to this file")
    p.add_argument("--block-trace", metavar="PATH",
                   help="record when every GPU block ran and on which SM (also TILEC_TRACE=blocks): "
                        "a Chrome/Perfetto trace at PATH, one track per SM, and a table per launch on stderr")
    p.add_argument("--sanitize", action="store_true",
                   help="run every launch block by block on the CPU and report data races, races "
                        "with launches in flight and unsafe writes outside a tensor (also TILE_SANITIZE=1)")

    _deny_option(p)

    p = command("tune", cmd_tune, "tune `#[autotune]` kernels ahead of time")
    p.add_argument("file", metavar="FILE",
                   help="a `.tile` program (its `main` runs) or a Python script that calls kernels")
    p.add_argument("--device", "-d", choices=DEVICES, default="auto",
                   help="cpu: the interpreter; gpu: CUDA; auto: gpu if present (default)")

    p = command("explain", cmd_explain, "the long explanation of an error code")
    p.add_argument("code", nargs="?", metavar="CODE",
                   help="an error code, e.g. E0302; none: list every code")

    p = command("doc", cmd_doc, "an entry of the language reference (a built-in or a section)")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="e.g. `exp`, `load_like`, `types`, `numbers`; none: list them")

    p = command("repl", cmd_repl, "an interactive session")
    p.add_argument("--device", "-d", choices=DEVICES, default="cpu",
                   help="where launches run (as for `tilec run`; default: cpu)")

    p = command("lsp", cmd_lsp, "the language server on stdin/stdout (for editors)")
    # Language clients add `--stdio`; that is the only transport, so accept it.
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")

    p = command("cache", lambda a: _no_subcommand(p), "inspect or clear the compiled-kernel cache")
    cache = p.add_subparsers(dest="cache_command", metavar="ACTION", parser_class=_Parser)
    for name, fn in (("list", cmd_cache_list), ("clear", cmd_cache_clear)):
        cp = cache.add_parser(name, help=(fn.__doc__ or "").strip(), description=fn.__doc__)
        cp.set_defaults(func=fn)
    return parser


def _no_subcommand(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return EXIT_USAGE


_BUILT: list[argparse.ArgumentParser] = []


def _parser() -> argparse.ArgumentParser:
    """`build_parser()`, once a process: parsing reads it and changes nothing in it (help is formatted, at the
    terminal's width, when printed), and building it was most of an in-process `tilec check`'s own time (the
    tests run `tilec` in process thousands of times)."""
    if not _BUILT:
        _BUILT.append(build_parser())
    return _BUILT[0]


def run(argv: list[str]) -> int:
    """Parse `argv` and run the command; the exit status."""
    global _ARGV
    _ARGV = list(argv)
    parser = _parser()
    if not argv:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        args = parser.parse_args(argv)
        if getattr(args, "func", None) is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        from tilelang.diagnostics import render

        render.configure(format=args.error_format, color=args.color)
        # `--deny` collects its values (`-D warnings` may be repeated)
        args.deny = bool(getattr(args, "deny", None))
        return int(args.func(args))
    except Exit as e:
        return e.status


# ---------------------------------------------------------------- entry point
def main(argv: list[str] | None = None) -> NoReturn:
    """The `tilec` console script. Turns any escaping exception into an
    internal-compiler-error report with status 101."""
    try:
        status = run(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # argparse's --help and --version
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        # `tilec emit ... | head`: the reader went away; stop quietly.
        from tilelang.run import EXIT_BROKEN_PIPE, _silence_stdout

        _silence_stdout()
        status = EXIT_BROKEN_PIPE
    except BaseException as e:  # the last line of defence: any escape is a bug
        report_ice(e)
        status = EXIT_ICE
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        from tilelang.run import EXIT_BROKEN_PIPE, _silence_stdout

        _silence_stdout()
        status = status or EXIT_BROKEN_PIPE
    sys.exit(status)


def report_ice(e: BaseException) -> None:
    """The short report (innermost frames, the full trace in a file); it
    survives a closed stderr, so the status stays 101."""
    from tilelang.diagnostics.ice import write_report

    write_report(e, sys.stderr)


if __name__ == "__main__":  # `python3 -m tilelang.cli ...` as `tilec ...` (it imported and ran nothing)
    sys.exit(main())
