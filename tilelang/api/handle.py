"""`Handle`: a started kernel call (`Operation.launch()`, `api/operation.py`).
`.wait()` waits for it, copies results back where the engine needed copies,
and ends its registration among the launches in flight (`engines._PENDING`);
dropped without a wait, it waits in its finaliser and says so. Split from
`operation.py` (at 998 lines), which re-exports it; the native launcher
(`operation._install_methods`) may make its finaliser a C method.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Protocol

import numpy as np

from tilelang.api.borrowed import thaw as _thaw
from tilelang.api.engines import _LOCK, _PENDING


class Started(Protocol):
    """What a handle needs of its operation (`operation.Operation`)."""

    @property
    def kernel(self) -> Any: ...

    def _finish(self, token: int, stream: Any, writeback: Any, raw: int | None) -> None: ...


class Handle:
    """A started operation. `.wait()` waits for it, copies results back where
    the engine needed copies, and ends its registration among the launches in
    flight; waiting twice is fine. The operation (and with it the caller's
    arrays) stays referenced while the handle lives."""

    __slots__ = ("_end", "_frozen", "_raw", "_stream", "_token", "_writeback", "done", "operation")

    def __init__(
        self,
        op: Started,
        token: int,
        stream: Any,
        writeback: Any,
        raw: int | None = None,
        end: Any = None,
    ) -> None:
        self.operation = op
        self._token = token
        self._stream = stream
        self._writeback = writeback  # (host array, device tensor) pairs to copy back
        self._raw = raw
        self._end = end  # the one-function launch's wait (`_make_fast`), or None
        self._frozen: list[np.ndarray] = []  # NumPy arrays made read-only until the wait
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        self.done = True
        try:
            frozen = self._frozen
        except AttributeError:  # made by the native launcher (`FastPlan`): no NumPy arrays
            frozen = None
        if frozen:
            _thaw(frozen)  # first: the wait may copy results into them
            self._frozen = []
        end = self._end
        if end is not None:
            end(self._token, self._stream, self._raw)
        else:
            self.operation._finish(self._token, self._stream, self._writeback, self._raw)

    def _end_borrows(self) -> None:
        """Done as far as the host is concerned without waiting: for a launch
        on PyTorch's current stream made by a PyTorch operator, whose every
        later use through PyTorch is ordered after it (`torch_ops.py`).
        A launch through copies (host arrays on a GPU module) has results to
        copy back, which only its wait does: that one is waited for."""
        if self.done:
            return
        if getattr(self, "_writeback", None):  # (dropped, the `&mut` arrays' results were lost)
            self.wait()
            return
        self.done = True
        if getattr(self, "_frozen", None):
            _thaw(self._frozen)
            self._frozen = []
        with _LOCK:
            _PENDING.pop(self._token, None)

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<handle of {self.operation.kernel.__name__} ({state})>"

    def __del__(self) -> None:
        if getattr(self, "done", True):
            return
        try:
            warnings.warn(
                f"a handle of kernel `{self.operation.kernel.__name__}` was dropped "
                "without `.wait()`; waiting for it now",
                ResourceWarning,
                stacklevel=2,
            )
            self.wait()
        except Exception as e:  # nothing may be raised from a finaliser: said, not dropped
            with contextlib.suppress(Exception):
                warnings.warn(
                    f"the wait for a dropped handle of kernel `{self.operation.kernel.__name__}` "
                    f"failed: {e}",
                    RuntimeWarning,
                    stacklevel=2,
                )
