"""The ownership checker: no Tile program that passes it can race (BRIEF §6).

Entry point: `check_ownership(program, sink) -> OwnershipFacts`, run after the
type checker. `program` is the type checker's `Program` (names resolve
through its symbols and what a value is comes from its types; a bare
`ast.Module` is refused). Diagnostics go to `sink`; the returned facts
carry the launch-time checks the host runtime must evaluate before any GPU
work (see `tilelang.ownership.facts`).

Every function of every module the program loads is checked, whatever file
defines it, with diagnostics located in that file. Two halves:
  - `host.py` (with `host_expr.py`, `host_calls.py`, `host_report.py` over
    the abstract values of `values.py`): flow-sensitive loans on places
    (variables and tuple fields) taken by launches, moves, graphs (codes
    E03xx, `codes/ownership.py`);
  - `kernel.py` (with `kernel_index.py`, `kernel_bounds.py`): what a kernel
    or device function may do with its own tile and its inputs (codes E04xx,
    `codes/kernel.py`);
    `combine.py`: the rules of `if last_block(axis) { .. }` (E0409-E0411).
    `queue.py`: the rules of `for s in queue(axis) { .. }` (E0412-E0414).
    `cluster.py`: the rules of `let p = cluster_gather(x);` (E0415).

Invariant: the checker never raises for a user error and never prints.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ownership.cluster import check_clusters
from tilelang.ownership.combine import check_combines
from tilelang.ownership.env import ProgramView
from tilelang.ownership.facts import LaunchCheck, OwnershipFacts
from tilelang.ownership.host import check_host
from tilelang.ownership.kernel import check_kernels
from tilelang.ownership.queue import check_queues
from tilelang.syntax import ast

__all__ = ["LaunchCheck", "OwnershipFacts", "check_ownership"]


def check_ownership(program: Any, sink: DiagnosticSink) -> OwnershipFacts:
    view = ProgramView(program)
    facts = OwnershipFacts()
    facts.unsafe_writes.update(check_kernels(view, sink, facts.launch_checks))
    check_combines(view, sink)
    check_queues(view, sink)
    check_clusters(view, sink)
    facts.waits.update(check_host(view, sink, facts.unsafe_writes))
    if facts.launch_checks:
        _decide_static_checks(view, facts, sink)
    return facts


def _decide_static_checks(view: ProgramView, facts: OwnershipFacts, sink: DiagnosticSink) -> None:
    """A launch check whose symbols the type checker already knows at a call
    (const generics from literal partition shapes, module consts) is decided
    now: a failure is reported at that call instead of at run time."""
    consts: dict[str, int] = {}
    for k, v in view.program.consts.items():
        if isinstance(v, int) and not isinstance(v, bool):
            consts[str(k).split("::")[-1]] = v
    for info in view.host_fns():
        for node in ast.walk(info.decl.body):
            if not isinstance(node, ast.Call):
                continue
            callee = view.callee_info(node)
            if callee is None or not callee.is_kernel:
                continue
            # a generic of the kernel hides a module constant of its name (`const J` beside `<const J: i32>`):
            # where the launch gives `J` only at run time, the constant's value was taken for it (a false
            # E0403 at check time for a valid launch)
            own = {g.name.name for g in callee.decl.generics}
            env = {**{k: v for k, v in consts.items() if k not in own}, **view.instantiation(node),
                   **_constant_grid(view, callee, node)}
            for check in facts.checks_for(callee.qualname):
                if check.symbols <= env.keys() and not check.holds(env):
                    sink.emit(check.diagnostic(env, node.span, static=True))
    _decide_in_host_instances(view, facts, sink, consts)


def _decide_in_host_instances(view: ProgramView, facts: OwnershipFacts, sink: DiagnosticSink,
                              consts: dict[str, int]) -> None:
    """The same for a launch inside a generic host function whose const
    generics give the kernel's (`k::<4, C>(..)` in `fn go<const C: i32>`,
    called `go::<3>(..)`): decided for each instance the program's calls fix
    (`sema.host_instances.instances`), with those calls labelled; it was
    refused only when it ran (hrev15)."""
    from tilelang.sema.host_instances import const_arg, instance_label, instances

    seen: set[tuple[int, tuple[tuple[str, int], ...]]] = set()
    for fn, types, values, site, outer in instances(view.program):
        if not values:
            continue
        for node in ast.walk(fn.decl.body):
            callee = view.callee_info(node) if isinstance(node, ast.Call) else None
            if callee is None or not callee.is_kernel:
                continue
            own = {g.name.name for g in callee.decl.generics}
            env = {**{k: v for k, v in consts.items() if k not in own}, **view.instantiation(node)}
            sources = view.program.shape_sources.get(node, {})
            for g in callee.const_generics:
                v = const_arg(sources.get(g), values) if g not in env else None
                if v is not None:
                    env[g] = v
            key = (id(node), tuple(sorted(env.items())))
            if key in seen:
                continue
            seen.add(key)
            for check in facts.checks_for(callee.qualname):
                if check.symbols <= env.keys() and not check.holds(env):
                    d = check.diagnostic(env, node.span, static=True)
                    for call, label in ((site, instance_label(fn, types, values)), *outer):
                        d = d.secondary(call.span, label)
                    sink.emit(d)


def _constant_grid(view: ProgramView, callee: Any, call: ast.Call) -> dict[str, int]:
    """`num_blocks(axis)` of a launch whose grid is a constant: every `&mut`
    partition's tensor and tile shapes are (`zeros::<f32>([8]).partition([4])`;
    the `&mut` partitions outside a `last_block` group, by the launch's rule,
    `requires.constant_grid`); {} where any is not, or where they disagree
    (E0500 says so)."""
    from tilelang.lastblock import group_params
    from tilelang.requires import constant_grid, grid_values
    from tilelang.sema.types import PartitionT

    groups = group_params(callee.decl)
    parts: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for p, a in zip(callee.decl.params, call.args, strict=False):
        if not (isinstance(p.ty, ast.RefType) and p.ty.mutable) or p.name.name in groups:
            continue
        aty = view.type_of(a.value)
        if not isinstance(aty, PartitionT) or aty.tensor.shape is None:
            return {}
        shape = [getattr(n, "const_value", None) for n in aty.tensor.shape]
        tile = [getattr(t, "const_value", None) for t in aty.tile_shape]
        if not all(isinstance(v, int) for v in (*shape, *tile)):
            return {}
        parts.append((tuple(shape), tuple(tile)))  # type: ignore[arg-type]
    grid = constant_grid(parts)
    return {} if grid is None else grid_values(grid)
