"""`tilec` on round 4's programs (huser, 2026-12-05), as a user drives it:
`check -D warnings` of every `s*.tile` at once, `run --sanitize` of the
halo stencils and the gathers (whose `load_padded` reads wholly outside the
tensor are meant: the sanitizer warned E0734 of them and told the user to
use `load_padded`), `emit` of one kernel, and a scripted
`tilec repl` session with a generic host function launching a generic
kernel (`zeros::<T>` was f32 there too) and a bf16 scalar (shown as `1.0078125`)."""

from __future__ import annotations

from pathlib import Path

from userprog import tilec_at_root

P = Path(__file__).parent / "programs"


def test_check_every_program_denying_warnings() -> None:
    files = sorted(str(p) for p in P.glob("s*.tile"))
    assert len(files) == 10
    r = tilec_at_root("check", "-D", "warnings", *files)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""


def test_the_sanitizer_is_quiet_on_padded_halo_reads() -> None:
    for name, out in (("s07_stencil_halo", "[3, 20] -1.0"), ("s08_gather_scatter", "742.5 949.5 726.0")):
        r = tilec_at_root("run", "--sanitize", str(P / f"{name}.tile"))
        assert r.returncode == 0, r.stderr
        assert out in r.stdout
        assert "warning" not in r.stderr and "E0734" not in r.stderr, r.stderr


def test_emit_of_one_kernel() -> None:
    f = str(P / "s10_online_softmax.tile")
    want = {"ir": "load @x", "ptx": ".entry"}  # (every stage of every example: tests/cli)
    for stage, needle in want.items():
        r = tilec_at_root("emit", f, "--stage", stage, "--kernel", "softmax_online")
        assert r.returncode == 0, (stage, r.stderr)
        assert needle in r.stdout, stage


REPL = """\
fn make<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { zeros::<T>([2]) + (x.max() as T) }
make(&arange::<u8>(5))
make::<i64>(&arange::<i64>(3))
fn bad<T>(n: i32) -> i32 { n }
bad(3)
kernel fn dbl<T, const B: i32>(z: &mut Tensor<T, [B]>) { z.store(z.load() * (2 as T)); }
fn run<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { let mut z = x.clone(); dbl(z.partition([4])).sync(); z }
run(&arange::<i16>(6))
run(&arange::<f16>(3))
1.01 as bf16
:load tests/user/programs/s04_int_types_generic.tile
let r = run::<u8, 8>(&(arange::<u8>(13) * 37u8), &(arange::<u8>(13) % 3u8));
r.0
:ptx bits
:quit
"""


def test_a_repl_session_with_a_generic_host_function() -> None:
    r = tilec_at_root("repl", stdin=REPL)
    out = r.stdout + r.stderr
    assert "Traceback" not in out and "internal compiler error" not in out
    assert "Tensor<u8, [2]> (checked as Tensor<u8, [?]>) = [4, 4]" in out
    assert "Tensor<i64, [2]> (checked as Tensor<i64, [?]>) = [2, 2]" in out
    assert "error[E0215]: cannot infer the type parameter `T` of `bad`" in out and "`bad::<f32>(..)`" in out
    assert "Tensor<i16, [6]> (checked as Tensor<i16, [?]>) = [ 0,  2,  4,  6,  8, 10]" in out
    assert "Tensor<f16, [3]> (checked as Tensor<f16, [?]>) = [0.0, 2.0, 4.0]" in out
    assert "bf16 = 1.01\n" in out  # bf16's shortest digits, not the float32 1.0078125 it is held in
    assert "[0, 3, 3, 6, 3, 5, 6, 2, 2, 4, 4, 5, 5]" in out  # s04's popcounts of 37 i mod 256
    assert ".entry" in out and ".visible .entry bits" in out  # `:ptx bits`: the instance `run` launched


def test_doc_of_another_library_s_method_says_how_tile_spells_it() -> None:
    # `tilec doc astype` said "did you mean `types`?", `tilec doc mean` only that there is no entry
    for name, phrase in (("mean", "`t.sum(k) / n`"), ("astype", "convert with `as`")):
        r = tilec_at_root("doc", name)
        assert r.returncode == 1 and f"Tile has no `{name}`" in r.stderr and phrase in r.stderr, (name, r.stderr)
    from tilelang import doc
    from tilelang.sema.call_habits import method_habit

    assert doc.entry("cumsum") is not None and method_habit("cumsum") is None  # a real entry is printed first
    assert "`minimum(maximum(t, lo), hi)`" in (method_habit("clamp") or "")


def test_the_repl_shows_the_code_of_an_instance_emit_cannot() -> None:
    # `tilec emit` has no instance of s04's kernel (launched only from a generic function); its help
    # points at the REPL, which compiles the instance the function launched (the session above ran it)
    emit = tilec_at_root("emit", str(P / "s04_int_types_generic.tile"), "--stage", "ptx")
    assert emit.returncode == 1 and "`:ptx KERNEL`" in emit.stderr
