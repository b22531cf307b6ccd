"""The ownership rules at run time, for callers the static checker cannot see.

The Python API (BRIEF §7: call a `.tile` file's kernels on NumPy, PyTorch or
CuPy arrays) launches kernels on memory that no Tile program names, so the
rules of BRIEF §6 are enforced when the call happens instead. `BorrowTracker`
keeps the launches in flight and the memory each one reads and writes, and
raises a `TileError` carrying the same codes as the static checker:

    tracker = BorrowTracker()
    tok = tracker.launch("add", writes=[Region.of(z)], reads=[Region.of(x), Region.of(y)],
                         mutable_unpartitioned=[])        # E0301/E0303/E0305/E0309
    tracker.access(Region.of(z), write=False, what="read")  # E0305 while `tok` runs
    tracker.wait(tok)

A `Region` is a byte range `[start, start + nbytes)` of one address space
(`Region.of(array)` reads NumPy's `__array_interface__`, or anything with a
`data_ptr()`/`nbytes`); two regions conflict when they overlap. `sync=True`
checks a launch without keeping it in flight.

Invariant: the tracker never lets two in-flight launches write overlapping
memory, nor a host access touch memory an in-flight launch writes (or, for a
write, reads). It does no I/O and imports nothing heavy.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes import ownership as codes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.frozen import frozen


@frozen(eq=True)
class Region:
    start: int
    nbytes: int
    name: str = "tensor"

    @staticmethod
    def of(obj: Any, name: str = "tensor") -> Region:
        """The memory of a NumPy-like array (or a torch/cupy tensor)."""
        iface = getattr(obj, "__array_interface__", None) or getattr(
            obj, "__cuda_array_interface__", None
        )
        if iface is not None:
            start = int(iface["data"][0])
        elif hasattr(obj, "data_ptr"):
            start = int(obj.data_ptr())
        else:
            raise TypeError(f"cannot find the memory of {type(obj).__name__}")
        nbytes = int(getattr(obj, "nbytes", 0) or obj.numel() * obj.element_size())
        return Region(start, nbytes, name)

    def overlaps(self, other: Region) -> bool:
        if self.nbytes == 0 or other.nbytes == 0:
            return False
        return self.start < other.start + other.nbytes and other.start < self.start + self.nbytes


@frozen(eq=True)
class _InFlight:
    token: int
    kernel: str
    writes: tuple[Region, ...]
    reads: tuple[Region, ...]


@dataclass(slots=True)
class BorrowTracker:
    inflight: dict[int, _InFlight] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def launch(
        self,
        kernel: str,
        writes: Iterable[Region],
        reads: Iterable[Region] = (),
        *,
        sync: bool = False,
        mutable_unpartitioned: Iterable[str] = (),
    ) -> int:
        """Check a launch of `kernel`; keep it in flight unless `sync`. Returns
        its token for `wait`. `mutable_unpartitioned` names `&mut` arguments the
        caller passed as whole tensors rather than partitions (E0301)."""
        writes, reads = tuple(writes), tuple(reads)
        for name in mutable_unpartitioned:
            self._fail(
                Diagnostic.error(
                    codes.MUT_TENSOR_WITHOUT_PARTITION,
                    f"mutable tensor `{name}` passed to kernel `{kernel}` without a partition",
                ).with_help("pass a partition of it, so that each block writes one tile")
            )
        args = [(r, True) for r in writes] + [(r, False) for r in reads]
        for j, (b, bw) in enumerate(args):
            for a, aw in args[:j]:
                if (aw or bw) and a.overlaps(b):
                    self._fail(
                        Diagnostic.error(
                            codes.CONFLICTING_BORROWS_IN_LAUNCH,
                            f"`{b.name}` and `{a.name}` share memory and one launch of "
                            f"`{kernel}` would write it through one of them",
                        ).with_help("pass a copy, or separate arrays")
                    )
        for r in writes:
            self._check(r, True, f"the launch of `{kernel}`", launch=kernel)
        for r in reads:
            self._check(r, False, f"the launch of `{kernel}`", launch=kernel)
        token = next(self._ids)
        if not sync:
            self.inflight[token] = _InFlight(token, kernel, writes, reads)
        return token

    def start(self, kernel: str, writes: tuple[Region, ...], reads: tuple[Region, ...]) -> int:
        """`launch` for a launch whose own arguments were checked against each
        other when the call was made (the Python API's E0303 check): checks
        it against the launches in flight only, and keeps it in flight."""
        if self.inflight:
            for r in writes:
                self._check(r, True, f"the launch of `{kernel}`", launch=kernel)
            for r in reads:
                self._check(r, False, f"the launch of `{kernel}`", launch=kernel)
        token = next(self._ids)
        self.inflight[token] = _InFlight(token, kernel, writes, reads)
        return token

    def wait(self, token: int) -> None:
        """The launch has finished; waiting twice is fine."""
        self.inflight.pop(token, None)

    def access(self, region: Region, *, write: bool, what: str = "access") -> None:
        """A host read or write of `region` (or a move, a free: `write=True`)."""
        self._check(region, write, what, launch=None)

    def _check(self, r: Region, write: bool, what: str, *, launch: str | None) -> None:
        for f in self.inflight.values():
            if any(r.overlaps(w) for w in f.writes):
                if launch is not None and write:
                    msg = f"two launches in flight at once would both write `{r.name}`"
                    code = codes.CONCURRENT_WRITES
                else:
                    msg = f"{what} of `{r.name}` while the launch of `{f.kernel}` may still be writing it"
                    code = codes.USE_WHILE_IN_FLIGHT
                self._fail(
                    Diagnostic.error(code, msg).with_help(
                        f"wait for the launch of `{f.kernel}` first"
                    )
                )
            if write and any(r.overlaps(x) for x in f.reads):
                self._fail(
                    Diagnostic.error(
                        codes.USE_WHILE_IN_FLIGHT,
                        f"{what} writes `{r.name}` while the launch of `{f.kernel}` may "
                        "still be reading it",
                    ).with_help(f"wait for the launch of `{f.kernel}` first")
                )

    @staticmethod
    def _fail(d: Diagnostic) -> None:
        raise TileError(d)
