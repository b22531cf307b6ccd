"""The CUDA runtime's located errors of a launch (`cuda.py` re-exports them): a block's shared memory above
what the card gives one (E0603, `fits_smem`), and a device `assert` that failed (`assert_words` reads a launch's
two error words, `assert_diagnostic` names the assert and, in a tile walk, queue or `last_block` region, the place
it failed at, as the interpreter does; tests/backend/llsim.py reports the simulator's asserts with them too)."""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.source import Span


def fits_smem(info: Any, kernel: str, nbytes: int, span: Span | None) -> None:
    """E0603 where a kernel's block needs more shared memory than this card gives one (the backend plans for
    its target's largest card: sm_80 code runs on sm_86/sm_89 cards of 99 KB, 163 KB on an A100); it was the
    driver's bare CUDA_ERROR_INVALID_VALUE from `cuFuncSetAttribute`."""
    if nbytes <= info.max_smem_optin:
        return
    from tilelang.diagnostics.codes.codegen import GPU_TILE_TOO_LARGE

    diag = Diagnostic.error(GPU_TILE_TOO_LARGE, f"kernel `{kernel}` needs {nbytes} bytes of shared memory a "
                                                f"block, more than the {info.max_smem_optin} this GPU gives one")
    if span is not None:
        diag = diag.primary(span, f"`{kernel}` cannot run on this GPU ({info.name}, {info.arch})")
    raise TileError(diag.note("the CPU interpreter has no such limit: `--device cpu` runs the program").with_help(
        "use smaller tiles (smaller const generics or partition shapes), or fewer pipeline stages "
        "(`#[hints(stages = 2)]`) where the kernel has a loop of loads"))


def assert_words(lo: int, hi: int) -> tuple[int, int]:
    """A launch's two error words -> (the failed assert's number, 0 if none; its place): a
    region's assert writes the place's complement into the second word (`codegen/debug.py`)."""
    return lo & 0xFFFFFFFF, ~hi & 0xFFFFFFFF


def assert_diagnostic(span: Span, message: str, region: str, axis: int, place: int,
                      grid: tuple[int, ...], launch_span: Span | None = None) -> Diagnostic:
    """The error of a device `assert` that failed on the GPU: where an assert in a tile walk,
    queue or `last_block` region failed (`place`, the word after its number), in the words the
    interpreter uses (`ir.describe_place`)."""
    from tilelang.diagnostics.codes.runtime import DEVICE_ASSERT
    from tilelang.ir import nodes as ir

    diag = Diagnostic.error(DEVICE_ASSERT, f"device assertion failed: {message}" if message
                            else "device assertion failed").primary(span, "this `assert` failed on the GPU")
    diag = diag.with_help("the kernel's own `assert` found its condition false for this input: "
                          "check the input or the condition")
    if launch_span is not None:
        # which launch: a sync or graph replay may wait for several
        diag = diag.secondary(launch_span, "in this launch")
    if region:
        diag = diag.note(ir.describe_place(region, axis, ir.unravel_place(place, grid), grid))
    return diag
