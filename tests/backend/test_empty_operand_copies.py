"""A GEMM operand with no elements, on the pipelines whose copies read an element in place of one outside the
tensor (hrev18): sm_80's cp.async ring copying element by element (rows that are not whole 16-byte chunks), the
FMA ring on it (f32/f64/integers), and the Hopper pipeline's copy producer (an operand TMA cannot describe)
redirected each outside element's load to the tensor's element (0, 0) and zeroed the value. A tensor of no
elements has no element (0, 0): a PyTorch or CuPy array of none has no memory at all (address 0), so the
launch read memory nothing owns (llsim: "load outside buffer 'b' (0 bytes)"). An empty operand now reads
nothing; every engine gives the product of zeros (the interpreter's edge rule)."""

from __future__ import annotations

import io

import llsim
import pytest

import tilelang.run as run

GEMM = """
#[hints(stages = 3)]
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ACC, [BM, BN]>, a: &Tensor<T, [?, ?]>,
                                                        b: &Tensor<T, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<ACC>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc + (1 as ACC));
}

fn main() {
    let a = ones::<T>([75, K]);
    let b = ones::<T>([KB, 21]);
    let mut c = zeros::<ACC>([75, 21]);
    g::<64, 64, 32>(c.partition([64, 64]), &a, &b).sync();
    print(c.sum());
}
"""


def _printed(src: str, device: object, monkeypatch: pytest.MonkeyPatch) -> str:
    out = io.StringIO()
    if device is not None:
        monkeypatch.setattr(run, "make_device", lambda choice, o: device)
    run.execute(src, "cpu", out=out, name="g.tile")
    return out.getvalue()


@pytest.mark.parametrize(("arch", "t", "acc", "k", "kb"), [
    ("sm_80", "f16", "f32", 0, 0),  # K = 0: both operands empty (sm_80's ring, element copies)
    ("sm_80", "f16", "f32", 64, 0),  # B of no rows under a K loop of two steps
    ("sm_90a", "f16", "f32", 64, 0),  # the Hopper pipeline's copy producer (B's rows of 42 bytes)
    ("sm_80", "f32", "f32", 0, 0),  # the FMA ring
    ("sm_90a", "i64", "i64", 64, 0),
], ids=["sm80_k0", "sm80_b_empty", "hopper_copy_producer", "fma_f32_k0", "fma_i64_b_empty"])
def test_an_empty_operand_is_read_as_zeros_without_a_load(arch, t, acc, k, kb, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    src = GEMM.replace("ACC", acc).replace("<T,", f"<{t},").replace("::<T>", f"::<{t}>")
    src = src.replace("[KB, 21]", f"[{kb}, 21]").replace("[75, K]", f"[75, {k}]")
    want = _printed(src, None, monkeypatch)
    assert want.strip() == str(75 * 21) + (".0" if acc.startswith("f") else "")
    assert _printed(src, llsim.sim_runtime_device(arch), monkeypatch) == want
