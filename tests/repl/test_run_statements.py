"""`HostEvaluator.run_statements`, the API the REPL runs entries with: top-level
statements against an environment that outlives one call."""

from __future__ import annotations

from typing import Any

from tilelang import driver
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.host import UNIT, HostEvaluator
from tilelang.runtime.launch import Runtime

PROGRAM = """fn main() {
    let x = 2;
    let mut t = ones::<f32>([4]);
    t += 1.0;
    return;
    print(99);
    x * 10;
}
"""


def evaluator() -> tuple[HostEvaluator, list[Any]]:
    result = driver.compile(PROGRAM, "checked", name="<t>")
    assert result.ok, result.diagnostics
    checked, root = result.output, result.context.outputs["ast"]
    ev = HostEvaluator(
        checked.program,
        root,
        result.sources,
        Runtime(CpuDevice(), checked.program),
        ownership=checked.ownership,
    )
    return ev, list(root.items[-1].body.stmts)


def test_bindings_go_into_the_given_environment() -> None:
    ev, stmts = evaluator()
    env: dict[str, Any] = {}
    assert ev.run_statements(stmts[:2], env) is UNIT
    assert set(env) == {"x", "t"}
    ev.run_statements([stmts[2]], env)  # a later call sees and updates the same values
    assert env["t"].numpy().tolist() == [2.0, 2.0, 2.0, 2.0]


def test_an_expression_gives_its_value_and_return_stops() -> None:
    ev, stmts = evaluator()
    env: dict[str, Any] = {}
    ev.run_statements(stmts[:1], env)
    expr = stmts[-1].expr  # `x * 10` evaluated as an expression, not a statement
    assert int(ev.run_statements([expr], env)) == 20
    out: list[str] = []
    ev.out = type("W", (), {"write": lambda self, s: out.append(s), "flush": lambda self: None})()
    assert ev.run_statements(stmts[3:], env) is UNIT  # `return;` before `print(99)`
    assert out == []
    ev.run_statements([stmts[4]], env)  # the `print(99)` itself does print there
    assert "".join(out) == "99\n"
