"""The driver's stage table: order, stopping, missing stages, internal errors,
kernel instances, and a whole-pipeline fuzz (no input makes any stage crash)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang import driver
from tilelang.diagnostics.model import ICE

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.tile"))
BAD_SYNTAX = "fn main() {\n    let x = 1\n    let y = 2;\n}\n"
BAD_TYPES = "fn main() {\n    let x = nope;\n}\n"


def test_stages_are_in_pipeline_order() -> None:
    assert list(driver.STAGES) == ["ast", "checked", "ir", "gpu", "llvm", "ptx"]
    for name, stage in driver.STAGES.items():
        assert stage.name == name
        assert stage.input is None or list(driver.STAGES).index(stage.input) < list(
            driver.STAGES
        ).index(name)


def test_compile_stops_after_the_first_stage_with_errors() -> None:
    syntax = driver.compile(BAD_SYNTAX, "ptx")
    assert syntax.failed_stage == "ast" and not syntax.ok
    assert "checked" not in syntax.context.outputs
    assert [d.code for d in syntax.diagnostics] == ["E0001"]
    types = driver.compile(BAD_TYPES, "ptx")
    assert types.failed_stage == "checked"
    assert "ir" not in types.context.outputs


def test_unknown_stage_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown stage"):
        driver.compile("fn main() {}\n", "bytecode")


def test_a_crashing_stage_becomes_an_ice(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(value, ctx):  # type: ignore[no-untyped-def]
        raise KeyError("oops")

    monkeypatch.setitem(driver.STAGES, "ast", driver.Stage("ast", boom, None, ""))
    with pytest.raises(ICE, match="stage `ast` crashed on <input>: KeyError") as info:
        driver.compile("fn main() {}\n")
    assert isinstance(info.value.__cause__, KeyError)


def test_source_kinds(tmp_path: Path) -> None:
    path = tmp_path / "p.tile"
    path.write_text(BAD_SYNTAX)
    from_path = driver.compile(path, "ast")
    assert from_path.context.source.name == str(path)
    from_text = driver.compile(BAD_SYNTAX, "ast", name="<text>")
    assert from_text.context.source.name == "<text>"
    with pytest.raises(OSError):
        driver.compile(tmp_path / "missing.tile")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_checks_and_lowers(path: Path) -> None:
    result = driver.compile(path, "ir")
    assert result.ok, [d.message for d in result.diagnostics]
    instances = driver.kernel_instances(result.context.outputs["checked"].program)
    assert len(result.output) == len(instances)
    assert driver.format_output("ir", result).strip() or not instances


TYPE_GENERIC = """
kernel fn copy<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {
    z.store(x.load_like(z));
}
kernel fn unused<T>(z: &mut Tensor<T, [4]>) {
    z.store(z.load());
}
fn main() {
    let mut a = zeros::<f16>([8]);
    copy(a.partition([4]), &ones::<f16>([8])).sync();
    let mut b = zeros::<i32>([8]);
    copy::<i32, 8>(b.partition([8]), &ones::<i32>([8])).sync();
}
"""


def test_type_generic_kernels_have_one_instance_per_element_type() -> None:
    # `emit --stage ir` on a launched `kernel fn k<T, ..>` was an ICE
    # ("unknown element type `T`"): the instances lacked `T`.
    from tilelang.dtypes import DType

    result = driver.compile(TYPE_GENERIC, "ir")
    assert result.ok, [d.message for d in result.diagnostics]
    instances = driver.kernel_instances(result.context.outputs["checked"].program)
    assert instances == [("copy", {"T": DType.F16, "B": 4}), ("copy", {"T": DType.I32, "B": 8})]
    assert [k.tensor("z").dtype for k in result.output] == [DType.F16, DType.I32]


# ---------------------------------------------------------------- fuzz
PROGRAMS = [p.read_text(encoding="utf-8") for p in EXAMPLES] or ["fn main() {}\n"]
SNIPPETS = [
    "",
    ";",
    "}",
    "{",
    "mut ",
    "&",
    "&mut ",
    ".sync()",
    ".launch()",
    "0",
    "1.5",
    "x",
    "z",
    "[4]",
    "f16",
    "?",
    "as f16",
    ".partition([3])",
    "unsafe {",
    "graph {",
    "::<8>",
    "let ",
    "return ",
    ",",
    "(",
    ")",
]


@st.composite
def mutated_program(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(PROGRAMS))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 12))
        text = text[:at] + draw(st.sampled_from(SNIPPETS)) + text[at + cut :]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_program())
def test_no_program_makes_the_pipeline_crash(text: str) -> None:
    # Any input gives diagnostics or success, up to the IR (no ICE).
    result = driver.compile(text, "ir", name="<fuzz>")
    for d in result.diagnostics:
        assert d.code and d.message
