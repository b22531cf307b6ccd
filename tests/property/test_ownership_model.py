"""The ownership checker against a dynamic model of host programs.

Hypothesis generates random host programs (allocations, partitions, launches,
syncs, waits, reads, writes, moves, reassignments, graphs and their replays,
if/else, for loops) as a
small tree, renders each one as Tile source text, and runs it two ways:

- through `tilelang.driver.check` (parser, type checker, ownership checker);
- through `Model`, a direct execution of the tree that tracks which launches
  are in flight, which tensors each one reads and writes, and which tensors
  have been moved. The model calls a program racy when a host read, write,
  move or launch touches a tensor that an in-flight launch writes (or, for a
  write or move, reads), when one launch passes a tensor twice with a write,
  when a moved tensor is used, or when the program ends with a launch still
  in flight (nobody can wait for it any more).

The property: a program the checker accepts is never racy in the model. The
checker may be conservative (it rejects some programs the model finds fine,
because it does not evaluate `if` conditions); a second test makes sure it
still accepts a good share of the model-safe programs, so the first property
is not vacuous.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang import driver

TENSORS = ("t0", "t1", "t2")

PRELUDE = """kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}

kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * 2.0);
}

fn main() {
    let n = 4096;
    let mut t0 = zeros::<f32>([1024]);
    let mut t1 = zeros::<f32>([1024]);
    let mut t2 = zeros::<f32>([1024]);
"""


# ---------------------------------------------------------------- program trees
# Statements are tuples:
#   ("launch", handle | None, writes, reads)   handle None: `.sync()`
#   ("wait", handle) ("read", t) ("write", t) ("move", t, new) ("reset", t)
#   ("if", taken: bool, then, else) ("for", n, body)
Stmt = tuple


def render(stmts: list[Stmt], indent: int = 1) -> str:
    pad = "    " * indent
    out = []
    for s in stmts:
        match s:
            case ("launch", h, w, r):
                call = (
                    f"inc({w}.partition([256]))"
                    if r is None
                    else f"scale({w}.partition([256]), &{r})"
                )
                out.append(f"{pad}let {h} = {call}.launch();" if h else f"{pad}{call}.sync();")
            case ("wait", h):
                out.append(f"{pad}{h}.wait();")
            case ("graph", g, w, r):
                call = (
                    f"inc({w}.partition([256]))"
                    if r is None
                    else f"scale({w}.partition([256]), &{r})"
                )
                out.append(f"{pad}let {g} = graph {{")
                out.append(f"{pad}    {call};")
                out.append(f"{pad}}};")
            case ("replay", g):
                out.append(f"{pad}{g}.replay();")
            case ("read", t):
                out.append(f"{pad}print({t}.sum());")
            case ("write", t):
                out.append(f"{pad}{t} += 1.0;")
            case ("move", t, new):
                out.append(f"{pad}let {new} = {t};")
                out.append(f"{pad}print({new}.sum());")
            case ("reset", t):
                out.append(f"{pad}{t} = zeros::<f32>([1024]);")
            case ("if", taken, then, els):
                out.append(f"{pad}if n > {0 if taken else 5000} {{")
                out.append(render(then, indent + 1))
                out.append(f"{pad}}} else {{")
                out.append(render(els, indent + 1))
                out.append(f"{pad}}}")
            case ("for", count, body):
                out.append(f"{pad}for i in 0..{count} {{")
                out.append(render(body, indent + 1))
                out.append(f"{pad}}}")
            case _:
                raise AssertionError(s)
    return "\n".join(x for x in out if x)


def source(stmts: list[Stmt]) -> str:
    return PRELUDE + render(stmts) + "\n}\n"


# ---------------------------------------------------------------- the dynamic model
@dataclass
class Model:
    moved: set[str] = field(default_factory=set)
    inflight: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)
    next_id: int = 0
    racy: list[str] = field(default_factory=list)

    def _touch(self, t: str, write: bool, what: str) -> None:
        if t in self.moved:
            self.racy.append(f"{what} of moved `{t}`")
            return
        for w, r in self.inflight.values():
            if t in w or (write and t in r):
                self.racy.append(f"{what} of `{t}` races with a launch in flight")
                return

    def captured(self, t: str, graphs: dict[str, tuple[str, str | None]]) -> bool:
        return any(t in (w, r) for w, r in graphs.values())

    def run(
        self,
        stmts: list[Stmt],
        handles: dict[str, int],
        graphs: dict[str, tuple[str, str | None]] | None = None,
    ) -> None:
        handles = dict(handles)  # a block's handles and graphs end with it
        graphs = dict(graphs or {})
        for s in stmts:
            match s:
                case ("launch", h, w, r):
                    self._touch(w, True, "launch writing")
                    if r is not None:
                        self._touch(r, False, "launch reading")
                        if r == w:
                            self.racy.append(f"`{w}` written and read by one launch")
                    if h is not None:
                        self.inflight[self.next_id] = ({w}, {r} if r else set())
                        handles[h] = self.next_id
                        self.next_id += 1
                case ("wait", h):
                    self.inflight.pop(handles[h], None)
                case ("read", t):
                    self._touch(t, False, "read")
                case ("write", t):
                    self._touch(t, True, "write")
                case ("move", t, _new):
                    self._touch(t, True, "move")
                    if self.captured(t, graphs):
                        self.racy.append(f"move of `{t}`, captured by a live graph")
                    self.moved.add(t)
                case ("reset", t):
                    if t not in self.moved:
                        self._touch(t, True, "reassignment")
                        if self.captured(t, graphs):
                            self.racy.append(f"`{t}` dropped while a live graph captures it")
                    self.moved.discard(t)
                case ("graph", g, w, r):
                    # Recording runs nothing; the graph captures the tensors.
                    if w in self.moved or r in self.moved:
                        self.racy.append("graph records a moved tensor")
                    if r == w:
                        self.racy.append(f"`{w}` written and read by one graph operation")
                    graphs[g] = (w, r)
                case ("replay", g):
                    w, r = graphs[g]
                    self._touch(w, True, "replay writing")
                    if r is not None:
                        self._touch(r, False, "replay reading")
                case ("if", taken, then, els):
                    self.run(then if taken else els, handles, graphs)
                case ("for", count, body):
                    for _ in range(count):
                        self.run(body, handles, graphs)

    def finish(self) -> None:
        if self.inflight:
            self.racy.append("a launch is still in flight at the end of `main`")


def model_racy(stmts: list[Stmt]) -> list[str]:
    m = Model()
    m.run(stmts, {})
    m.finish()
    return m.racy


# ---------------------------------------------------------------- the generator
@st.composite
def programs(draw: st.DrawFn) -> list[Stmt]:
    counter = [0]

    def fresh(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def block(depth: int, visible: list[str], gvisible: list[str]) -> list[Stmt]:
        visible = list(visible)
        gvisible = list(gvisible)
        out: list[Stmt] = []
        for _ in range(draw(st.integers(1, 5 if depth == 0 else 3))):
            kinds = ["launch", "sync", "read", "write", "move", "reset", "graph"]
            if visible:
                kinds += ["wait", "wait"]
            if gvisible:
                kinds += ["replay"]
            if depth < 2:
                kinds += ["if", "for"]
            kind = draw(st.sampled_from(kinds))
            t = draw(st.sampled_from(TENSORS))
            if kind in ("launch", "sync"):
                r = draw(st.none() | st.sampled_from(TENSORS))
                h = fresh("h") if kind == "launch" else None
                out.append(("launch", h, t, r))
                if h:
                    visible.append(h)
            elif kind == "wait":
                out.append(("wait", draw(st.sampled_from(visible))))
            elif kind == "graph":
                g = fresh("g")
                out.append(("graph", g, t, draw(st.none() | st.sampled_from(TENSORS))))
                gvisible.append(g)
            elif kind == "replay":
                out.append(("replay", draw(st.sampled_from(gvisible))))
            elif kind == "move":
                out.append(("move", t, fresh("m")))
            elif kind in ("read", "write", "reset"):
                out.append((kind, t))
            elif kind == "if":
                out.append(
                    (
                        "if",
                        draw(st.booleans()),
                        block(depth + 1, visible, gvisible),
                        block(depth + 1, visible, gvisible),
                    )
                )
            else:
                out.append(("for", draw(st.integers(1, 3)), block(depth + 1, visible, gvisible)))
        return out

    return block(0, [], [])


def accepted(src: str) -> tuple[bool, list[str]]:
    result = driver.check(src, name="<generated>")
    diags = result.context.sink.diagnostics
    errors = [f"{d.code} {d.message}" for d in diags if d.severity.value == "error"]
    return not errors, errors


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_accepted_programs_are_safe_in_the_model(stmts: list[Stmt]) -> None:
    src = source(stmts)
    ok, _errors = accepted(src)
    if ok:
        racy = model_racy(stmts)
        assert not racy, f"checker accepted a racy program ({racy}):\n{src}"


def test_checker_accepts_model_safe_programs_often() -> None:
    """Guard against a vacuous property: over a fixed sample of generated
    programs that the model finds safe, most are accepted."""
    import random

    rng = random.Random(1234)
    safe = accepted_n = 0
    for _ in range(120):
        stmts = _random_program(rng)
        if model_racy(stmts):
            continue
        safe += 1
        ok, _errors = accepted(source(stmts))
        accepted_n += ok
    assert safe >= 20
    assert accepted_n >= safe * 0.5, f"only {accepted_n} of {safe} model-safe programs accepted"


def _random_program(rng: Any) -> list[Stmt]:
    """A simple, mostly well-behaved program: launches followed by their waits."""
    out: list[Stmt] = []
    for k in range(rng.randint(1, 6)):
        t = rng.choice(TENSORS)
        r = rng.choice([None, *[x for x in TENSORS if x != t]])
        roll = rng.random()
        if roll < 0.4:
            h = f"h{k}"
            out.append(("launch", h, t, r))
            if rng.random() < 0.5:
                out.append(("read", rng.choice([x for x in TENSORS if x not in (t, r)])))
            if rng.random() < 0.8:
                out.append(("wait", h))
            else:
                out.append(("if", rng.random() < 0.5, [("wait", h)], [("wait", h)]))
        elif roll < 0.6:
            out.append(("launch", None, t, r))
        elif roll < 0.8:
            out.append((rng.choice(["read", "write"]), t))
        else:
            out.append(("for", rng.randint(1, 3), [("launch", f"h{k}", t, r), ("wait", f"h{k}")]))
    return out


# ---------------------------------------------------------------- robustness
def _corpus() -> list[str]:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    files = (
        sorted((root / "soundness").glob("*/*.tile"))
        + sorted((root / "ui" / "ownership").glob("*.tile"))
        + sorted((root / "ui" / "kernel").glob("*.tile"))
    )
    return [f.read_text(encoding="utf-8") for f in files]


CORPUS = _corpus()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CORPUS), st.data())
def test_checker_never_raises_on_mutilated_programs(text: str, data: st.DataObject) -> None:
    """Delete and duplicate random lines of corpus programs: whatever parses
    and type-checks, the ownership checker turns into diagnostics, never an
    exception."""
    from tilelang.diagnostics.model import DiagnosticSink
    from tilelang.ownership import check_ownership
    from tilelang.source import SourceMap
    from tilelang.syntax.parser import parse

    lines = text.splitlines()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        if data.draw(st.booleans()):
            del lines[i]
        else:
            lines.insert(i, lines[i])
        if not lines:
            return
    sources = SourceMap()
    sf = sources.add("<fuzz>", "\n".join(lines))
    sink = DiagnosticSink()
    module = parse(sf, sink)
    if sink.has_errors:
        return
    from tilelang.sema import check_program

    ssink = DiagnosticSink()
    program = check_program(module, sources, ssink)
    if ssink.has_errors:
        return  # the driver runs ownership only over a well-typed program
    check_ownership(program, DiagnosticSink())


# ---------------------------------------------------------------- the run-time tracker
def _strip(stmts: list[Stmt]) -> list[Stmt]:
    """Only launches, waits, reads and writes (what the run-time tracker sees)."""
    out: list[Stmt] = []
    for s in stmts:
        match s:
            case ("if", taken, then, els):
                out.append(("if", taken, _strip(then), _strip(els)))
            case ("for", count, body):
                out.append(("for", count, _strip(body)))
            case ("launch", *_) | ("wait", _) | ("read", _) | ("write", _):
                out.append(s)
    return out


def _tracker_rejects(stmts: list[Stmt]) -> bool:
    import numpy as np

    from tilelang.diagnostics.model import TileError
    from tilelang.ownership.dynamic import BorrowTracker, Region

    arrays = {t: np.zeros(16, np.float32) for t in TENSORS}
    regions = {t: Region.of(a, t) for t, a in arrays.items()}
    tracker = BorrowTracker()

    def run(block: list[Stmt], handles: dict[str, int]) -> None:
        handles = dict(handles)
        for s in block:
            match s:
                case ("launch", h, w, r):
                    reads = [regions[r]] if r is not None else []
                    tok = tracker.launch("k", [regions[w]], reads, sync=h is None)
                    if h is not None:
                        handles[h] = tok
                case ("wait", h):
                    tracker.wait(handles[h])
                case ("read", t):
                    tracker.access(regions[t], write=False)
                case ("write", t):
                    tracker.access(regions[t], write=True)
                case ("if", taken, then, els):
                    run(then if taken else els, handles)
                case ("for", count, body):
                    for _ in range(count):
                        run(body, handles)

    try:
        run(stmts, {})
    except TileError:
        return True
    return False


@settings(max_examples=150, deadline=None)
@given(programs())
def test_run_time_tracker_agrees_with_the_model(stmts: list[Stmt]) -> None:
    """`BorrowTracker` (the rules at run time, for the Python API) rejects a
    program exactly when the model sees a race in it (moves, graphs and the
    end of `main` left aside: the tracker does not see those)."""
    stmts = _strip(stmts)
    races = [r for r in model_racy(stmts) if "race" in r or "one launch" in r]
    assert _tracker_rejects(stmts) == bool(races), (races, render(stmts))
