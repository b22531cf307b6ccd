"""The host and a kernel give one answer to one expression (hrev round 11).

`&&` and `||` of `bool` tiles are element-wise; of host `bool` tensors they
were refused ("not supported on host tensors", E0204): one rule now, the
tiles' (both sides evaluated, element-wise). The neighbouring rules that
differed (`abs` of `bool`, unsigned negation in generic instances, a host
type's `N / 0`) are `tests/ui/types/abs_of_bool.tile`,
`generic_instance_neg_unsigned.tile`, `tests/soundness/test_generic_host_domain.py`
and `tests/ui/kernel/zero_divisor_host_type.tile`.
"""

from __future__ import annotations

import io

from tilelang.run import execute

SRC = """
kernel fn logic<const B: i32>(z: &mut Tensor<bool, [B]>, a: &Tensor<bool, [?]>, b: &Tensor<bool, [?]>) {
    let x = a.load_like(z);
    let y = b.load_like(z);
    z.store(x && y || !x && true);
}

fn host(a: &Tensor<bool, [?]>, b: &Tensor<bool, [?]>) -> Tensor<bool, [?]> {
    a && b || !a && true
}

fn main() {
    let a = arange::<i32>(8) % 2 == 0;
    let b = arange::<i32>(8) < 5;
    let mut z = zeros::<bool>([8]);
    logic(z.partition([4]), &a, &b).sync();
    print(z);
    print(host(&a, &b));
    print(false && b, b || false);
}
"""


def test_logical_operators_of_host_tensors_are_the_tiles() -> None:
    out = io.StringIO()
    execute(SRC, "cpu", out=out, name="agree.tile")
    kernel, host, rest = out.getvalue().strip().splitlines()
    assert kernel == host == "Tensor<bool, [8]> [ true,  true,  true,  true,  true,  true, false,  true]"
    # a scalar beside a tensor: both sides run, element-wise (no short circuit to a scalar)
    assert rest == ("Tensor<bool, [8]> [false, false, false, false, false, false, false, false] "
                    "Tensor<bool, [8]> [ true,  true,  true,  true,  true, false, false, false]")
