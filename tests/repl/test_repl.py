"""`tilec repl`: the session core (no terminal), piped stdin, and a real TTY."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tileplugin import REPO_ROOT, run_tilec, tilec_env

from tilelang.repl import HELP, ReplSession

KERNEL = """kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + 1.0);
}"""
SETUP = "let a = ones::<f32>([8]);\nlet mut z = zeros::<f32>([8]);"


@pytest.fixture
def session() -> ReplSession:
    return ReplSession(device="cpu")


def launches(session: ReplSession) -> int:
    assert session._runtime is not None
    return int(session._runtime.device.launches)


# ---------------------------------------------------------------- values and state
def test_statements_persist_and_values_show_with_their_type(session: ReplSession) -> None:
    assert session.feed("let x = 40 + 2;").stdout == ""
    assert session.feed("x").stdout == "i32 = 42\n"
    assert session.feed("print(x + 1);").stdout == "43\n"
    assert session.feed("x * 2").stdout == "i32 = 84\n"
    assert session.feed("let y: f32 = 1.5;").ok
    assert session.feed("(x, y)").stdout == "(i32, f32) = (42, 1.5)\n"
    assert session.feed("if x > 3 { 1 } else { 2 }").stdout == "i32 = 1\n"
    assert session.feed("let x = 2.5;").ok  # shadowing, as in a block
    assert session.feed("x").stdout == "f32 = 2.5\n"


def test_a_generic_function_of_a_literal_shows_the_literal_type(session: ReplSession) -> None:
    # hrev (2026-12-04 10:16): `T` only a literal named was left open: `T = 1`
    assert session.feed("fn same<T>(a: T) -> T { a }").ok
    assert session.feed("same(1)").stdout == "i32 = 1\n"
    assert session.feed("same(0.5)").stdout == "f32 = 0.5\n"
    assert session.feed("same(1u8)").stdout == "u8 = 1\n"


def test_tensor_values_show_type_shape_and_dtype(session: ReplSession) -> None:
    session.feed("let mut t = full::<f16>([2, 3], 1.5);")
    assert session.feed("t").stdout == (
        "Tensor<f16, [2, 3]> =\n[[1.5, 1.5, 1.5],\n [1.5, 1.5, 1.5]]\n"
    )
    assert session.feed("t.sum()").stdout == "f16 = 9.0\n"
    assert session.feed("t.shape()").stdout == "Shape<2> = [2, 3]\n"
    p = session.feed("t.partition([2, 2])").stdout
    assert p == "Partition<f16, [2, 2]> = Tensor<f16, [2, 3]> in tiles of [2, 2], grid [1, 2]\n"


def test_a_shape_known_at_run_time_shows_both_views(session: ReplSession, tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    np.save(tmp_path / "r.npy", np.arange(3, dtype=np.int32))
    assert session.feed(f'let r = load_npy("{tmp_path / "r.npy"}");').ok
    out = session.feed("r").stdout
    assert out.startswith("Tensor<i32, [3]> (checked as Tensor<?, ") and out.endswith(
        "= [0, 1, 2]\n"
    )


def test_a_0d_npy_is_0d_in_the_repl(session: ReplSession, tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    np.save(tmp_path / "s.npy", np.int32(7))
    assert session.feed(f'let s = load_npy("{tmp_path / "s.npy"}");').ok
    assert session.feed("s").stdout.startswith("Tensor<i32, []> (checked as Tensor<?, ")
    assert session.feed("s").stdout.endswith("= 7\n")


def test_colour_output_uses_rich_styles() -> None:
    s = ReplSession(color=True)
    out = s.feed("1 + 1").stdout
    assert "\x1b[" in out and "i32" in out and "2" in out


def test_each_entry_runs_once_only_the_new_statements(session: ReplSession) -> None:
    assert session.feed('print("once");').stdout == "once\n"
    assert session.feed(KERNEL).ok
    assert session.feed(SETUP + "\ninc(z.partition([4]), &a).sync();").ok
    assert session.feed("inc(z.partition([4]), &a).sync();").stdout == ""
    # Two launches in two entries: not 1 + 2 as a whole-session replay would do.
    assert launches(session) == 2
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"
    assert launches(session) == 2
    assert session._runtime is not None and len(session._runtime.kernels) == 1  # compiled once


def test_items_functions_and_kernels(session: ReplSession) -> None:
    assert session.feed("fn sq(a: i32) -> i32 { a * a }").ok
    assert session.feed("sq(7)").stdout == "i32 = 49\n"
    assert session.feed(KERNEL).ok
    r = session.feed(SETUP + "\ninc(z.partition([4]), &a).sync();")
    assert r.ok, r.stderr
    assert session.feed("z").stdout == (
        "Tensor<f32, [8]> = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]\n"
    )
    # Items and statements in one entry; a loop as the last statement.
    assert session.feed("const K: i32 = 3;\nfor i in 0..K { print(i); }").stdout == "0\n1\n2\n"


# ---------------------------------------------------------------- errors
def test_errors_point_into_the_entry_and_change_nothing(session: ReplSession) -> None:
    session.feed("let x = 1;")
    bad = session.feed("let y = nope;")
    assert not bad.ok
    assert "error[E0101]" in bad.stderr
    assert "--> <repl-2>:1:9" in bad.stderr
    assert "fn main" not in bad.stderr  # the synthesised glue never shows
    assert "nope" not in session.program_text()
    r = session.feed("let = 3;")
    assert not r.ok and "error[E0" in r.stderr
    r = session.feed("fn main() {}")
    assert not r.ok and "the REPL defines `main` itself" in r.stderr
    r = session.feed("fn f() {}\nfn f() {}")
    assert not r.ok and "`f` is defined twice in this entry" in r.stderr
    assert session.feed("x").stdout == "i32 = 1\n"


def test_run_time_failure_rolls_back_bindings_not_effects(session: ReplSession) -> None:
    session.feed("let x = 1;\nlet mut t = zeros::<f32>([4]);")
    failed = session.feed('let x = 2.5;\nprint("before");\nt += 1.0;\nassert(false, "boom");')
    assert not failed.ok
    assert failed.stdout == "before\n"  # what ran before the failure stays shown
    assert "error[E0710]" in failed.stderr and "--> <repl-2>:4:8" in failed.stderr
    # The binding is rolled back (`x` is the i32 the checker knows) ...
    assert session.feed("x").stdout == "i32 = 1\n"
    # ... but the write into an existing tensor happened (documented).
    assert session.feed("t.sum()").stdout == "f32 = 4.0\n"
    assert "boom" not in session.program_text()


def test_launch_handles_span_entries_and_ownership_holds(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed(SETUP)
    pending = session.feed("let h = inc(z.partition([4]), &a).launch();")
    assert pending.ok and "`h` in flight" in pending.stderr
    assert launches(session) == 1  # it ran now, not when waited for
    racy = session.feed("z.sum()")
    assert not racy.ok
    assert "error[E0305]" in racy.stderr  # read while the launch may still write `z`
    assert "<repl-4>" in racy.stderr  # the launch, in the entry that made it
    assert "E0308" not in racy.stderr  # the handle in flight is not an error
    assert session.feed("let b = a.sum();").ok  # reading `a` is fine: the launch reads it too
    again = session.feed("let h = inc(z.partition([4]), &a).launch();")
    assert not again.ok and "error[E0309]" in again.stderr  # two writers in flight
    assert session.feed("h.wait();").ok
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"
    assert launches(session) == 1


def test_a_let_hiding_a_handle_in_flight_is_refused(session: ReplSession) -> None:
    # A file refuses it at the end of the block (E0308 marking the `let`); the REPL kept the hidden handle in
    # flight, unreachable until `:reset`, and a later read's help said `h.wait()`, which named the new value.
    session.feed(KERNEL)
    session.feed(SETUP)
    assert session.feed("let h = inc(z.partition([4]), &a).launch();").ok
    hidden = session.feed("let h = 5;")
    assert not hidden.ok and "error[E0308]" in hidden.stderr
    assert "this `h` hides the handle" in hidden.stderr and "<repl-4>" in hidden.stderr
    assert "call `h.wait()` before the `let` that hides it" in hidden.stderr
    assert session.feed("h.wait();").ok  # `h` is still the handle: the help leads to a working session
    assert session.feed("let h = 5;").ok
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"


def test_a_failed_entry_waits_for_the_launches_it_started(
    session: ReplSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tilelang.runtime import launch

    waited: list[str] = []
    real_wait = launch.Handle.wait

    def spy(self: launch.Handle) -> None:
        waited.append(self.op.name)
        real_wait(self)

    monkeypatch.setattr(launch.Handle, "wait", spy)
    session.feed(KERNEL)
    session.feed(SETUP + "\nlet earlier = inc(z.partition([4]), &a).launch();")
    session.feed("let mut c = a.clone();")
    r = session.feed('let h = inc(c.partition([4]), &a).launch();\nassert(false, "stop");')
    assert not r.ok and "error[E0710]" in r.stderr
    assert "h" not in session.env  # rolled back, and its launch waited for ...
    assert waited == ["inc"]  # ... but not the earlier one, still in flight
    assert not session.env["earlier"].done


def test_operations_and_handles_are_described(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed(SETUP)
    session.feed("let op = inc(z.partition([4]), &a);")
    out = session.feed(":vars").stdout
    assert "op: Op<inc> = `inc` not run yet (`.sync()` runs it, `.launch()` starts it)" in out
    session.feed("let h = op.launch();")
    assert session.feed("h").stdout == (
        "Handle<inc> = a launch of `inc`, in flight until `.wait()`\n"
    )
    session.feed("h.wait();")
    assert "h: Handle<inc> = a launch of `inc`, done" in session.feed(":vars").stdout


def test_an_operation_that_ran_is_not_shown_as_not_run(session: ReplSession) -> None:
    """After `op.sync()` the REPL showed `op` as "`inc` not run yet" (hfix5's note): an operation can run again,
    and the REPL says how many times it ran (`.sync()` and `.launch()` count, a wait does not)."""
    session.feed(KERNEL)
    session.feed(SETUP)
    session.feed("let op = inc(z.partition([4]), &a);")
    assert session.feed("op.sync();").ok
    assert session.feed("op").stdout == "Op<inc> = `inc`, run 1 time (`.sync()` runs it again, `.launch()` starts it again)\n"
    assert session.feed("let h = op.launch();\nh.wait();").ok
    assert "op: Op<inc> = `inc`, run 2 times (" in session.feed(":vars").stdout
    r = session.feed("op.sync();\nassert(false, \"stop\");")  # the entry fails, the run it made stays done
    assert not r.ok and session.feed("op").stdout.startswith("Op<inc> = `inc`, run 3 times")


def test_a_crash_inside_tilec_is_reported_and_the_session_goes_on(
    session: ReplSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tilelang.runtime import host

    def boom(*args: object, **kw: object) -> None:
        raise RuntimeError("kaboom")

    session.feed("let x = 1;")
    monkeypatch.setattr(host.HostEvaluator, "run_statements", boom)
    r = session.feed("let y = 2;")
    assert not r.ok and "internal compiler error" in r.stderr and "kaboom" in r.stderr
    monkeypatch.undo()
    assert session.feed("x + 1").stdout == "i32 = 2\n"


# ---------------------------------------------------------------- redefinition
def test_redefinition_replaces_for_later_entries_only(session: ReplSession) -> None:
    assert session.feed("fn sq(a: i32) -> i32 { a * a }").ok
    assert session.feed("let y = sq(3);").ok
    assert session.feed("fn sq(a: f32) -> f32 { a * a + 0.5 }").ok
    assert session.feed("sq(2.0)").stdout == "f32 = 4.5\n"
    assert session.feed("y").stdout == "i32 = 9\n"  # still the i32 the old `sq` made
    text = session.program_text()
    assert "let y = sq__1(3);" in text and "fn sq__1(a: i32)" in text
    # A const: a tensor made with the old value keeps its type.
    session.feed("const N: i32 = 4;\nlet w = zeros::<f32>([N]);")
    session.feed("const N: i32 = 8;")
    assert session.feed(":type w").stdout == "w: Tensor<f32, [4]>\n"
    assert session.feed(":type zeros::<f32>([N])").stdout == "zeros::<f32>([N]): Tensor<f32, [8]>\n"
    # Completion does not offer the hidden names.
    assert all("__" not in w for w, _ in session.completions("s"))


def test_redefined_kernel_runs_its_new_body(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed(SETUP + "\ninc(z.partition([4]), &a).sync();")
    assert session.feed(KERNEL.replace("+ 1.0", "+ 10.0")).ok
    assert session.feed("inc(z.partition([4]), &a).sync();").ok
    assert session.feed("z.sum()").stdout == "f32 = 88.0\n"


def test_a_device_function_with_atomics_is_defined_before_its_kernel_and_redefined(session: ReplSession) -> None:
    """A device function entered before any kernel calls it, and its old version once redefined, are checked
    as device code: their atomics were E0211 "only allowed inside a kernel" (hrev27's leftover, fixed hrev29:
    an uncalled function is device code where its body uses what only device code has). The kernel calls the
    newest definition."""
    bump = "fn bump(x: &Tensor<f32, [?]>, v: f32) {{ unsafe {{ atomic_add(x, [0], full::<f32>([1], {})); }} }}"
    kernel = "kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?]>) { bump(x, 1.0); z.store(zeros::<f32>([1])); }"
    for entry in (bump.format("v"), kernel, "let a = zeros::<f32>([1]); let mut z = zeros::<f32>([4]);",
                  "k(z.partition([1]), &a).sync();", bump.format("10.0 * v"), "k(z.partition([1]), &a).sync();",
                  kernel, "k(z.partition([1]), &a).sync();"):
        r = session.feed(entry)
        assert r.ok, (entry, r.stderr)
    assert session.feed("a.sum()").stdout == "f32 = 84.0\n"  # 4 blocks: + 1, then + 10 twice


def test_a_graph_recorded_before_a_redefinition_replays_the_old_kernel(
    session: ReplSession,
) -> None:
    session.feed(KERNEL)
    session.feed(SETUP + "\nlet g = graph { inc(z.partition([4]), &a); };")
    session.feed(KERNEL.replace("+ 1.0", "+ 10.0"))
    assert session.feed("g.replay();").ok
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"  # a + 1, the recorded kernel
    # Redefine and launch in one entry: the new body runs.
    r = session.feed(KERNEL.replace("+ 1.0", "+ 100.0") + "\ninc(z.partition([4]), &a).sync();")
    assert r.ok, r.stderr
    assert session.feed("z.sum()").stdout == "f32 = 808.0\n"
    assert session.feed("g.replay();\nz.sum()").stdout == "f32 = 16.0\n"


def test_a_definition_replaces_an_import_and_back(session: ReplSession) -> None:
    assert session.feed("use std::math::PI;").ok
    assert session.feed("PI").stdout == "f32 = 3.1415927\n"
    assert session.feed("const PI: f32 = 3.0;").ok
    assert session.feed("PI").stdout == "f32 = 3.0\n"
    assert session.feed("use std::math::PI;").ok
    assert session.feed("PI").stdout == "f32 = 3.1415927\n"
    assert "use std::math::PI;" in session.program_text()
    r = session.feed("use std::math::PI;\nconst PI: f32 = 1.0;")
    assert not r.ok and "`PI` is defined twice in this entry" in r.stderr


def test_an_error_in_a_redefinition_is_shown_in_its_entry(session: ReplSession) -> None:
    session.feed("fn sq(a: i32) -> i32 { a * a }")
    r = session.feed("fn sq(a: i32) -> i32 { a * b }")
    assert not r.ok and "--> <repl-2>:1:28" in r.stderr
    assert session.feed("sq(4)").stdout == "i32 = 16\n"  # the old one stays


# ---------------------------------------------------------------- commands
def test_help_is_enough_to_start(session: ReplSession) -> None:
    out = session.feed(":help").stdout
    for cmd in (
        ":type",
        ":ast",
        ":ir",
        ":llvm",
        ":ptx",
        ":load",
        ":device",
        ":time",
        ":reset",
        ":quit",
    ):
        assert cmd in out
    # The example session in the help runs as shown.
    lines = [ln[4:] for ln in HELP.splitlines() if ln.startswith(("  >>> ", "  ... "))]
    entries, cur = [], ""
    for ln in HELP.splitlines():
        if ln.startswith("  >>> "):
            if cur:
                entries.append(cur)
            cur = ln[6:]
        elif ln.startswith("  ... "):
            cur += "\n" + ln[6:]
    entries.append(cur)
    assert len(lines) >= 5 and len(entries) == 4
    outputs = [session.feed(e) for e in entries]
    assert all(o.ok for o in outputs), [o.stderr for o in outputs]
    shown = HELP.split(entries[-1].splitlines()[-1] + "\n", 1)[1].split("\n\n")[0].strip()
    assert outputs[-1].stdout.strip() == shown


def test_help_on_a_name(session: ReplSession) -> None:
    load = session.feed(":help load").stdout
    assert load.startswith("x.load()") and "allowed inside a kernel" in load
    both = session.feed(":help exp").stdout
    assert "exp(x: " in both and "x.exp()" in both  # the function and the method
    listing = session.feed(":help builtins").stdout
    assert "functions on the host:" in listing and ".partition" in listing
    session.feed("fn sq(a: i32) -> i32 { a * a }\nlet q = 3;")
    assert session.feed(":help sq").stdout == "fn sq(a: i32) -> i32\n    defined in this session\n"
    assert session.feed(":help q").stdout.startswith("q: i32\n")
    miss = session.feed(":help lod")
    assert not miss.ok and "did you mean `load`, `log`" in miss.stderr
    assert [w for w, _ in session.completions(":help bui")] == ["builtins"]


def test_type_vars_ast_program(session: ReplSession) -> None:
    session.feed("let a = ones::<f32>([8]);\nlet n = 3;")
    assert session.feed(":type a").stdout == "a: Tensor<f32, [8]>\n"
    assert session.feed(":type a.sum() * 2.0").stdout == "a.sum() * 2.0: f32\n"
    assert not session.feed(":type nope").ok
    assert session.feed(":vars").stdout == "a: Tensor<f32, [8]>\nn: i32 = 3\n"
    ast_one = session.feed(":ast n + 1").stdout
    assert "Binary op='+'" in ast_one and "Name `n`" in ast_one
    assert "FnDecl" in session.feed(":ast").stdout
    assert session.feed(":program").stdout.startswith("fn main() {\n    let a = ones")


def test_ir_llvm_ptx_show_the_instances_that_ran(session: ReplSession) -> None:
    session.feed(KERNEL)
    assert "launch `inc` first" in session.feed(":ir inc").stdout
    session.feed(SETUP + "\ninc(z.partition([4]), &a).sync();")
    ir = session.feed(":ir inc")
    assert ir.ok and "kernel inc<B = 4>" in ir.stdout
    llvm = session.feed(":llvm inc")
    assert llvm.ok and "define" in llvm.stdout
    bad = session.feed(":ir nope")
    assert not bad.ok and "no kernel `nope`" in bad.stderr and "`inc`" in bad.stderr


@pytest.mark.slow
def test_ptx(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed(SETUP + "\ninc(z.partition([4]), &a).sync();")
    ptx = session.feed(":ptx inc")
    assert ptx.ok and ".entry" in ptx.stdout


def test_load_and_reset(session: ReplSession, tmp_path: Path) -> None:
    lib = tmp_path / "lib.tile"
    lib.write_text("fn twice(a: i32) -> i32 { 2 * a }\nfn main() { print(0); }\n")
    assert session.feed(f":load {lib}").stdout == f"loaded 1 item from {lib}\n"
    assert session.feed("twice(21)").stdout == "i32 = 42\n"
    assert not session.feed(f":load {tmp_path / 'missing.tile'}").ok
    assert session.feed(":reset").ok
    assert not session.feed("twice(1)").ok
    assert session.feed(":vars").stdout == "(no variables yet)\n"
    assert session.feed(":quit").quit


def test_unknown_command_suggests(session: ReplSession) -> None:
    r = session.feed(":tyep x")
    assert not r.ok and "unknown command `:tyep`" in r.stderr and "`:type`?" in r.stderr


def test_time_runs_once_and_reports(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed(SETUP)
    first = session.feed(":time inc(z.partition([4]), &a).sync();")
    assert first.ok and "time: " in first.stdout and "one run, wall clock" in first.stdout
    assert "includes compiling" in first.stdout
    second = session.feed(":time inc(z.partition([4]), &a).sync();")
    assert "includes compiling" not in second.stdout
    assert launches(session) == 2  # each `:time` ran the statement exactly once
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"  # and its effect is kept
    assert not session.feed(":time").ok
    assert session.last_time is not None


def test_device_gpu_without_a_gpu_says_so_and_stays(session: ReplSession) -> None:
    from tilelang.run import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU")
    session.feed("let x = ones::<f32>([4]);")
    r = session.feed(":device gpu")
    assert not r.ok and "cannot run on the GPU" in r.stderr and "stays on the" in r.stderr
    assert session.feed("x.sum()").stdout == "f32 = 4.0\n"
    assert not session.feed(":device tpu").ok
    assert "CPU" in session.feed(":device").stdout


def test_device_switch_moves_tensors(session: ReplSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """Switching engines (a second CPU device stands in for the GPU here):
    tensors move to the new device with their values, later launches run there."""
    from tilelang import run as run_mod
    from tilelang.runtime.cpu import CpuDevice

    session.feed(KERNEL)
    session.feed(SETUP + "\nlet p = z.partition([4]);")
    old = session._runtime.device  # type: ignore[union-attr]
    new = CpuDevice()
    monkeypatch.setattr(run_mod, "make_device", lambda choice, out: new)
    session.feed("let h = inc(z.partition([4]), &a).launch();")
    blocked = session.feed(":device gpu")
    assert not blocked.ok and "`h` still in flight" in blocked.stderr
    session.feed("h.wait();")
    r = session.feed(":device gpu")
    assert r.ok and "2 tensors moved there" in r.stdout
    assert session.env["z"].device is new and session.env["p"].tensor.device is new
    assert session.feed("inc(z.partition([4]), &a).sync();").ok
    assert new.launches == 1 and old.launches == 1
    assert session.feed("z.sum()").stdout == "f32 = 16.0\n"


# ---------------------------------------------------------------- completion
def test_completion(session: ReplSession) -> None:
    def words(text: str) -> list[str]:
        return [w for w, _ in session.completions(text)]

    session.feed(KERNEL)
    session.feed("let mut zed = zeros::<f32>([8]);\nfn helper(a: i32) -> i32 { a }")
    assert "zed" in words("let q = ze") and "zeros" in words("let q = ze")
    assert words("hel") == ["helper"]
    assert "inc" in words("in") and "in" not in words("in")  # the word itself is no completion
    assert {"while", "for", "fn"} <= set(words("")) - {"zed"}
    assert "f16" in words("f1") and "Tensor" in words("Te")
    meth = words("zed.pa")
    assert meth == ["partition"]
    assert "sum" in words("zed.") and "launch" in words("inc(x).la")
    assert "zeros" not in words("zed.")
    assert words(":ty") == ["type"]
    assert words(":device g") == ["gpu"]
    assert words(":ir ") == ["inc"]
    mods = words("use std::")  # every module of stdlib/std, in order
    assert {"llm", "math", "nn"} <= set(mods) and mods == sorted(mods)
    assert words("use std::nn::soft") == ["softmax"]
    assert "PI" in words("std::math::")
    assert words("foo::") == []
    what = dict(session.completions("ze"))
    assert what["zed"].startswith("variable") and what["zeros"].startswith("builtin")


def test_completion_of_load_paths(session: ReplSession, tmp_path: Path) -> None:
    (tmp_path / "a.tile").write_text("")
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "sub").mkdir()
    got = [w for w, _ in session.completions(f":load {tmp_path}/")]
    assert got == [f"{tmp_path}/a.tile", f"{tmp_path}/sub/"]


# ---------------------------------------------------------------- front ends
def test_piped_stdin() -> None:
    script = (
        "let x = 40 + 2;\nx\nfn sq(a: i32) -> i32 {\n    a * a\n}\nsq(x)\n:type x\n"
        "let y = 1 +\n\n"  # unfinished, then a blank line: submitted, a syntax error
        "x + 1\n"
        "fn g() -> i32 {\n\n    5\n}\n"  # a blank line inside braces continues (scripts)
        "g()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tilelang", "repl"],
        input=script,
        capture_output=True,
        text=True,
        env=tilec_env(),
        timeout=120,
    )
    assert proc.stdout == "i32 = 42\ni32 = 1764\nx: i32\ni32 = 43\ni32 = 5\n", proc.stderr
    assert proc.returncode == 1 and "error[E00" in proc.stderr  # one entry failed
    empty = run_tilec("repl")  # empty stdin: nothing to do
    assert empty.returncode == 0


def test_piped_gpu_without_gpu() -> None:
    from tilelang.run import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU")
    proc = run_tilec("repl", "--device", "gpu")
    assert proc.returncode == 3 and "cannot run on the GPU" in proc.stderr


@pytest.mark.slow
def test_terminal_session(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = tilec_env()
    env["TILEC_HISTORY"] = str(tmp_path / "history")
    env["TERM"] = "xterm"  # a real terminal: continuation lines and completion are drawn
    env["NO_COLOR"] = "1"
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # no cursor-position request to wait for
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tilelang", "repl"],
        env=env,
        cwd=str(REPO_ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    prompt = ">>>"  # prompt_toolkit draws the space after it as a cursor move
    try:
        child.expect("Tile REPL")
        child.expect(prompt)
        child.send("let mut x = ones::<f32>([8]);\r")
        child.expect(prompt)
        # A multi-line kernel: Enter continues while the brace is open.
        child.send("kernel fn triple<const B: i32>(y: &mut Tensor<f32, [B]>) {\r")
        child.expect(r"\.\.\.")
        child.send("y.store(y.load() * 3.0);\r")
        child.expect(r"\.\.\.")
        child.send("}\r")
        child.expect(prompt)
        child.send("triple(x.partition([4])).sync();\r")
        child.expect(prompt)
        child.send("x.sum()\r")
        child.expect(r"f32 = 24\.0")
        child.expect(prompt)
        # Ctrl-C drops the entry being typed; the session goes on.
        child.send("let lost = 1")
        child.sendintr()
        child.expect(prompt)
        child.send(":type x\r")
        child.expect(r"x: Tensor<f32, \[8\]>")
        child.expect(prompt)
        child.send("lost\r")
        child.expect(r"cannot find value `lost`")
        child.expect(prompt)
        # Tab completes a name defined in the session (`trip` -> `triple`;
        # the terminal redraws only the new letters, so check by running it).
        child.send("trip\t")
        child.send("(x.partition([4])).sync();\r")
        child.expect(prompt)
        child.send("x.sum()\r")
        child.expect(r"f32 = 72\.0")
        child.expect(prompt)
        child.sendcontrol("d")  # Ctrl-D leaves
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    history = (tmp_path / "history").read_text()
    assert "triple(x.partition([4])).sync();" in history


# ---------------------------------------------------------------- on a GPU
@pytest.mark.gpu
def test_gpu_session() -> None:
    """The same session on the GPU: tensors stay in device memory between
    entries, a launch in flight spans entries, device print reaches the
    entry's output, and `:device cpu` brings the tensors back."""
    s = ReplSession(device="gpu")
    assert s.feed(KERNEL).ok
    assert s.feed(SETUP + "\ninc(z.partition([4]), &a).sync();").ok
    assert s._runtime is not None and s._runtime.device.kind == "gpu"
    assert s.feed("z.sum()").stdout == "f32 = 16.0\n"
    assert s.feed("let h = inc(z.partition([4]), &a).launch();").ok
    assert s.feed("h.wait();\nz.sum()").stdout == "f32 = 16.0\n"
    shown = s.feed(
        "kernel fn say<const B: i32>(y: &mut Tensor<f32, [B]>) {\n"
        "    let t = y.load();\n    if block_id(0) == 0 { print(t.sum()); }\n    y.store(t);\n}"
    )
    assert shown.ok
    assert s.feed("say(z.partition([8])).sync();").stdout == "16.0\n"
    timed = s.feed(":time inc(z.partition([4]), &a).sync();")
    assert timed.ok and "time: " in timed.stdout
    assert s.feed(":ptx inc").stdout.count(".entry") >= 1
    moved = s.feed(":device cpu")
    assert moved.ok and "moved there" in moved.stdout
    assert s.feed("z.sum()").stdout == "f32 = 16.0\n"


def test_completion_of_methods_is_by_the_value_and_shared_with_the_lsp() -> None:
    """A host tensor gets host methods only (`.load` is a kernel's), as the
    language server lists them (`signatures.methods_for`)."""
    from tilelang.intrinsics.signatures import methods_for

    s = ReplSession(device="cpu")
    s.feed("let x = zeros::<f32>([4]);")
    s.feed("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load()); }")
    s.feed("let mut y = zeros::<f32>([4]);")
    s.feed("let op = k(y.partition([4]));")
    words = {w for w, _ in s.completions("x.")}
    assert {"exp", "transpose", "item", "clone"} <= words and "load" not in words
    assert words == {sig.name for sig in methods_for("tensor", in_kernel=False)}
    assert {w for w, _ in s.completions("op.")} == {"launch", "sync"}


def test_help_builtins_lists_what_works_on_host_tensors() -> None:
    s = ReplSession(device="cpu")
    s.feed("let x = arange::<f32>(6).reshape([2, 3]);")
    listing = s.feed(":help builtins").stdout
    for method in ("exp", "transpose", "permute", "item", "pow", "erf"):
        assert f".{method}" in listing
        out = s.feed(f"x.{method}({'2.0' if method == 'pow' else '[1, 0]' if method == 'permute' else ''})"
                     if method != "item" else "x[0][0]")
        assert out.ok, (method, out.stderr)


def test_print_format_strings_are_checked_in_the_repl(session: ReplSession) -> None:
    # hrev 2026-12-04: `print("{} {}", 1)` printed the stray `{}`; a literal is E0232 at
    # check time (and, 2026-12-05, an immutable `let` of one, across entries), a string the
    # checker cannot know E0723 when the entry runs
    r = session.feed('print("{} {}", 1);')
    assert not r.ok and "error[E0232]" in r.stderr and "help: give an argument for each `{}`" in r.stderr
    assert session.feed('print("{{{}}}", 7);').stdout == "{7}\n"
    assert session.feed('let f = "a {} b {}";').ok
    r = session.feed("print(f, 1);")
    assert not r.ok and "error[E0232]" in r.stderr and r.stdout == ""
    assert session.feed("print(f, 1, 2);").stdout == "a 1 b 2\n"
    assert session.feed('let mut g = "{}";').ok
    assert session.feed('g = "a {} b {}";').ok
    r = session.feed("print(g, 1);")
    assert not r.ok and "error[E0723]" in r.stderr and r.stdout == ""
    assert session.feed("print(g, 1, 2);").stdout == "a 1 b 2\n"
    r = session.feed("assert_close(&ones::<f32>([2]), &ones::<f32>([2]), rtol = -1.0);")
    assert not r.ok and "error[E0233]" in r.stderr
