"""Where the decode engine's buffers live: NumPy arrays for the CPU
interpreter (`Numpy`), torch CUDA tensors for the GPU (`Torch`). Both give
the engine (`engine.TileQwen3`) the same small interface: allocate, upload a
weight, read, write, wait."""

from __future__ import annotations

from typing import Any

import numpy as np
from model import to_numpy


class _Numpy:
    """Buffers on the CPU: NumPy arrays (bf16 values kept in float32)."""

    name = "numpy"

    def zeros(self, shape: tuple[int, ...], kind: str) -> np.ndarray:
        return np.zeros(shape, {"f32": np.float32, "bf16": np.float32, "i32": np.int32}[kind])

    def weight(self, a: Any) -> np.ndarray:
        return np.ascontiguousarray(to_numpy(a))

    def concat(self, parts: list[Any]) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate([to_numpy(p) for p in parts], axis=0))

    def stack(self, parts: list[Any]) -> np.ndarray:
        return np.ascontiguousarray(np.stack([to_numpy(p) for p in parts], axis=0))

    def table(self, a: np.ndarray) -> np.ndarray:
        return a

    def read(self, a: Any) -> np.ndarray:
        return np.array(a)

    def write(self, a: Any, value: Any) -> None:
        a[...] = value

    def memory(self) -> int:
        return 0

    def sync(self) -> None:
        pass


class _Torch:
    """Buffers on a CUDA device: torch tensors (bf16 as torch.bfloat16)."""

    name = "torch"

    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        self.device = device

    def zeros(self, shape: tuple[int, ...], kind: str) -> Any:
        t = self.torch
        dt = {"f32": t.float32, "bf16": t.bfloat16, "i32": t.int32}[kind]
        return t.zeros(shape, dtype=dt, device=self.device)

    def weight(self, a: Any) -> Any:
        t = self.torch
        if not isinstance(a, t.Tensor):
            a = t.from_numpy(np.asarray(a, dtype=np.float32))
        return a.to(device=self.device, dtype=t.bfloat16).contiguous()

    def concat(self, parts: list[Any]) -> Any:
        return self.torch.cat([self.weight(p) for p in parts], dim=0).contiguous()

    def stack(self, parts: list[Any]) -> Any:
        return self.torch.stack([self.weight(p) for p in parts], dim=0).contiguous()

    def table(self, a: np.ndarray) -> Any:
        return self.torch.from_numpy(a).to(self.device)

    def read(self, a: Any) -> np.ndarray:
        return a.float().cpu().numpy() if a.dtype == self.torch.bfloat16 else a.cpu().numpy()

    def write(self, a: Any, value: Any) -> None:
        a.copy_(self.torch.as_tensor(np.asarray(value), dtype=a.dtype))

    def memory(self) -> int:
        return int(self.torch.cuda.memory_allocated(self.device))

    def sync(self) -> None:
        self.torch.cuda.synchronize(self.device)
