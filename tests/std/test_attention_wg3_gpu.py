"""`std::attention`'s prefill at 192 x 128 (three consumer warpgroups, `TILEC_PREFILL_WG3`'s blocks at D = 64;
hattn9) on the GPU against PyTorch's scaled_dot_product_attention in f32: S not a multiple of 192 (the last query
block's rows past the end), causal with S_q != S_k (rows that see no key; S_q < S_k), grouped query heads, the
log-sum-exp output, f16 and bf16, and launches of enough tiles that each CTA walks several (the causal walk's
pairs and its tail variant: an even number of query blocks; the once variant: an odd number)."""

from __future__ import annotations

import pytest
from test_attention_gpu import check_prefill

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

CASES = [
    # dtype, BH, BHkv, S_q, S_k, D, causal
    ("bf16", 16, 16, 777, 777, 64, False),
    ("f16", 16, 4, 513, 513, 64, True),  # GQA
    ("f16", 4, 4, 900, 333, 64, True),  # S_q > S_k: early rows see nothing
    ("bf16", 4, 1, 300, 1100, 64, True),  # S_q < S_k
    ("f16", 512, 512, 1024, 1024, 64, True),  # 6 query blocks a head (even: pairs, the tail variant), 8 tiles a CTA
    ("bf16", 300, 300, 500, 500, 64, True),  # 3 query blocks a head (odd: the once variant)
    ("f16", 400, 100, 1000, 1000, 64, False),  # GQA, several whole tiles a CTA, the last round whole
]


@pytest.fixture(autouse=True)
def _cuda():  # type: ignore[no-untyped-def]
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_flash_attention_at_192_rows_matches_sdpa(case):  # type: ignore[no-untyped-def]
    check_prefill(case, 192, 128)
