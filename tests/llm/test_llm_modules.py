"""`std::llm` is split by concern into `std/llm/{gemv,sampling,attention,
prefill,queue,stream,hybrid,rows}.tile`; `std/llm.tile` imports their kernels (and
`std::attention::decode_combine`, `Plan.mg`'s merge) so that the engine
loads one module. Each file stays under 1,000 lines (the rule the Python
modules keep), and every kernel of a submodule is callable from the root
(a kernel added to a submodule but not imported would be missing from
`load_kernels()`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import load_kernels  # noqa: E402

STD = ROOT / "stdlib" / "std"
PARTS = sorted((STD / "llm").glob("*.tile"))


def test_the_modules_are_split_by_concern_and_short() -> None:
    assert [p.stem for p in PARTS] == ["attention", "gemv", "hybrid", "prefill", "queue", "rows", "sampling", "stream"]
    for p in [STD / "llm.tile", *PARTS]:
        n = len(p.read_text().splitlines())
        assert n <= 1000, f"{p.relative_to(ROOT)} has {n} lines (at most 1,000): split it by concern"


def test_the_root_module_calls_every_kernel_of_its_parts() -> None:
    defined = {m for p in PARTS for m in re.findall(r"^kernel fn (\w+)", p.read_text(), re.M)}
    # the one-file module's 27, `gemv_stream`, std::llm::queue's 3, `rms_gemv_rope`, `attn_decode_ring_pre`,
    # `kv_append_pre`, `gemv_add_hybrid`, std::llm::rows' 4 (2 on a queue, 2 on the static walk),
    # `attn_decode_ring_w8`, `combine_rows`, `argmax_fold`, `argmax_wide`, `attn_decode_ring_fold`, `rms_gemv_kv`
    assert len(defined) == 45
    assert not re.search(r"^kernel fn", (STD / "llm.tile").read_text(), re.M)
    assert set(load_kernels().kernels) == defined | {"decode_combine"}
