"""Graphs of the decode engine's launches: `capture` records them with
`tilelang.graph()` (a CUDA graph on the GPU), `TorchGraph` with
`torch.cuda.graph` (`TileQwen3(graph_api="torch")`, to compare the two)."""

from __future__ import annotations

import warnings
from typing import Any


def capture(eng: Any, ops: list[Any]) -> Any:
    """One graph for `ops` (`tilelang.graph()`: recorded once, a CUDA
    graph on the GPU); None, with a warning, where the API has none, and
    the launches then run one by one."""
    graph = getattr(eng.tl, "graph", None)
    if graph is None:
        warnings.warn(
            "this tilelang has no `tilelang.graph()`: the step runs launch by launch",
            RuntimeWarning,
            stacklevel=4,
        )
        eng.graph_mode = False
        return None
    with graph() as g:
        for op in ops:
            op.launch()
    return g


class TorchGraph:
    """Decode steps captured by PyTorch (`torch.cuda.graph`): a Tile launch
    made while PyTorch captures goes to the capturing stream and waits for
    nothing. `replay()` launches the graph on PyTorch's current stream and
    returns (what reads results, `be.read`, waits on that stream)."""

    def __init__(self, eng: Any, ops: list[Any], steps: int = 1) -> None:
        import torch

        self.operations = list(ops) * steps
        self.replays = 0
        # Every kernel compiled and loaded before the capture (a module load
        # cannot be captured): one step run as usual, then the token and the
        # position it advanced put back (what else it wrote, the step writes
        # again identically).
        tok, pos = eng.be.read(eng.tok).copy(), eng.be.read(eng.pos).copy()
        for op in ops:
            op.sync()
        eng.be.write(eng.tok, tok)
        eng.be.write(eng.pos, pos)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            for op in self.operations:
                op.sync()  # captured: no wait, no allocation
        torch.cuda.synchronize()

    def replay(self, times: int = 1) -> None:
        for _ in range(times):
            self.graph.replay()
        self.replays += times
