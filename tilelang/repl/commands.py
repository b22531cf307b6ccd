"""The REPL's meta-commands: `:help`, `:type`, `:ast`, `:ir`/`:llvm`/`:ptx`, `:load`,
`:device`, `:time`, `:vars`, `:program`, `:reset`, `:quit`.

`run_command(session, line)` runs one `:command` line against the session and
returns what it shows; an unknown command gets a "did you mean". `:ir`,
`:llvm` and `:ptx` show the kernel instances that ran in this session (as
lowered for those launches), else those the program's launches fix.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.repl.core import ReplOutput, SessionCore
from tilelang.repl.synth import Chunk, Synth, check_session, item_of
from tilelang.repl.values import (
    default_literals,
    describe,
    device_words,
    is_hidden,
    wait_new_handles,
)
from tilelang.source import SourceMap, read_error, read_source

HELP = """\
Type Tile at the prompt: items (`fn`, `kernel fn`, `const`, `use`) and host
statements, as in the body of `main`. An expression without a trailing `;`
shows its value and type. Enter continues the entry while it is unfinished
(an open bracket, a missing `;`); Enter on a blank line submits it as it is
(a statement's missing `;` added); Ctrl-C drops it. Tab completes keywords,
builtins, methods (after `.`) and your names; Up/Down walk the history
(~/.tilec_history, or $TILEC_HISTORY).

  >>> let mut x = arange::<f32>(8);
  >>> kernel fn double<const B: i32>(y: &mut Tensor<f32, [B]>) {
  ...     y.store(y.load() * 2.0);
  ... }
  >>> double(x.partition([4])).sync();
  >>> x
  Tensor<f32, [8]> = [ 0.0,  2.0,  4.0,  6.0,  8.0, 10.0, 12.0, 14.0]

Definitions and `let` bindings persist; defining a name again replaces it.
Every entry is checked with the whole session (types, ownership: a
`.launch()` keeps its tensors borrowed until `.wait()`). An entry that does
not check changes nothing, and its error points into it; one that fails
while running keeps what it wrote into tensors but none of its bindings.

Commands:
  :help                this text
  :help NAME           a builtin function or method (`:help load`), or your item
  :help builtins       every builtin, for kernels and for host code
  :type EXPR           the type of an expression, without running it
  :ast [ENTRY]         the syntax tree of ENTRY, or of the whole session
  :ir KERNEL           Tile IR of a kernel as launched (or as its launches fix it)
  :llvm KERNEL         its LLVM IR          :ptx KERNEL   its PTX
  :load FILE           add the items of a .tile file (not its `main`)
  :device [cpu|gpu|auto]  where kernels run (tensors move along)
  :time STMT           run STMT once and show the wall time it took
  :vars                the variables bound so far, with their types
  :program             the session as one program (the checker's view)
  :reset               forget everything
  :quit                leave (also Ctrl-D)

An error's code (`error[E0305]`) is explained by `tilec explain E0305`.
The language tour: examples/README.md."""


COMMANDS = (
    "help",
    "type",
    "ast",
    "ir",
    "llvm",
    "ptx",
    "load",
    "device",
    "time",
    "vars",
    "program",
    "reset",
    "quit",
)


def run_command(session: SessionCore, line: str) -> ReplOutput:
    cmd, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    match cmd:
        case "q" | "quit" | "exit":
            return ReplOutput(quit=True)
        case "h" | "help" | "?":
            return ReplOutput(stdout=HELP + "\n") if not arg else _help_on(session, arg)
        case "reset":
            if session._runtime is not None:
                # The checker forgets the session's launches: they must be over.
                wait_new_handles(session._runtime, set())
            session.items, session.stmts, session.env, session.types = [], [], {}, {}
            session.hidden = {}
            if session._runtime is not None:
                session._runtime.kernels.clear()
            return ReplOutput(stdout="session cleared\n")
        case "program":
            return ReplOutput(stdout=session.program_text())
        case "vars":
            return _vars(session)
        case "type" | "t":
            return _type_of(session, arg)
        case "ast":
            return _ast(session, arg)
        case "ir" | "llvm" | "ptx":
            return _emit(session, cmd, arg or None)
        case "load":
            return _load(session, arg)
        case "device":
            if not arg:
                if session._runtime is not None:
                    return ReplOutput(
                        stdout=f"kernels run on the {device_words(session._runtime.device)}\n"
                    )
                return ReplOutput(
                    stdout=f"device: {session.device} (chosen at the first launch)\n"
                )
            return session.switch_device(arg)
        case "time":
            if not arg:
                return ReplOutput(
                    stderr="error: `:time` needs a statement, e.g. `:time k(x).sync();`\n",
                    ok=False,
                )
            return session.entry(line[1:].partition(" ")[2], timed=True)
        case _:
            import difflib

            near = difflib.get_close_matches(cmd, COMMANDS, n=1)
            hint = f" (did you mean `:{near[0]}`?)" if near else ""
            return ReplOutput(
                stderr=f"error: unknown command `:{cmd}`{hint}; `:help` lists them\n", ok=False
            )


def _item_doc(session: SessionCore, chunk: Chunk) -> str:
    """The `//` comment lines above a session item where it was written (an entry or a `:load`ed file)."""
    from tilelang.source import doc_comment_above

    try:
        return doc_comment_above(session.display.get(chunk.file), chunk.base)
    except (IndexError, AttributeError):
        return ""


def _item_header(text: str, kind: str) -> str:
    """A session item's declaration up to its body (a `const`'s up to its `=`), without comments: an
    attribute's `=` (`#[hints(num_warps = 4)]`) or a string's `{` is not where it ends."""
    import re

    from tilelang.source import without_comments

    code = without_comments(text)
    plain = re.sub(r'"(?:\\.|[^"\\])*"', lambda m: "_" * len(m.group()), code)  # (strings: same length)
    depth, end = 0, len(code)
    for i, ch in enumerate(plain):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and ch == ("=" if kind == "const" else "{"):
            end = i
            break
    return "\n".join(line.rstrip() for line in code[:end].strip().splitlines() if line.strip())


def _help_on(session: SessionCore, name: str) -> ReplOutput:
    """`:help NAME`: a builtin's signature and doc, or a session item's header."""
    from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, Context

    name = name.strip().lstrip(".")
    if name == "builtins":
        lines = []
        for title, table in (("functions", FUNCTIONS), ("methods", METHODS)):
            for ctx, where in (
                (Context.KERNEL, "in kernels"),
                (Context.HOST, "on the host"),
                (Context.BOTH, "anywhere"),
            ):
                names = sorted(n for n, sig in table.items() if sig.context is ctx)
                if names:
                    prefix = "." if title == "methods" else ""
                    lines.append(f"{title} {where}:")
                    lines.append(_wrap(", ".join(prefix + n for n in names), "  "))
        lines.append("`:help NAME` shows one of them.")
        return ReplOutput(stdout="\n".join(lines) + "\n")
    found = []
    for sig in (FUNCTIONS.get(name), METHODS.get(name)):
        if sig is not None:
            found.append(f"{sig.signature}\n    {sig.doc}\n    allowed {sig.context.where}")
    for it in session.items:
        if it.name == name and name not in session.hidden:
            doc = _item_doc(session, it.chunk)  # its `//` lines, as `help()` and the editor's hover show them
            found.append(_item_header(it.chunk.text, it.kind) + "".join(f"\n    {ln}" for ln in doc.splitlines())
                         + "\n    defined in this session")
    if name in session.env:
        ty = session.types.get(name) or type(session.env[name]).__name__
        found.append(f"{name}: {default_literals(ty)}\n    a variable of this session")
    if found:
        return ReplOutput(stdout="\n".join(found) + "\n")
    from tilelang.sema.call_habits import function_habit, method_habit
    from tilelang.sema.loader import ModuleLoader

    module = ModuleLoader().std_module_entry(name)  # `:help math`: std's module, not Python's (round 21)
    if module is not None:
        return ReplOutput(stdout=module + "\n")
    habit = function_habit(name) or method_habit(name)
    if habit is not None:  # NumPy's, PyTorch's and C's names (`tan`, `flip`, `sort`): how Tile writes them, as
        # `tilec doc NAME` says (a similar name, `tanh` for `tan`, is another function)
        return ReplOutput(stderr=f"error: Tile has no `{name}`\nhelp: {habit}\n", ok=False)
    std = ModuleLoader().std_entry(name)  # `:help softmax`: std's function, as `tilec doc softmax`
    if std is not None:
        return ReplOutput(stdout=std + "\n")
    from tilelang import doc

    # a keyword, a type or a section, as `tilec doc` has them (round 21: `:help graph` was "did you mean
    # `group`?")
    text = doc.entry(name)
    if text is not None:
        return ReplOutput(stdout=text.rstrip("\n") + "\n")
    import difflib

    names = sorted({*FUNCTIONS, *METHODS, *(it.name for it in session.items if it.name and it.name not in session.hidden)})
    near = difflib.get_close_matches(name, names, n=3)
    hint = f" (did you mean {', '.join(f'`{n}`' for n in near)}?)" if near else ""
    return ReplOutput(
        stderr=f"error: no builtin or item `{name}`{hint}; `:help builtins` lists them\n",
        ok=False,
    )


def _vars(session: SessionCore) -> ReplOutput:
    from tilelang.runtime.tensor import Tensor

    if not session.env:
        return ReplOutput(stdout="(no variables yet)\n")
    lines = []
    for name, v in session.env.items():
        if isinstance(v, Tensor):
            lines.append(f"{name}: {v.type_name()}")
            continue
        ty = default_literals(session.types.get(name, type(v).__name__))
        lines.append(f"{name}: {ty} = {session.unhide(describe(v))}")
    return ReplOutput(stdout="\n".join(lines) + "\n")


def _type_of(session: SessionCore, text: str) -> ReplOutput:
    from tilelang.syntax import ast

    if not text:
        return ReplOutput(stderr="error: `:type` needs an expression\n", ok=False)
    sf = session.new_file(text)
    from tilelang.syntax.parser import parse_repl

    sink = DiagnosticSink()  # its syntax first, as `:ast` reads it: `:type (1 +` was told of a `}` it never had
    parsed = parse_repl(sf, sink)
    if parsed is None or sink.has_errors:
        return ReplOutput(stderr=session.render(sink.diagnostics), ok=False)
    entries = [*parsed.items, *parsed.body.stmts] + ([parsed.body.tail] if parsed.body.tail else [])
    if len(entries) != 1 or not isinstance(entries[0], (ast.Expr, ast.ExprStmt)):
        return ReplOutput(stderr=f"error: `:type` takes one expression, and `{text.strip()}` is not one\n"
                                 "help: `:type x + 1` shows the type of `x + 1`; `:vars` lists the variables' types\n",
                          ok=False)
    tail = Chunk(text, sf.id, 0)
    checked = check_session(session.items, [*session.stmts, tail], len(session.stmts), shown_last=True)
    if checked.errors:
        return session.reject(checked)
    main = checked.root.items[-1]
    last = main.body.stmts[-1]
    ty = checked.program.type_of(last.expr if isinstance(last, ast.ExprStmt) else last)
    return ReplOutput(stdout=f"{text.strip()}: {session.unhide(str(ty))}\n")


def _ast(session: SessionCore, text: str) -> ReplOutput:
    from tilelang.syntax.parser import parse_repl
    from tilelang.syntax.printer import format_ast

    if not text:
        checked = check_session(session.items, session.stmts)
        return ReplOutput(stdout=format_ast(checked.root, checked.result.sources))
    sf = session.new_file(text)
    sink = DiagnosticSink()
    parsed = parse_repl(sf, sink)
    if parsed is None or sink.has_errors:
        return ReplOutput(stderr=session.render(sink.diagnostics), ok=False)
    nodes = [*parsed.items, *parsed.body.stmts] + (
        [parsed.body.tail] if parsed.body.tail else []
    )
    return ReplOutput(stdout="".join(format_ast(n, session.display) for n in nodes))


def _emit(session: SessionCore, stage: str, kernel: str | None) -> ReplOutput:
    """`:ir`/`:llvm`/`:ptx`: the instances that ran in this session (as
    lowered for those launches), else those the program's launches fix."""
    kernels = _kernels_ran(session, kernel)
    checked = None
    if not kernels:
        checked = check_session(session.items, session.stmts)
        if checked.errors:
            return session.reject(checked)
        from tilelang import driver
        from tilelang.ir.lower import lower_kernel

        known = sorted(checked.program.kernels) if checked.program else []
        if kernel is not None and kernel not in known:
            listing = ", ".join(f"`{k}`" for k in known if not is_hidden(k)) or "none yet"
            return ReplOutput(
                stderr=f"error: no kernel `{kernel}` (kernels: {listing})\n", ok=False
            )
        for name, inst in driver.kernel_instances(checked.program):
            if kernel is None or name == kernel:
                kernels.append(lower_kernel(checked.program, name, inst, None))
    if not kernels:
        what = f"`{kernel}`" if kernel else "a kernel"
        return ReplOutput(
            stdout=f"(launch {what} first: its const generics come from the launch)\n"
        )
    if stage == "ir":  # as `tilec emit --stage ir` prints it: the warps that run
        from tilelang import driver
        from tilelang.diagnostics.model import TileError

        try:
            texts = [driver.ir_as_run(k).rstrip("\n") for k in kernels]
        except TileError as e:  # a `TILEC_*` switch the warps read, set to a value it does not take (E0604)
            return ReplOutput(stderr=session.render(list(e.diagnostics)), ok=False)
        return ReplOutput(stdout="\n".join(texts) + "\n")
    from tilelang import backend

    emit = backend.emit_llvm_diagnostics if stage == "llvm" else backend.emit_ptx_diagnostics
    sink = DiagnosticSink()
    texts = []
    for k in kernels:
        text = emit(k, sink)
        if text is not None:
            texts.append(str(text).rstrip("\n"))
    if sink.has_errors:
        sources = checked.result.sources if checked is not None else SourceMap()
        synth = checked.synth if checked is not None else Synth()
        return ReplOutput(
            stderr=session.render([session.map_back(d, sources, synth) for d in sink.diagnostics]),
            ok=False,
        )
    return ReplOutput(stdout="\n".join(texts) + "\n")


def _kernels_ran(session: SessionCore, kernel: str | None) -> list[Any]:
    if session._runtime is None:
        return []
    out: list[Any] = []
    seen: set[int] = set()
    for key, (kir, _prepared) in session._runtime.kernels.items():
        if (kernel is None or key[0] == kernel) and id(kir) not in seen:
            seen.add(id(kir))
            out.append(kir)
    return out


def _load(session: SessionCore, path: str) -> ReplOutput:
    from tilelang.syntax import ast
    from tilelang.syntax.parser import parse

    if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":  # `:load "my dir/x.tile"`, as a shell takes it
        path = path[1:-1]
    if not path:
        return ReplOutput(stderr="error: `:load` needs a file name\n", ok=False)
    path = os.path.expanduser(path)
    try:
        text = read_source(path)  # bounded, UTF-8 or a reason in words
    except OSError as e:
        return ReplOutput(stderr=f"error: {read_error(path, e)}\n", ok=False)
    sf = session.display.add(path, text)
    sink = DiagnosticSink()
    module = parse(sf, sink)
    if sink.has_errors:
        return ReplOutput(stderr=session.render(sink.diagnostics), ok=False)
    base = str(Path(path).resolve().parent)
    new = [
        item_of(sf, it, base)
        for it in module.items
        if not (isinstance(it, ast.FnDecl) and it.name.name == "main")
    ]
    names = {it.name for it in new if it.name is not None}
    old_items, old_stmts, redefined = session.redefine(names)
    checked = check_session(old_items + new, old_stmts)
    if checked.errors:
        return session.reject(checked)
    session.items, session.stmts = old_items + new, old_stmts
    if redefined:
        session.rekey(redefined)
    return ReplOutput(
        stdout=f"loaded {len(new)} item{'s' if len(new) != 1 else ''} from {path}\n",
        stderr=session.warnings_of(checked, sf.id),
    )


def _wrap(text: str, indent: str) -> str:
    import textwrap

    return textwrap.fill(text, width=79, initial_indent=indent, subsequent_indent=indent)
