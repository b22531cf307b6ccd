"""The block compiler of `llsim`: each basic block of a parsed kernel becomes
one Python function, compiled once a `Program`, so a thread runs a block as
one call instead of a loop over per-instruction closures (the simulator's
dispatch was a third of its time, the closures' frames most of the rest).

A block's instructions are written in order as statements over `r` (the
thread's registers): an instruction with a `src` (its computation as an
expression, see `llsim.Program._ins`) inline, any other as a call of its own
closure (`fn`); a scheduler request (`sync`) is a `yield` of the same tuple
the closure builds, so the block is a generator where it has one. The
function returns the next block's name, as the block's terminator does.
Everything else (phis, the scheduler, memory, race checks) is `llsim`'s own:
the values, their types and the order of every access are the per-instruction
interpreter's (`llsim.COMPILED = False` runs that one; tests/backend/
test_llsim_blocks.py runs both and compares registers and memory).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


def compile_program(prog: Any, every: bool = True) -> dict[str, tuple[Any, bool]]:
    """block name -> (function of the registers, whether it is a generator),
    each block compiled when a thread first enters it (`_Blocks`: most of a
    kernel's blocks never run in a given launch, its asserts' failures, the
    paths of other shapes, and compiling every block was as long as parsing
    the kernel). The functions' globals are `prog.compiled_ns`, whose `_mem`
    the block's scheduler sets to the launch's memory (loads and stores).
    `every`: each register an instruction sets goes into the thread's
    registers (`r`; what a test that records them reads); otherwise only
    those something outside its block's statements reads (`_read_outside`),
    the rest live in the block's locals alone."""
    if prog.compiled is None:
        prog.compiled_ns = dict(prog.ns)
        prog.compiled = {}
    made = prog.compiled.get(every)
    if made is None:
        made = prog.compiled[every] = _Blocks(prog, every)
    return made  # type: ignore[no-any-return]


class _Blocks(dict):  # type: ignore[type-arg]
    """A program's compiled blocks by name, each made at its first lookup."""

    def __init__(self, prog: Any, every: bool = True) -> None:
        super().__init__()
        self.prog = prog
        self.index = {name: i for i, name in enumerate(prog.blocks)}
        self.ints = _int_registers(prog)
        self.kept = None if every else _read_outside(prog)
        self.prefix = "_b" if every else "_c"

    def __missing__(self, name: str) -> tuple[Any, bool]:
        i = self.index[name]  # (a KeyError for a block the kernel has not, as a plain dict's)
        made = self[name] = _compile_block(i, name, self.prog.blocks[name], self.prog.compiled_ns, self.ints,
                                           self.kept, self.prefix)
        return made


def _emitted(ins: Any) -> str | None:
    """The source `_compile_block` writes for instruction `ins`, None where it
    calls the instruction's closure (`fn` or `sync`, which read `r` itself)."""
    if ins.call_src is not None:
        return ins.call_src  # type: ignore[no-any-return]
    if ins.sync is not None:
        return ins.sync_src  # type: ignore[no-any-return]
    return ins.src  # type: ignore[no-any-return]


def _read_outside(prog: Any) -> frozenset[str]:
    """The registers something reads from `r` other than the statements of
    the block that sets them, after they are set there (whose reads are of
    the block's locals, `_locals`): a phi's arm, another block's statement
    or terminator, a block's statement before its own setting (a loop's
    previous trip), and every register named in the text of an instruction
    that runs as a closure (`_emitted` None) — a superset: a register left
    out would be a KeyError at its first read, never a stale value."""
    out: set[str] = set()
    for b in prog.blocks.values():
        for _, arms in b.phi_srcs:
            for src, _ in arms:
                out.update(_P_READ.findall(src))
        own = {dst for dst, _ in b.phi_srcs}
        for ins in b.body:
            src = _emitted(ins)
            if src is None:
                out.update(_P_REGISTER.findall(ins.text))
            else:
                out.update(reg for reg in _P_READ.findall(src) if reg not in own)
            if ins.dst is not None:
                own.add(ins.dst)
        out.update(reg for reg in _P_READ.findall(b.term_src) if reg not in own)
    return frozenset(out)


def _int_registers(prog: Any) -> frozenset[str]:
    """The registers that always hold a Python `int`: an instruction's with
    `int_result` (`Program.ints`), and a phi's whose arms are all integer
    literals or such registers (to a fixed point: a loop's counter)."""
    ints = set(getattr(prog, "ints", ()))
    phis = [(dst, [s for s, _ in arms]) for b in prog.blocks.values() for dst, arms in b.phi_srcs]
    grew = True
    while grew:
        grew = False
        for dst, srcs in phis:
            if dst not in ints and all(_P_LIT.fullmatch(s) or ((m := _P_READ.fullmatch(s)) and m.group(1) in ints)
                                       for s in srcs):
                ints.add(dst)
                grew = True
    return frozenset(ints)


# a register's read in a block's source (`r['%t12']`), an `int(..)` of one, a
# statement that sets one (`r['%t12'] = ...`), an integer literal
_P_READ = re.compile(r"(?<![\w.])r\['([^'\\]+)'\]")
_P_INT_READ = re.compile(r"(?<![\w.])int\(r\['([^'\\]+)'\]\)")
_P_SET = re.compile(r"(\s*)r\['([^'\\]+)'\] = ")
_P_LIT = re.compile(r"-?[0-9]+")
_P_REGISTER = re.compile(r"%[-\w.$]+")  # a register's name in an instruction's text


def _locals(lines: list[str], ints: frozenset[str], kept: frozenset[str] | None = None) -> list[str]:
    """The block's statements with each register it sets kept in a local too
    (`_R0`, ...; also set in `r`, which the next blocks, the phis and the
    tests read, unless `kept` is given and leaves it out) and read from it by
    the statements after; `int(r[x])` as `r[x]` where x always holds an `int`
    (`_int_registers`). The same values: SSA sets a register once, before
    every read of it."""
    names: dict[str, str] = {}

    def read(m: re.Match[str]) -> str:
        return names.get(m.group(1), m.group(0))

    def int_read(m: re.Match[str]) -> str:
        reg = m.group(1)
        return names.get(reg, f"r[{reg!r}]") if reg in ints else m.group(0)

    out = []
    for ln in lines:
        m = _P_SET.match(ln)
        if m is not None:  # `r[x] = expr`: the reads of expr, then x's local
            expr = _P_READ.sub(read, _P_INT_READ.sub(int_read, ln[m.end():]))
            local = names[m.group(2)] = f"_R{len(names)}"
            if kept is None or m.group(2) in kept:
                out.append(f"{ln[:m.end()]}{local} = {expr}")
            else:  # read only by the statements after it here: the local alone
                out.append(f"{m.group(1)}{local} = {expr}")
        elif ln.startswith("r[") and ln.endswith("= _v"):  # the phis' registers
            regs = _P_READ.findall(ln)
            for reg in regs:
                names[reg] = f"_R{len(names)}"
            out.append(f"{ln[:-2]}{''.join(names[reg] + ', ' for reg in regs)}= _v")
        else:
            out.append(_P_READ.sub(read, _P_INT_READ.sub(int_read, ln)))
    return out


def _compile_block(i: int, name: str, block: Any, ns: dict[str, Any], ints: frozenset[str] = frozenset(),
                   kept: frozenset[str] | None = None, prefix: str = "_b") -> tuple[Any, bool]:
    """Block `i` as the function `{prefix}{i}` in `ns` (its fallback closures
    `_s{i}_{j}` / `_f{i}_{j}` too), and whether it is a generator; `kept`:
    the registers it sets in `r` (`_locals`; None: all)."""
    lines, gen = _phis(name, block.phi_srcs), False
    for j, ins in enumerate(block.body):
        dst = f"r[{ins.dst!r}]"
        if ins.call_src is not None:  # a load or a store: no request to the scheduler
            lines.append(f"{dst} = {ins.call_src}" if ins.dst is not None else ins.call_src)
        elif ins.sync is not None:
            gen = True
            req = ins.sync_src
            if req is None:
                req = f"_s{i}_{j}(r)"
                ns[f"_s{i}_{j}"] = ins.sync
            lines.append(f"{dst} = (yield {req})" if ins.dst is not None else f"yield {req}")
        else:
            expr = ins.src
            if expr is None:
                expr = f"_f{i}_{j}(r)"
                ns[f"_f{i}_{j}"] = ins.fn
            lines.append(f"{dst} = {expr}")  # an instruction without a result stores r[None], as llsim does
    loop = _self_loop(name, block, lines)
    if loop is None:
        lines.append(block.term_src)
        lines = _locals(lines, ints, kept)
    else:
        lines = _looped(_locals(lines + loop[0], ints, kept), len(block.phi_srcs) > 0, loop[1])
    src = f"def {prefix}{i}(r, prev):\n" + "".join(f"    {ln}\n" for ln in lines)
    exec(_code(src, name), ns)  # our own generated source
    return ns[f"{prefix}{i}"], gen


# a conditional branch's terminator as `_term_src` writes it
_P_CONDTERM = re.compile(r"return '((?:[^'\\]|\\.)*)' if (.*) else '((?:[^'\\]|\\.)*)'")


def _self_loop(name: str, block: Any, lines: list[str]) -> tuple[list[str], str] | None:
    """For a block that branches back to itself (a loop of one block, most hot loops' latch), the statements
    that end one trip (`_cont`, whether it loops again, then the phis' values for the block itself, `_v`), and
    the block it leaves to; None for any other block (or a phi with no arm from the block itself, which
    `_phis` makes raise as `llsim._thread` does: left to the plain form)."""
    m = _P_CONDTERM.fullmatch(block.term_src)
    if m is None or (m.group(1) == name) == (m.group(3) == name) or any("\n" in ln for ln in lines):
        return None
    arms = [next((src for src, pred in arms if pred == name), None) for _, arms in block.phi_srcs]
    if None in arms:
        return None
    again = f"_cont = {m.group(2)}" if m.group(1) == name else f"_cont = not ({m.group(2)})"
    out = [again]
    if arms:
        out.append(f"_v = ({''.join(a + ', ' for a in arms)})")  # (read after the trip's statements: their locals)
    return out, m.group(3) if m.group(1) == name else m.group(1)


def _looped(lines: list[str], phis: bool, leave: str) -> list[str]:
    """A self-looping block's statements (`_locals`'s, ending in `_self_loop`'s) as one `while` loop: the phis
    for the block it came from once, then each trip's statements, its exit, and the phis for the block itself,
    which set the same registers and locals as the first (their line of `_locals`, repeated). The same
    statements in the same order as a call of the block a trip; each trip past the first counts toward
    `thread`'s bound on a thread's steps (`_trips`)."""
    tail = 2 if phis else 1
    body, (cont, *vals) = lines[:-tail], lines[-tail:]
    start = 0
    if phis:  # the phis' dispatch (`_phis`), ending in the line that sets their registers from `_v`
        start = next(j for j, ln in enumerate(body) if ln.startswith("r[") and ln.endswith("= _v")) + 1
    out = [*body[:start], "_trips = 0", "while True:"]
    out += [f"    {ln}" for ln in body[start:]]
    out += [f"    {cont}", "    if not _cont:", f"        return {leave!r}", "    _trips += 1",
            "    if _trips > 10_000_000:", "        raise RuntimeError('runaway loop')"]
    if phis:
        out += [f"    {vals[0]}", f"    {body[start - 1]}"]
    return out


_CODE: dict[tuple[str, str], Any] = {}


def _code(src: str, name: str) -> Any:
    """The block's code object, compiled once a process: the tests simulate the
    same kernels many times (a parametrized test recompiles its kernel), and
    compiling was a tenth of a simulation's time. Bounded: cleared past 20,000."""
    key = (src, name)
    code = _CODE.get(key)
    if code is None:
        if len(_CODE) > 20_000:
            _CODE.clear()
        code = _CODE[key] = compile(src, f"<llsim block {name}>", "exec")
    return code


def _phis(name: str, phis: list[tuple[str, list[tuple[str, str]]]]) -> list[str]:
    """The block's phis: every value for the block it came from (`prev`), then
    the registers in order; the first phi without an arm for `prev` raises as
    `llsim._thread` does."""
    if not phis:
        return []
    preds = list(dict.fromkeys(p for _, arms in phis for _, p in arms))
    out = []
    for k, pred in enumerate(preds):
        out.append(f"{'if' if k == 0 else 'elif'} prev == {pred!r}:")
        vals = []
        for dst, arms in phis:
            src = next((s for s, p in arms if p == pred), None)
            if src is None:
                out.append(f"    raise AssertionError({f'phi {dst} in {name} has no arm for {pred}'!r})")
                break
            vals.append(src)
        else:
            out.append(f"    _v = ({''.join(v + ', ' for v in vals)})")
    out.append("else:")
    out.append(f"    raise AssertionError({'phi ' + phis[0][0] + ' in ' + name + ' has no arm for '!r} + str(prev))")
    out.append(f"{''.join(f'r[{d!r}], ' for d, _ in phis)}= _v")
    return out


def thread(prog: Any, regs: dict[str, Any], every: bool = True) -> Iterator[tuple]:
    """`llsim._thread` on the compiled blocks: the same phis, steps and
    requests (`every`: `compile_program`'s)."""
    code = compile_program(prog, every)
    name: str | None = "entry"
    prev = ""
    steps = 0
    while name is not None:
        fn, gen = code[name]
        nxt = (yield from fn(regs, prev)) if gen else fn(regs, prev)
        steps += 1
        if steps > 10_000_000:
            raise RuntimeError("runaway loop")
        prev, name = name, nxt
