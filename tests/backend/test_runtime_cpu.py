"""The CUDA runtime's promises that hold without a GPU."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np

from tilelang.runtime import cuda


def test_is_available_answers_without_raising() -> None:
    assert cuda.is_available() in (True, False)


def test_importing_the_backend_imports_no_cuda() -> None:
    code = ("import sys, tilelang.backend, tilelang.runtime.cache; "
            "print(any(m.startswith('cuda') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_buckets_round_up_and_bound_the_waste() -> None:
    for n in (1, 255, 256, 257, 4096, 65537, 10**6, 3 * 2**30):
        b = cuda._bucket(n)
        assert b >= n and b % 256 == 0
        assert b - n <= max(255, n // 8)
    assert cuda._bucket(1000) == cuda._bucket(1024)  # nearby sizes share a free list


def test_packed_args_lay_out_each_parameter() -> None:
    p = cuda.PackedArgs(["ptr", "i32", "f32", "f16", "bool", "i64"], [0x1234, -7, 2.5, 1.0, True, -(2**40)])
    ptrs = (ctypes.c_void_p * 6).from_address(p.address)
    assert ctypes.c_uint64.from_address(ptrs[0]).value == 0x1234
    assert ctypes.c_int32.from_address(ptrs[1]).value == -7
    assert ctypes.c_float.from_address(ptrs[2]).value == 2.5
    assert ctypes.c_uint16.from_address(ptrs[3]).value == int(np.float16(1.0).view(np.uint16))
    assert ctypes.c_uint8.from_address(ptrs[4]).value == 1
    assert ctypes.c_int64.from_address(ptrs[5]).value == -(2**40)
