"""Defence in depth at run time: the storage each launch uses, and the
launches still in flight, in the Tile host runtime.

The ownership checker proves that a checked program never runs a launch
that races. `InFlight` checks the same two facts again on the values the
runtime actually holds, before any kernel work, for every `.sync()`,
`.launch()` and graph replay:

  - no two arguments of one launch share storage where one of them is
    written (E0303): a `&mut` partition and a `&` tensor, or two partitions,
    over the same tensor;
  - no argument's storage is written by a launch still in flight (E0309 when
    this launch writes it too, E0305 otherwise), and no storage this launch
    writes is read by one (E0305).

`.launch()` records its handle (`add`), `Handle.wait()` forgets it
(`remove`). Storage is compared by identity (a tensor's `storage` object is
its memory on every device); the cost is O(arguments x launches in flight)
comparisons, a few microseconds. A failure is a `TileError` at the launch
with the earlier launch as a secondary label: it means the checker missed a
path (or the program was run unchecked), never that the user should fix a
different thing than what the message says.

Entry points: `InFlight.check(op)`, `InFlight.add(handle)`,
`InFlight.remove(handle)`, `InFlight.pending()`. The class knows operations
only through their `kernel`, `bound.args` and `span` attributes (a handle
through its `op`), so this module imports nothing of `launch.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes import ownership as codes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.frozen import frozen
from tilelang.runtime.tensor import Partition, Tensor


@frozen(eq=True)
class Use:
    """One tensor argument of a launch: its storage, whether the launch writes
    it (a partition for a `&mut` parameter) and the parameter's name."""

    storage: object
    write: bool
    param: str
    atomic: str = ""  # written with atomics of this one kind only (another such use does not race)


def uses(op: Any) -> list[Use]:
    """`op`'s tensor arguments; a `&` parameter its `unsafe` code writes
    (`op.writes`: atomics, `store_unchecked`) is written, not read."""
    out: list[Use] = []
    writes = getattr(op, "writes", frozenset())
    atomics = getattr(op, "atomics", {})
    for p, a in zip(op.kernel.params, op.bound.args, strict=False):
        name = p.name.name
        if isinstance(a, Partition):
            out.append(Use(a.tensor.storage, True, name))
        elif isinstance(a, Tensor):
            out.append(Use(a.storage, name in writes, name, atomics.get(name, "")))
    return out


def _clash(a: Use, b: Use) -> bool:
    """Two uses of one storage race: one writes it, unless both only update it with
    atomics of the same one kind (atomics of different kinds do not commute)."""
    return a.storage is b.storage and (a.write or b.write) and not (a.atomic and a.atomic == b.atomic)


@dataclass(slots=True)
class InFlight:
    """The launches of one runtime that have not been waited for."""

    # id(handle) -> (the handle, the storage its launch uses)
    handles: dict[int, tuple[Any, list[Use]]] = field(default_factory=dict)
    strict: bool = True  # False under the sanitizer, which decides per element instead
    sanitizer: Any = None  # interp/sanitize.py's Sanitizer: told of each launch and wait

    def check(self, op: Any) -> None:
        mine = uses(op)
        kname = op.kernel.name.name
        for j, b in enumerate(mine):
            for a in mine[:j]:
                if _clash(a, b) and self.strict:
                    first, second = (a, b) if a.write else (b, a)
                    raise TileError(
                        Diagnostic.error(
                            codes.CONFLICTING_BORROWS_IN_LAUNCH,
                            f"this launch of `{kname}` passes one tensor as `{first.param}`, "
                            f"which it writes, and as `{second.param}`",
                        )
                        .primary(op.span, "the two parameters share storage")
                        .note("blocks would read and write the same memory through two parameters")
                        .with_help("pass a copy (`t.clone()`) for the read-only parameter")
                    )
        if not self.strict:
            return
        for handle, theirs in self.handles.values():
            for u in mine:
                for t in theirs:
                    if _clash(u, t):
                        self._conflict(op, kname, u, handle.op, t)

    @staticmethod
    def _conflict(op: Any, kname: str, u: Use, other: Any, t: Use) -> None:
        oname = other.kernel.name.name
        if u.write and t.write:
            d = Diagnostic.error(
                codes.CONCURRENT_WRITES,
                f"this launch of `{kname}` writes `{u.param}`, which a launch of `{oname}` "
                "still in flight also writes",
            )
        elif t.write:
            d = Diagnostic.error(
                codes.USE_WHILE_IN_FLIGHT,
                f"this launch of `{kname}` reads `{u.param}` while a launch of `{oname}` "
                "still in flight writes it",
            )
        else:
            d = Diagnostic.error(
                codes.USE_WHILE_IN_FLIGHT,
                f"this launch of `{kname}` writes `{u.param}` while a launch of `{oname}` "
                "still in flight reads it",
            )
        d = d.primary(op.span, "this launch").secondary(
            other.span, f"launched here as `{t.param}` and not waited for"
        )
        raise TileError(d.with_help(f"wait for the launch of `{oname}` first"))

    def add(self, handle: Any) -> None:
        self.handles[id(handle)] = (handle, uses(handle.op))
        if self.sanitizer is not None:
            self.sanitizer.launched(handle)

    def remove(self, handle: Any) -> None:
        self.handles.pop(id(handle), None)
        if self.sanitizer is not None:
            self.sanitizer.waited(handle)

    def pending(self) -> list[Any]:
        """The handles of the launches still in flight, oldest first."""
        return [h for h, _ in self.handles.values()]
