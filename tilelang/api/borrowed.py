"""The caller's NumPy arrays that launches in flight use, made read-only
until their waits (BRIEF §6: nothing else writes what a launch in flight
reads or writes). On the GPU a caller's write would race with the kernel, or
be overwritten by the results copied back at the wait (NumPy arrays on a GPU
module); the CPU interpreter has finished when `.launch()` returns, but
keeps the same rule, so that a program behaves alike on both.

Only the array objects passed are frozen: another view of their memory made
before the launch keeps its own flag (NumPy cannot reach it); a view made
from a frozen array is read-only too. `Operation.launch` freezes,
`Handle.wait` thaws; `frozen_by` tells a call that writes a frozen array
that it may be built (starting it while the launch is in flight is the
in-flight error, E0305/E0309, not E0803 "read-only").
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from tilelang.api.engines import _LOCK

# id -> [the array, how many launches in flight use it]
_FROZEN: dict[int, list[Any]] = {}


def freeze(op: Any) -> list[np.ndarray]:
    """Make `op`'s NumPy arrays read-only (`op` was just launched); the
    arrays to give back to `thaw` at its wait. An array the caller made
    read-only is left alone (and stays so)."""
    objs = op._objs
    return freeze_arrays([objs[i] for i in op._plan.np_slots])


def freeze_arrays(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """`freeze` of these arrays (a host function's while it runs)."""
    out: list[np.ndarray] = []
    with _LOCK:
        for o in arrays:
            entry = _FROZEN.get(id(o))
            if entry is not None and entry[0] is o:
                entry[1] += 1
            elif o.flags.writeable:
                o.flags.writeable = False
                _FROZEN[id(o)] = [o, 1]
            else:
                continue
            out.append(o)
    return out


def thaw(arrays: list[np.ndarray]) -> None:
    """The wait of a launch that froze `arrays`: writeable again once no
    launch in flight uses them."""
    with _LOCK:
        for o in arrays:
            entry = _FROZEN.get(id(o))
            if entry is None or entry[0] is not o:
                continue
            entry[1] -= 1
            if entry[1] <= 0:
                del _FROZEN[id(o)]
                with contextlib.suppress(ValueError):  # its base was made read-only meanwhile
                    o.flags.writeable = True


def frozen_by(value: Any) -> bool:
    """Whether `value` is read-only only because launches in flight use it."""
    with _LOCK:
        entry = _FROZEN.get(id(value))
        return entry is not None and entry[0] is value
