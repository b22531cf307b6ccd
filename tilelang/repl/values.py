"""The session's values as the REPL shows and keeps them.

`show_value` is an expression entry's shown value (its type with the run-time
shape and dtype, then the value; coloured with rich when colour is on),
`describe` a host value in words (operations and handles say what they are
waiting for). `move_tensors` moves every tensor reachable from the session's
variables to another device, in place; `wait_new_handles` waits for the
launches a failed entry started. Nothing here prints.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from typing import Any

from tilelang.diagnostics.model import Diagnostic


def show_value(value: Any, ty: str, color: bool) -> str:
    """The shown value: its type (with shape and dtype), then its value."""
    import numpy as np

    from tilelang.runtime.host_ops import format_value
    from tilelang.runtime.tensor import Partition, Tensor

    if isinstance(value, Tensor):
        header = value.type_name()  # the run-time shape and dtype
        body = format_value(value)[len(header) :].lstrip()
        extra = f"(checked as {ty})" if "?" in ty else ""
    elif isinstance(value, Partition):
        header = value.type_name()
        body = f"{value.tensor.type_name()} in tiles of {list(value.tile)}, grid {list(value.grid)}"
        extra = ""
    elif ty == "bf16" and isinstance(value, (float, np.floating)):
        from tilelang.dtypes import DType
        from tilelang.interp.printing import format_scalar

        # held as a float32: shown in bf16's shortest digits, as a bf16 tensor's elements are
        header, body, extra = ty, format_scalar(value, DType.BF16), ""
    else:
        header, body, extra = default_literals(ty), describe(value), ""
    sep = "\n" if "\n" in body else " "
    if not color:
        return f"{header}{extra and ' ' + extra} ={sep}{body}\n"
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=200)
    text = Text(header, style="bold cyan")
    if extra:
        text.append(" " + extra, style="dim")
    text.append(f" ={sep}")
    text.append(body)
    console.print(text, soft_wrap=True, highlight=False)
    return buf.getvalue()


def wait_new_handles(runtime: Any, before: set[int]) -> None:
    """After a failed entry: wait for every launch it started and did not
    wait for, wherever its handle was (a variable, an inner block, a shadowed
    name, a temporary): the runtime knows them all (`Runtime.inflight`).
    The entry's bindings are rolled back, so the checker no longer knows those
    launches are in flight; they must be over before a later entry touches
    their tensors. `before`: the launches in flight before the entry ran."""
    import contextlib

    from tilelang.diagnostics.model import TileError

    for handle in runtime.inflight.pending():
        if id(handle) not in before:
            # The entry already failed; its first error is the one shown.
            with contextlib.suppress(TileError):
                handle.wait()


def reachable(values: Iterable[Any]) -> Iterator[Any]:
    """Every value reachable from `values`, once each: through partitions (to
    their tensor), operations (to their bound arguments), handles, graphs,
    lists and tuples."""
    from tilelang.runtime.launch import Graph, Handle, Operation
    from tilelang.runtime.tensor import Partition

    seen: set[int] = set()
    todo = list(values)[::-1]
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        yield v
        match v:
            case Partition():
                todo.append(v.tensor)
            case Operation():
                todo.extend(reversed(v.bound.args))
            case Handle():
                todo.append(v.op)
            case Graph():
                todo.extend(reversed(v.ops))
            case list() | tuple():
                todo.extend(reversed(v))
            case _:
                pass


def move_tensors(values: Any, old: Any, new: Any) -> int:
    """Move every tensor reachable from `values` from device `old` to `new`,
    in place (so partitions, operations and graphs that hold it follow)."""
    import numpy as np

    from tilelang.runtime.launch import Graph
    from tilelang.runtime.tensor import Tensor

    moved = 0
    for v in reachable(values):
        if isinstance(v, Tensor) and v.device is old:
            v.storage = new.upload(np.array(v.numpy(), copy=True))
            v.device = new
            moved += 1
        elif isinstance(v, Graph):
            v._captured = None  # a captured CUDA graph belongs to the old device
    return moved


def describe(value: Any) -> str:
    """A host value as the REPL shows it (operations and handles in words)."""
    from tilelang.runtime.host import FnRef
    from tilelang.runtime.host_ops import format_value
    from tilelang.runtime.launch import Graph, Handle, Operation

    match value:
        case FnRef(decl=decl):
            # a function or kernel named at the prompt without a call (it showed the dataclass's repr, its whole
            # syntax tree): what the name is, how to call it, where its text is
            name = re.sub(r"__[0-9]+$", "", decl.name.name)
            if decl.is_kernel:
                return (f"the kernel `{name}` (a call builds a launch: `{name}(z.partition([..]), ..).sync()`; "
                        f"`:help {name}` shows it)")
            return f"the function `{name}` (call it: `{name}(..)`; `:help {name}` shows it)"
        case Operation(runs=0):
            return f"`{value.name}` not run yet (`.sync()` runs it, `.launch()` starts it)"
        case Operation(runs=runs):
            return (f"`{value.name}`, run {runs} time{'s' if runs != 1 else ''} (`.sync()` runs it again, `.launch()` "
                    "starts it again)")
        case Handle():
            state = "done" if value.done else "in flight until `.wait()`"
            return f"a launch of `{value.op.name}`, {state}"
        case Graph():
            n = len(value.ops)
            r = value.replays
            return f"{n} operation{'s' if n != 1 else ''}, replayed {r} time{'s' if r != 1 else ''}"
        case _:
            return format_value(value)


def is_hidden(name: str) -> bool:
    """A replaced item's hidden name (`sq__1`, see `SessionCore.redefine`)."""
    return re.fullmatch(r".+__[0-9]+", name) is not None


def default_literals(ty: str) -> str:
    """An untyped literal's type as the value has it (BRIEF: `i32`, `f32`)."""
    return ty.replace("{integer}", "i32").replace("{float}", "f32")


def device_words(dev: Any) -> str:
    return "GPU" if getattr(dev, "kind", "") == "gpu" else "CPU (the NumPy interpreter)"


def fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def ice_text(e: BaseException) -> str:
    """The short internal-error report (`diagnostics/ice.py`: the innermost
    frames here, the whole trace in a file)."""
    from tilelang.diagnostics.ice import ice_report

    return ice_report(e, context=" with the session and the trace file "
                               "(the session goes on, without this entry)")


def handle_names(errors: list[Diagnostic]) -> list[str]:
    """The handle names in "launch handle `h` is dropped ..." messages."""
    names = []
    for d in errors:
        m = re.search(r"`([^`]+)`", d.message)
        names.append(m.group(1) if m else "a launch")
    return names
