"""llsim's parser (tests only): the LLVM IR text of one kernel -> `Program`, its
basic blocks of instructions (each a closure over the registers and, for the
block compiler `llsim_blocks`, the same computation as Python source)."""

from __future__ import annotations

import collections
import itertools
import operator
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llsim_fast
import numpy as np
from llsim_ops import (
    _BINOPS,
    _CASTS,
    _INLINE_OPS,
    _INTRINSICS,
    _SCMP,
    _UCMP,
    _WORD,
    _add_round_odd_scalar,
    _fcmp,
    _fma,
    _icmp,
    _scalar_binop,
    _scalar_cast,
)
from llsim_values import _FLOATS, Unsupported, _bf16, _bits, _signed, _size, _vec, knob

_TIMER = itertools.count(1 << 20, 32)  # `%globaltimer`: every read a later time

# the parser's patterns, compiled once (a `re.match(pattern, ..)` call looks its pattern up in
# re's cache: a tenth of a parse)
_P_TYPE = re.compile(r"(ptr addrspace\(\d+\)|ptr|%[\w.]+|[a-z0-9]+)\s*(.*)$", re.S)
_P_DEFINE = re.compile(r"define ptx_kernel void @([\w.$]+)\((.*)\) #0 \{$")
_P_ASSIGN = re.compile(r"%[\w.]+ = ")
_P_PHI_ARM = re.compile(r"\[ ([^,\]]+), %([\w.]+) \]")
_P_SMEM_GEP = re.compile(r"getelementptr \(i8, ptr addrspace\(3\) @smem, i32 (\d+)\)$")
_P_ALIGN = re.compile(r"^(align \d+|noundef)\s+")
_P_BR = re.compile(r"br label %([\w.]+)(?:, !llvm\.loop !\d+)?$")  # (an unrolled loop's latch: `codegen/unroll.py`)
_P_CONDBR = re.compile(r"br i1 (\S+), label %([\w.]+), label %([\w.]+)$")
_P_CAST = re.compile(r"(.+?) (\S+) to (.+)$")
_P_ORDERING = re.compile(r'(?: syncscope\("\w*"\))? (?:unordered|monotonic|acquire|seq_cst)$')
_P_WORD_REST = re.compile(r"(\w+) (.+)$")
_P_ASM = re.compile(r'(.+?) asm (?:sideeffect )?"(.*?)", "(.*?)"\((.*)\)$')
_P_CALL = re.compile(r"(.+?) @([\w.$]+)\((.*)\)$")
_P_TYPE_SUFFIX = re.compile(r"\.(f32|f64|i\d+|f)$")
_P_WAIT_GROUP = re.compile(r"wait_group\.sync\.aligned (\d+)")
_P_PREFETCH = re.compile(r"(^|@pf )(cp\.async\.bulk\.prefetch\.L2\.global|prefetch\.global\.L2) ")
_P_REGISTER = re.compile(r"%[-\w.$]+")  # a register's name (`Program._uses`)
_P_SPLIT = re.compile(r"[,<({\[>)}\]]")  # what `_split_args` looks at


def _const(tok: str, ty: str) -> Any:
    if tok in ("undef", "poison", "zeroinitializer"):
        fz = knob("UNDEF_FLOAT") if tok != "zeroinitializer" else "0.0"
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(_const("0", el) if el not in _FLOATS and el != "bfloat" else _const(fz, el)
                         for _ in range(n))
        return _const(fz, ty) if ty in _FLOATS or ty == "bfloat" else 0
    if tok == "true":
        return 1
    if tok == "false":
        return 0
    if ty in _FLOATS or ty == "bfloat":
        if tok.startswith("0x"):
            d = struct.unpack("<d", struct.pack("<Q", int(tok[2:], 16)))[0]
        else:
            d = float(tok)
        return _bf16(d) if ty == "bfloat" else _FLOATS[ty](d)
    return int(tok) & ((1 << _bits(ty)) - 1)


def _split_args(s: str) -> list[str]:
    """Split at top-level commas (not inside <>, (), {}, []); a last part that
    is blank is dropped. Only the commas and brackets are visited (a loop over
    every character was a sixth of a parse)."""
    out, depth, start = [], 0, 0
    for m in _P_SPLIT.finditer(s):
        ch = m.group()
        if ch == ",":
            if depth == 0:
                out.append(s[start:m.start()].strip())
                start = m.end()
        elif ch in "<({[":
            depth += 1
        else:
            depth -= 1
    last = s[start:].strip()
    if last:
        out.append(last)
    return out


def _take_type(s: str) -> tuple[str, str]:
    """(type, rest) from the start of `s`."""
    s = s.strip()
    if s[0] in "<{":
        close = ">" if s[0] == "<" else "}"
        depth = 0
        for i, ch in enumerate(s):
            if ch in "<{":
                depth += 1
            elif ch in ">}":
                depth -= 1
                if depth == 0:
                    assert ch == close
                    return s[:i + 1], s[i + 1:].strip()
    m = _P_TYPE.match(s)
    assert m, s
    return m.group(1), m.group(2)


_FLAGS = {"nsw", "nuw", "exact", "afn", "contract", "fast", "nnan", "ninf", "nsz", "arcp", "reassoc",
          "inbounds", "disjoint", "nneg", "samesign"}


def _contracts(s: str) -> bool:
    """Whether the flags at the start of `s` allow contraction (`contract` or `fast`)."""
    for w in s.split(" "):
        if w not in _FLAGS:
            return False
        if w in ("contract", "fast"):
            return True
    return False


def _strip_flags(s: str) -> str:
    words = s.split(" ")
    while words and words[0] in _FLAGS:
        words.pop(0)
    return " ".join(words)


@dataclass
class _Ins:
    dst: str | None
    fn: Callable[[dict[str, Any]], Any] | None  # plain instruction: regs -> value
    sync: Callable[[dict[str, Any]], tuple] | None = None  # a request to the scheduler
    text: str = ""
    # the same computation as Python source over `r` (the registers) and the
    # names in `Program.ns`, for the block compiler (llsim_blocks); None: `fn`
    # (or `sync`) is called
    src: str | None = None
    sync_src: str | None = None
    # a load's or store's request done in place by the compiled block
    # (`llsim_fast.load` / `store`, what the scheduler does with the request)
    call_src: str | None = None
    # `src` is a Python `int` whatever the registers it reads hold (an integer
    # operation's masked result, an `int(..)` of a comparison): the block compiler
    # reads the register without `int(..)` (llsim_blocks)
    int_result: bool = False


@dataclass
class _Block:
    name: str
    phis: list[tuple[str, list[tuple[Callable[[dict[str, Any]], Any], str]]]]
    body: list[_Ins]
    term: Callable[[dict[str, Any]], str | None]
    term_src: str = ""  # the terminator as a Python statement (llsim_blocks)
    phi_srcs: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)  # phis' arms as source


class Program:
    """One parsed kernel."""

    def __init__(self, text: str, smem_bytes: int = 0) -> None:
        self.blocks: dict[str, _Block] = {}
        # the module's static shared arrays (a cluster's exchange buffers and mbarriers,
        # `@tilec_cluster<k>`, `@tilec_cluster_bars`), placed after the `smem_bytes` of `@smem`:
        # name -> offset; `smem_total` the shared bytes a block has
        self.statics: dict[str, int] = {}
        end = -(-smem_bytes // 1024) * 1024
        for name, count, ty, align in _P_STATIC_SMEM.findall(text):
            end = -(-end // int(align)) * int(align)
            self.statics["@" + name] = end
            end += int(count) * _size(ty)
        self.smem_total = end if self.statics else smem_bytes
        self.params: list[tuple[str, str]] = []
        self.ns: dict[str, Any] = dict(_FAST_NS)  # the objects the instructions' `src` names
        self._once: dict[tuple[str, str], str] = {}  # `_bind_once`
        self.compiled: dict[bool, Any] | None = None  # llsim_blocks: its `_Blocks` by `every` register or not
        self.compiled_ns: dict[str, Any] = {}  # and the functions' globals
        self.source = text  # (what `SimDevice.run`'s memo of launches is keyed by)
        # registers an instruction sets to a Python `int` (`_Ins.int_result`), and those whose
        # instruction computes a constant from literals (`_fold`): their literal, which `_src`
        # writes for the register's later reads (SSA: a read never runs before the definition)
        self.ints: set[str] = set()
        self.consts: dict[str, str] = {}
        lines = text.splitlines()
        i = 0
        while not lines[i].startswith("define "):
            i += 1
        head = lines[i]
        m = _P_DEFINE.match(head)
        assert m, head
        self.name = m.group(1)
        for p in _split_args(m.group(2)):
            ty, rest = _take_type(p)
            name = rest.split()[-1]
            self.params.append((ty, name))
        i += 1
        # contraction (`llsim.CONTRACT`, `_fusable`): how often each register is named in the body (its
        # definition and its uses), and the block's `fmul contract`s: register -> (type, a, b, text)
        self._uses = collections.Counter(
            _P_REGISTER.findall("\n".join(itertools.takewhile(lambda ln: ln != "}", lines[i:]))))
        self._fmuls: dict[str, tuple[str, str, str, str]] = {}
        self._contract = bool(knob("CONTRACT"))
        cur_name, phis, body, phi_srcs = None, [], [], []
        for line in lines[i:]:
            if line == "}":
                break
            for sub in line.split("\n"):
                if not sub.strip():
                    continue
                if not sub.startswith(" "):
                    cur_name = sub.rstrip(":")
                    phis, body, phi_srcs = [], [], []
                    self._fmuls = {}  # (a selection DAG is one basic block: no fma across blocks)
                    continue
                ins = sub.strip()
                if ins.startswith("br ") or ins == "ret void":
                    self.blocks[cur_name] = _Block(cur_name, phis, body, self._term(ins),  # type: ignore[index]
                                                   self._term_src(ins), phi_srcs)
                    continue
                dst, rhs = (ins.split(" = ", 1) if _P_ASSIGN.match(ins) else (None, ins))
                if rhs.startswith("phi "):
                    ty, rest = _take_type(rhs[4:])
                    arms = []
                    for arm in _P_PHI_ARM.findall(rest):
                        arms.append((self._val(arm[0], ty), arm[1]))
                    phis.append((dst, arms))  # type: ignore[arg-type]
                    phi_srcs.append((dst, [(self._src(a[0], ty), a[1])  # type: ignore[misc]
                                           for a in _P_PHI_ARM.findall(rest)]))
                    continue
                ins = self._ins(dst, rhs)
                if dst is not None and ins.int_result:
                    self.ints.add(dst)
                    folded = _fold(ins.src) if ins.src is not None else None
                    if folded is not None:
                        ins.src = self.consts[dst] = folded
                body.append(ins)

    # -- operands
    def _val(self, tok: str, ty: str) -> Callable[[dict[str, Any]], Any]:
        tok = tok.strip()
        if tok.startswith("%"):
            return operator.itemgetter(tok)  # a register read: the most frequent operation
        if tok.startswith("@"):
            if tok == "@tilec_trace":  # the block timeline's module global (`SimDevice(trace=True)`)
                return lambda r: ("$tilec_trace", 0)
            if tok in self.statics:
                return lambda r, off=self.statics[tok]: ("$smem", off)
            assert tok == "@smem", tok
            return lambda r: ("$smem", 0)
        m = _P_SMEM_GEP.match(tok)
        if m:  # the scratch area after the buffers GPU IR allocated
            off = int(m.group(1))
            return lambda r, off=off: ("$smem", off)
        c = _const(tok, ty)
        return lambda r, c=c: c

    def _bind(self, obj: Any) -> str:
        """A name in `ns` for `obj` (source of the compiled blocks)."""
        name = f"_k{len(self.ns)}"
        self.ns[name] = obj
        return name

    def _bind_once(self, key: tuple[str, str], make: Callable[[str], Any]) -> str:
        """`_bind(make(key[1]))`, one name a key (a type's loader or storer: `llsim_fast.loader`)."""
        name = self._once.get(key)
        if name is None:
            name = self._once[key] = self._bind(make(key[1]))
        return name

    def _src(self, tok: str, ty: str) -> str:
        """`_val(tok, ty)` as a Python expression over `r`."""
        tok = tok.strip()
        if tok.startswith("%"):
            return self.consts.get(tok) or f"r[{tok!r}]"
        c = self._val(tok, ty)(None)  # type: ignore[arg-type]  # a constant or a smem address
        if type(c) is int:  # an integer constant as a literal (`_int` folds its `int()`)
            return repr(c)
        return self._bind(c)

    def _typed_src(self, s: str) -> str:
        ty, rest = _take_type(s)
        rest = _P_ALIGN.sub("", rest)
        return self._src(rest, ty)

    def _binop_src(self, op: str, fn: Any, ty: str, sa: str, sb: str) -> str:
        """`fn(a, b, ty)` as source: the scalar fast paths of `_scalar_binop` inline."""
        if ty.startswith("<"):
            return f"{self._bind(fn)}({sa}, {sb}, {ty!r})"
        if getattr(fn, "int_op", None) is not None:
            bits = _bits(ty)
            if op in _INLINE_OPS:
                return f"(({_int(sa)} {_INLINE_OPS[op]} {_int(sb)}) & {(1 << bits) - 1})"
            return f"({self._bind(fn.int_op)}({_int(sa)}, {_int(sb)}, {bits}) & {(1 << bits) - 1})"
        if ty == "bfloat":
            conv = "_bf16"  # (`llsim_fast.bf16`)
            if op in _INLINE_OPS:
                return f"{conv}({sa} {_INLINE_OPS[op]} {sb})"
            return f"{conv}({self._bind(fn.float_op)}({sa}, {sb}))"
        # `_FLOATS[ty](x)` of the result: x itself when NumPy computed it in `ty` already
        # (two operands of the type), else `llsim_fast`'s exact conversion
        if op == "fdiv":  # np.divide of two NumPy floats of the type is their `/`
            return (f"(_fa / _fb if type(_fa := {sa}) is _T_{ty} and type(_fb := {sb}) is _T_{ty} "
                    f"else _to_{ty}({self._bind(fn.float_op)}(_fa, _fb)))")
        x = f"{sa} {_INLINE_OPS[op]} {sb}" if op in _INLINE_OPS else f"{self._bind(fn.float_op)}({sa}, {sb})"
        return f"(_x if type(_x := {x}) is _T_{ty} else _to_{ty}(_x))"

    def _term_src(self, ins: str) -> str:
        if ins == "ret void":
            return "return None"
        m = _P_BR.match(ins)
        if m:
            return f"return {m.group(1)!r}"
        m = _P_CONDBR.match(ins)
        assert m, ins
        return f"return {m.group(2)!r} if {self._src(m.group(1), 'i1')} else {m.group(3)!r}"

    def _typed(self, s: str) -> tuple[str, Callable[[dict[str, Any]], Any]]:
        ty, rest = _take_type(s)
        rest = _P_ALIGN.sub("", rest)
        return ty, self._val(rest, ty)

    def _term(self, ins: str) -> Callable[[dict[str, Any]], str | None]:
        if ins == "ret void":
            return lambda r: None
        m = _P_BR.match(ins)
        if m:
            return lambda r, t=m.group(1): t
        m = _P_CONDBR.match(ins)
        assert m, ins
        c = self._val(m.group(1), "i1")
        return lambda r, c=c, a=m.group(2), b=m.group(3): a if c(r) else b

    def _ins(self, dst: str | None, rhs: str) -> _Ins:
        op, _, rest = rhs.partition(" ")
        contract = _contracts(rest)
        rest = _strip_flags(rest)
        fn = _BINOPS.get(op)
        if fn is not None:
            ty, rest2 = _take_type(rest)
            a, b = _split_args(rest2)
            if contract and self._contract and ty in ("float", "double"):
                if op == "fmul" and dst is not None:
                    self._fmuls[dst] = (ty, a.strip(), b.strip(), rhs)
                elif op in ("fadd", "fsub"):
                    fused = self._fusable(op, ty, a.strip(), b.strip(), rhs)
                    if fused is not None:
                        return _Ins(dst, fused[0], text=fused[1], src=fused[2])
            va, vb = self._val(a, ty), self._val(b, ty)
            return _Ins(dst, _scalar_binop(fn, ty, va, vb) or (lambda r: fn(va(r), vb(r), ty)), text=rhs,
                        src=self._binop_src(op, fn, ty, self._src(a, ty), self._src(b, ty)),
                        int_result=getattr(fn, "int_op", None) is not None and not ty.startswith("<"))
        if op == "fneg":
            ty, v = self._typed(rest)
            return _Ins(dst, lambda r: -v(r), text=rhs, src=f"-{self._typed_src(rest)}")
        if op in ("icmp", "fcmp"):
            pred, rest2 = rest.split(" ", 1)
            ty, rest3 = _take_type(rest2)
            a, b = _split_args(rest3)
            va, vb = self._val(a, ty), self._val(b, ty)
            cmp = _icmp(pred, ty) if op == "icmp" else _fcmp(pred)
            sa, sb = self._src(a, ty), self._src(b, ty)
            if op == "icmp" and pred in _UCMP:  # unsigned: `int(op(int(a), int(b)))`
                src = f"int({_int(sa)} {_UCMP[pred]} {_int(sb)})"
            elif op == "icmp" and pred in _SCMP:  # signed: both sides through `_signed(int(v), bits)`
                n = _bits(ty)
                sx = [repr(_signed(int(v), n)) if _literal(v) else
                      f"(_x{j} - {1 << n} if (_x{j} := int({v})) >= {1 << (n - 1)} else _x{j})" for j, v in ((0, sa), (1, sb))]
                src = f"int({sx[0]} {_SCMP[pred]} {sx[1]})"
            elif op == "fcmp" and pred in llsim_fast.FCMP and "<" not in ty:
                # `_fcmp`'s f on two NumPy floats as IEEE comparisons
                src = (f"({llsim_fast.FCMP[pred]} if type(_fa := {sa}) in _FTYPES and type(_fb := {sb}) "
                       f"in _FTYPES else {self._bind(cmp)}(_fa, _fb))")
                k = self.ns.get(sb) if _P_BOUND.fullmatch(sb) else None
                if type(k) in llsim_fast.FTYPES and k == k:  # a constant second operand, not NaN: its tests folded
                    test = {"uno": "int(_fa != _fa)", "ord": "int(_fa == _fa)"}.get(pred, llsim_fast.FCMP[pred])
                    src = f"({test.replace('_fb', sb)} if type(_fa := {sa}) in _FTYPES else {self._bind(cmp)}(_fa, {sb}))"
            else:
                src = f"{self._bind(cmp)}({sa}, {sb})"
            return _Ins(dst, lambda r: cmp(va(r), vb(r)), text=rhs, src=src,
                        int_result=op == "icmp" and (pred in _UCMP or pred in _SCMP))
        if op == "select":
            c, a, b = _split_args(rest)
            vc = self._typed(c)[1]
            va, vb = self._typed(a)[1], self._typed(b)[1]
            return _Ins(dst, lambda r: va(r) if vc(r) else vb(r), text=rhs,
                        src=f"({self._typed_src(a)} if {self._typed_src(c)} else {self._typed_src(b)})")
        if op in _CASTS:
            m = _P_CAST.match(rest)
            assert m, rhs
            src_ty, v, dst_ty = m.group(1), self._val(m.group(2), m.group(1)), m.group(3)
            cast = _CASTS[op]
            sv = self._src(m.group(2), src_ty)
            fast = _scalar_cast(op, v, src_ty, dst_ty)
            src = (f"_to_{dst_ty}({sv})" if fast is not None
                   else f"{self._bind(cast)}({sv}, {src_ty!r}, {dst_ty!r})")
            if fast is not None and dst_ty != "double" and src_ty in _FLOATS and src_ty != dst_ty:
                # `_to_{dst_ty}`'s shortcut for a non-NaN operand of the source type, inline
                src = f"(_NZ_{dst_ty} + float(_x) if type(_x := {sv}) is _T_{src_ty} and _x == _x else _to_{dst_ty}(_x))"
            word = _WORD.get((src_ty, dst_ty)) if op == "bitcast" else None
            if (src_ty, dst_ty) in _FAST_BITCASTS and op == "bitcast":  # `llsim_fast`'s exact forms
                src = f"{_FAST_BITCASTS[src_ty, dst_ty]}({sv})"
            elif op == "fptrunc" and dst_ty == "<2 x half>":
                src = f"_trunc16({sv})"
            elif op == "fptrunc" and dst_ty == "bfloat":  # `_cast_fptrunc`: `_bf16(np.float32(v))`
                src = f"_bf16(_to_float({sv}))"
            elif op in ("trunc", "zext", "sext") and "<" not in src_ty + dst_ty:
                mask = (1 << _bits(dst_ty)) - 1  # `_cast_trunc` / `_cast_zext` / `_cast_sext` inline
                n = _bits(src_ty)
                src = {"trunc": f"({_int(sv)} & {mask})", "zext": _int(sv),
                       "sext": f"((_x - {1 << n} if (_x := {_int(sv)}) >= {1 << (n - 1)} else _x) & {mask})"}[op]
            elif word is not None:  # `_cast_bitcast`'s word paths inline
                a, w0, w1 = self._bind(np.array), self._bind(word[0]), self._bind(word[1])
                src = (f"{a}(int({sv}) & {(1 << _bits(src_ty)) - 1}, {w0}).view({w1})[()]" if src_ty[0] == "i"
                       else f"int({a}({sv}, {w0}).view({w1}))")
            return _Ins(dst, fast or (lambda r: cast(v(r), src_ty, dst_ty)), text=rhs, src=src,
                        int_result=op in ("trunc", "zext", "sext") and "<" not in src_ty + dst_ty)
        if op == "getelementptr":
            parts = _split_args(rest)
            ety = parts[0]
            base = self._typed(parts[1])[1]
            idxs = [self._typed(p) for p in parts[2:]]
            assert len(idxs) == 1, rhs
            ity, iv = idxs[0]
            es = _size(ety)
            bits = _bits(ity)
            # _signed(i, bits) inline, on the index evaluated once; a constant index's offset folded
            si = self._typed_src(parts[2])
            sb = self._typed_src(parts[1])
            if (m := _P_READ_SRC.fullmatch(si)) is not None and m.group(1) in self.ints:  # (an int: never None)
                src = (f"((_p := {sb})[0], _p[1] + ((_i - {1 << bits} if (_i := {si}) >= {1 << (bits - 1)}"
                       f" else _i) * {es}))")
            else:
                src = (f"((_p := {sb})[0], _p[1] + ((_i - {1 << bits} if _i >= {1 << (bits - 1)}"
                       f" else _i) if (_i := {si}) is not None else 0) * {es})")
            if _literal(si):
                at = self.ns.get(sb) if _P_BOUND.fullmatch(sb) else None
                if type(at) is tuple and len(at) == 2 and type(at[1]) is int:  # a constant address: folded
                    src = self._bind((at[0], at[1] + _signed(int(si), bits) * es))
                    if dst is not None:
                        self.consts[dst] = src
                else:
                    src = f"((_p := {sb})[0], _p[1] + {_signed(int(si), bits) * es})"
            return _Ins(dst, lambda r: (base(r)[0], base(r)[1] + _signed(iv(r), bits) * es), text=rhs, src=src)
        if op == "load":
            atomic = rest.startswith("atomic ")
            if atomic:
                rest = rest[7:]
            parts = _split_args(rest)
            ty = parts[0]
            if atomic:  # `load atomic T, ptr %p [syncscope(..)] ORDERING, align N`: one load like any other here
                parts[1] = _P_ORDERING.sub("", parts[1])
            p = self._typed(parts[1])[1]
            return _Ins(dst, None, sync=lambda r: ("load", p(r), ty), text=rhs,
                        sync_src=f"('load', {self._typed_src(parts[1])}, {ty!r})",
                        call_src=f"{self._bind_once(('ld', ty), llsim_fast.loader)}(_mem, r['$tid.x'], "
                                 f"{self._typed_src(parts[1])})",
                        int_result=_P_INT_TY.fullmatch(ty) is not None)  # (`load_value`: an int)
        if op == "store":
            parts = _split_args(rest)
            ty, v = self._typed(parts[0])
            p = self._typed(parts[1])[1]
            return _Ins(None, None, sync=lambda r: ("store", p(r), ty, v(r)), text=rhs,
                        sync_src=f"('store', {self._typed_src(parts[1])}, {ty!r}, {self._typed_src(parts[0])})",
                        call_src=f"{self._bind_once(('st', ty), llsim_fast.storer)}(_mem, r['$tid.x'], "
                                 f"{self._typed_src(parts[1])}, {self._typed_src(parts[0])})")
        if op == "extractelement":
            a, b = _split_args(rest)
            v, i = self._typed(a)[1], self._typed(b)[1]
            return _Ins(dst, lambda r: v(r)[i(r)], text=rhs, src=f"{self._typed_src(a)}[{self._typed_src(b)}]")
        if op == "insertelement":
            a, b, c = _split_args(rest)
            v, x, i = self._typed(a)[1], self._typed(b)[1], self._typed(c)[1]

            def ins(r: dict[str, Any]) -> Any:
                t = list(v(r))
                t[i(r)] = x(r)
                return tuple(t)

            sv, si, sx = self._typed_src(a), self._typed_src(c), self._typed_src(b)
            src = f"_insert({sv}, {si}, {sx})"
            if _literal(si) and "<" in (vty := _take_type(a)[0]):  # a constant index: the tuple's slices
                k = int(si)
                if 0 <= k < _vec(vty)[0]:
                    src = (f"(_iv[:{k}] + ({sx},) + _iv[{k + 1}:] if type(_iv := {sv}) is tuple and len(_iv) == {_vec(vty)[0]} "
                           f"else _insert(_iv, {k}, {sx}))")
            return _Ins(dst, ins, text=rhs, src=src)
        if op == "extractvalue":
            parts = _split_args(rest)
            v = self._typed(parts[0])[1]
            n = int(parts[1])
            return _Ins(dst, lambda r: v(r)[n], text=rhs, src=f"{self._typed_src(parts[0])}[{n}]")
        if op == "atomicrmw":
            m = _P_WORD_REST.match(rest)
            assert m
            kind = m.group(1)
            parts = _split_args(m.group(2))
            p = self._typed(parts[0])[1]
            ty, v = self._typed(parts[1].replace(" monotonic", ""))
            return _Ins(dst, None, sync=lambda r: ("atomic", kind, p(r), ty, v(r)), text=rhs)
        if op == "cmpxchg":
            parts = _split_args(rest)
            p = self._typed(parts[0])[1]
            ty, old = self._typed(parts[1])
            _, new = self._typed(parts[2].replace(" monotonic monotonic", ""))
            return _Ins(dst, None, sync=lambda r: ("cas", p(r), ty, old(r), new(r)), text=rhs)
        if op == "call":
            return self._call(dst, rest, rhs)
        raise Unsupported(rhs)

    def _fusable(self, op: str, ty: str, a: str, b: str, rhs: str) -> tuple[Any, str, str] | None:
        """An `fadd` / `fsub contract` of `ty` (f32 / f64) whose operand is an
        `fmul contract` of this block, as the one fma that NVPTX's DAG combiner
        makes of them (`fma.rn`, rounded once): (closure, text, src), or None.
        NVPTX asks for aggressive fusion (`enableAggressiveFMAFusion`), so a
        product of several uses is fused into each contractible add of its
        block (and still computed for its other uses); where both operands are
        products the one of fewer uses is taken, the first at equal counts
        (DAGCombiner's `visitFADDForFMACombine` / `visitFSUBForFMACombine`);
        a - x * y is fma(-x, y, a), x * y - c is fma(x, y, -c) (negation is
        exact). Scalar f32 / f64 only: a vector or half product stays two
        roundings here (the backend gives neither `contract`)."""
        cands = [(k, m) for k, reg in enumerate((a, b)) if (m := self._fmuls.get(reg)) is not None and m[0] == ty]
        if not cands:
            return None
        pick = cands[1] if len(cands) == 2 and self._uses[a] > self._uses[b] else cands[0]
        k, (_, x, y, mul_text) = pick
        c = b if k == 0 else a
        neg_c, neg_x = op == "fsub" and k == 0, op == "fsub" and k == 1
        vx, vy, vc = self._val(x, ty), self._val(y, ty), self._val(c, ty)
        tys = [ty]

        def fn(r: dict[str, Any]) -> Any:
            xv, cv = vx(r), vc(r)
            return _fma(-xv if neg_x else xv, vy(r), -cv if neg_c else cv, tys=tys, name="llvm.fma")

        sx, sy, sc = self._src(x, ty), self._src(y, ty), self._src(c, ty)
        sx, sc = (f"-{sx}" if neg_x else sx), (f"-{sc}" if neg_c else sc)
        if ty == "float":
            src = f"_fma32({sx}, {sy}, {sc}, {self._bind(_add_round_odd_scalar)})"
        else:
            src = f"{self._bind(_fma)}({sx}, {sy}, {sc}, tys={self._bind(tys)}, name='llvm.fma')"
        return fn, f"{rhs} ; fused with {mul_text}", src

    def _call(self, dst: str | None, rest: str, rhs: str) -> _Ins:
        m = _P_ASM.match(rest)
        if m:
            asm_args = _split_args(m.group(4))
            return self._asm(dst, m.group(2), [self._typed(a)[1] for a in asm_args], rhs,
                             [self._typed_src(a) for a in asm_args])
        m = _P_CALL.match(rest)
        if not m:
            raise Unsupported(rhs)
        name = m.group(2)
        args = [self._typed(a) for a in _split_args(m.group(3))] if m.group(3).strip() else []
        vals = [v for _, v in args]
        tys = [t for t, _ in args]
        ss = [self._typed_src(a) for a in _split_args(m.group(3))] if m.group(3).strip() else []  # (sources)
        if name == "llvm.nvvm.read.ptx.sreg.globaltimer":  # ticks 32 ns a read
            return _Ins(dst, lambda r: next(_TIMER), text=rhs)
        if name.startswith("llvm.nvvm.read.ptx.sreg."):
            reg = name[len("llvm.nvvm.read.ptx.sreg."):]
            # (the thread's and block's indices are ints of `range`s: `run_block`, `SimDevice.run`)
            return _Ins(dst, lambda r: r["$" + reg], text=rhs, src=f"r[{'$' + reg!r}]",
                        int_result=reg in ("tid.x", "ctaid.x", "ctaid.y", "ctaid.z"))
        if name == "llvm.nvvm.barrier.cta.sync.aligned.all":
            return _Ins(None, None, sync=lambda r: ("bar",), text=rhs, sync_src="('bar',)")
        if name.startswith("llvm.nvvm.shfl.sync."):
            mode = name.split(".")[4]
            return _Ins(dst, None, sync=lambda r: ("shfl", mode, vals[1](r), vals[2](r), vals[3](r)), text=rhs,
                        sync_src=_req("'shfl'", repr(mode), *ss[1:4]))
        if name.startswith(("llvm.nvvm.cp.async.cg.shared.global.", "llvm.nvvm.cp.async.ca.shared.global.")):
            # an asynchronous copy: it reads now and lands at the wait_group that retires its group
            return _Ins(None, None, sync=lambda r: ("copy", vals[0](r), vals[1](r),
                                                    int(name.split(".")[-2 if name.endswith(".s") else -1]),
                                                    vals[2](r) if len(vals) > 2 else None), text=rhs)
        if name == "llvm.nvvm.cp.async.commit.group":
            return _Ins(None, None, sync=lambda r: ("cp_commit",), text=rhs)
        if name == "llvm.nvvm.cp.async.wait.group":
            return _Ins(None, None, sync=lambda r: ("cp_wait", int(vals[0](r))), text=rhs)
        if name == "llvm.nvvm.cp.async.wait.all":
            return _Ins(None, None, sync=lambda r: ("cp_wait", 0), text=rhs)
        if name.startswith(("llvm.nvvm.ldmatrix.", "llvm.nvvm.mma.", "llvm.nvvm.vote.")):
            return _Ins(dst, None, sync=lambda r: ("warp", name, [v(r) for v in vals]), text=rhs,
                        sync_src=_req("'warp'", repr(name), f"[{', '.join(ss)}]"))
        hop = _hopper_call(name, vals, dst, rhs, ss)
        if hop is not None:
            return hop
        base = _P_TYPE_SUFFIX.sub("", name)
        if base.startswith("llvm.fptosi.sat") or base.startswith("llvm.fptoui.sat"):
            base = ".".join(base.split(".")[:3])
        f = _INTRINSICS.get(base)
        if f is None:
            raise Unsupported(rhs)
        srcs = [self._typed_src(a) for a in _split_args(m.group(3))] if m.group(3).strip() else []
        src = f"{self._bind(f)}({''.join(x + ', ' for x in srcs)}tys={self._bind(tys)}, name={name!r})"
        if hasattr(f, "fast"):  # min/max: their f32 path without np.isnan
            src = f"{self._bind(f.fast)}({srcs[0]}, {srcs[1]})"
        elif hasattr(f, "approx") and tys[0] == "float":  # `llsim_fast.approx32`: np.float32(hw(x))
            src = f"{self._bind(llsim_fast.approx32(f.unary, *f.approx))}({srcs[0]})"
        elif hasattr(f, "unary"):  # `_unary`'s g inline
            ty = "double" if tys[0] == "double" else "float"
            src = f"(_x if type(_x := {self._bind(f.unary)}({srcs[0]})) is _T_{ty} else _to_{ty}(_x))"
        elif f is _INTRINSICS["llvm.fma"] and tys[0] == "float":
            src = f"_fma32({srcs[0]}, {srcs[1]}, {srcs[2]}, {self._bind(_add_round_odd_scalar)})"
        elif f is _INTRINSICS["llvm.nvvm.ff2f16x2.rn"]:
            src = f"_pair16({srcs[0]}, {srcs[1]})"
        return _Ins(dst, lambda r: f(*[v(r) for v in vals], tys=tys, name=name), text=rhs, src=src)


    def _asm(self, dst: str | None, text: str, vals: list[Callable[[dict[str, Any]], Any]], rhs: str,
             ss: list[str]) -> _Ins:
        if text == "" and dst is None:  # `g.Touch`: registers kept live, no instruction
            return _Ins(None, lambda r: None, text=rhs)
        if text == "mov.b32 $0, $1;":  # `g.Opaque`: a copy
            return _Ins(dst, lambda r: vals[0](r), text=rhs)
        if text == ("{ .reg .b32 t; .reg .pred q; mad.lo.u32 t, $1, $1, $1; and.b32 t, t, 1; setp.ne.u32 q, t, 0; "
                    "vote.sync.any.pred q, q, -1; selp.u32 t, 1, 0, q; or.b32 $0, $2, t; }"):
            # a wait's parity pinned after values (`hopper._after`): computed as written, mod 2^32, each thread's
            # own t for the warp's vote (t is 0 in every lane, so the vote of the lanes is each lane's)
            def pinned(r: dict[str, Any]) -> Any:
                b, ph = int(vals[0](r)) & 0xFFFFFFFF, vals[1](r)
                return type(ph)(int(ph) | (((b * b + b) & 0xFFFFFFFF) & 1))
            return _Ins(dst, pinned, text=rhs)
        if text.startswith("wgmma.wait_group"):
            # the registers pass through, once the groups they come from are retired
            n = int(_P_WAIT_GROUP.search(text).group(1))  # type: ignore[union-attr]
            return _Ins(dst, None, sync=lambda r: ("wg_wait", n, tuple(v(r) for v in vals)), text=rhs,
                        sync_src=_req("'wg_wait'", str(n), _req(*ss)))
        if text.startswith("wgmma.mma_async") or text.startswith("wgmma.fence.sync.aligned;"):
            return _Ins(dst, None, sync=lambda r: ("wg", text, [v(r) for v in vals]), text=rhs,
                        sync_src=_req("'wg'", self._bind(text), f"[{', '.join(ss)}]"))
        if text.startswith("atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;"):  # `last_block`'s arrival
            return _Ins(dst, None, sync=lambda r: ("atomic", "add", vals[0](r), "i32", 1), text=rhs)
        if text == "red.release.gpu.global.add.u32 [$0], 1;":  # `arrive_wait`'s arrival (no answer)
            return _Ins(None, None, sync=lambda r: ("atomic", "add", vals[0](r), "i32", 1), text=rhs)
        if text == "ld.acquire.gpu.global.u32 $0, [$1];":  # `arrive_wait`'s poll: a load (an add of 0)
            return _Ins(dst, None, sync=_poll(vals[0]), text=rhs)
        if text.startswith("{ .reg .pred %p; setp.eq.u32 %p, $1, 0; mov.u32 $0, 0; "
                           "@%p atom.relaxed.gpu.global.add.u32 $0, [$2], 1; }"):  # a queue's pull (thread 0)
            return _Ins(dst, None, sync=lambda r: ("qpull", vals[0](r), vals[1](r)), text=rhs)
        if text == "st.relaxed.gpu.global.u32 [$0], 0;":  # its counter's reset
            return _Ins(None, None, sync=lambda r: ("atomic", "xchg", vals[0](r), "i32", 0), text=rhs)
        if text == "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;":  # an L2 policy: opaque here
            return _Ins(dst, lambda r: 0x12F0000000000000, text=rhs)
        if text.startswith("{ .reg .b64 c; mov.u64 c, %clock64; shr.u64 c, c, 63;"):  # the ring's opaque zero
            return _Ins(dst, lambda r: 0, text=rhs)
        if text == "cp.async.cg.shared.global.L2::cache_hint [$0], [$1], 16, $2, $3;":
            # a ring copy with an L2 policy (`codegen/ring.py`): the shared address as an i32
            return _Ins(None, None, sync=lambda r: ("copy", ("$smem", int(vals[0](r))), vals[1](r), 16,
                                                    vals[2](r)), text=rhs)
        cluster = _cluster_asm(text, vals, dst, rhs)
        if cluster is not None:
            return cluster
        if _P_PREFETCH.search(text):
            # an L2 prefetch (`p.prefetch`, PDL's pre-wait forms): a hint, no effect here
            return _Ins(None, lambda r: None, text=rhs)
        raise Unsupported(rhs)


def _poll(addr: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """`arrive_wait`'s poll of its group's counter, as a load. Blocks run one at a
    time here, so a poll that does not find the others in never will: a thread
    polling on and on is an error, not a hang."""
    polls: dict[int, int] = {}

    def request(r: dict[str, Any]) -> Any:
        if len(polls) > 4096:
            polls.clear()
        n = polls[id(r)] = polls.get(id(r), 0) + 1
        if n > 1000:
            raise RuntimeError("llsim: a block polls a counter the group's other blocks never complete "
                               "(`arrive_wait`: blocks run one at a time, in the grid's order)")
        return ("atomic", "add", addr(r), "i32", 0)

    return request


# the names the compiled blocks' source uses for `llsim_fast`'s functions and types
_FAST_NS = {**{f"_to_{ty}": fn for ty, fn in llsim_fast.TO.items()},
            **{f"_T_{ty}": t for ty, t in llsim_fast.TYPES.items()},
            "_NZ_float": llsim_fast.F32(-0.0), "_NZ_half": llsim_fast.F16(-0.0),
            "_trunc16": llsim_fast.trunc16, "_pair16": llsim_fast.pair16, "_fma32": llsim_fast.fma32,
            "_f32_bits": llsim_fast.f32_bits, "_bits_f32": llsim_fast.bits_f32, "_halves_bits": llsim_fast.halves_bits,
            "_bits_halves": llsim_fast.bits_halves, "_f16_bits": llsim_fast.f16_bits, "_bits_f16": llsim_fast.bits_f16,
            "_insert": llsim_fast.insert, "_bf16": llsim_fast.bf16, "_FTYPES": llsim_fast.FTYPES}
_FAST_BITCASTS = {("float", "i32"): "_f32_bits", ("i32", "float"): "_bits_f32", ("<2 x half>", "i32"): "_halves_bits",
                  ("i32", "<2 x half>"): "_bits_halves", ("half", "i16"): "_f16_bits", ("i16", "half"): "_bits_f16"}


_P_INT_TY = re.compile(r"i[0-9]+")
_P_LITERALS = re.compile(r"(?:int\(|[-+*&|^<>=!() 0-9])*")


def _fold(src: str) -> str | None:
    """An integer instruction's source `src` over literals only (`int(4 == 0)`,
    `((0 * 2048) & 4294967295)`): its value as a literal; else None."""
    if not _P_LITERALS.fullmatch(src):
        return None
    try:
        v = eval(src, {"__builtins__": {}, "int": int})  # noqa: S307  (digits, operators and int(): our own source)
    except Exception:  # (a shift or a division the run would raise on: left to the run)
        return None
    return repr(v) if type(v) is int else None


# an operand's source that reads a register (`Program._src`), a name `Program._bind` made
_P_READ_SRC = re.compile(r"r\['([^'\\]+)'\]")
_P_BOUND = re.compile(r"_k\d+")


def _literal(src: str) -> bool:
    """Whether the operand source `src` is an integer literal (`Program._src`)."""
    return src.lstrip("-").isdigit()


def _int(src: str) -> str:
    """`int(src)` as source: a literal as it is."""
    return src if _literal(src) else f"int({src})"


def _req(*parts: str) -> str:
    """A request's tuple as source (`_Ins.sync_src`): the parts' sources."""
    return f"({''.join(p + ', ' for p in parts)})"


_P_STATIC_SMEM = re.compile(r"^@(\w+) = internal addrspace\(3\) global \[(\d+) x (\w+)\] undef, align (\d+)$",
                            re.M)
_P_CLUSTER_INIT = re.compile(r"@p mbarrier\.init\.shared::cta\.b64 \[\$1\+(\d+)\], (\d+);")
_P_EXPECT_TX = re.compile(r"^\{ \.reg \.pred p; setp\.eq\.u32 p, \$0, 0; @p mbarrier\.arrive\.expect_tx\.shared::cta\.b64 "
                          r"_, \[\$1\], (\d+); \}$")
_ST_ASYNC = "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [$0], {$1, $2, $3, $4}, [$5];"
_CLUSTER_TRY = ("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [$1], 0; "
                "selp.u32 $0, 1, 0, p; }")


def _cluster_asm(text: str, vals: list[Callable[[dict[str, Any]], Any]], dst: str | None, rhs: str) -> _Ins | None:
    """A thread-block cluster's exchange (`backend/codegen/cluster.py`; hrev15): thread 0's mbarrier
    inits and arrival with the bytes it expects, the `st.async` pushes into another rank's shared
    memory (`("smem@<rank>", offset)`, made by `mapa`), and the acquiring wait. How the cluster's
    blocks meet is `SimDevice.run`'s (`_run_cluster`)."""
    if text.startswith("{ .reg .pred p; setp.eq.u32 p, $0, 0; @p mbarrier.init.shared::cta.b64 ") \
            and text.endswith("@p fence.mbarrier_init.release.cluster; }"):
        inits = [(int(off), int(n)) for off, n in _P_CLUSTER_INIT.findall(text)]
        return _Ins(None, None, sync=lambda r: ("cluster_init", vals[0](r), vals[1](r), inits), text=rhs)
    m = _P_EXPECT_TX.match(text)
    if m:
        n = int(m.group(1))
        return _Ins(None, None, sync=lambda r: ("cluster_expect", vals[0](r), vals[1](r), n), text=rhs)
    if text == _ST_ASYNC:
        return _Ins(None, None, sync=lambda r: ("st_async", vals[0](r), tuple(v(r) for v in vals[1:5]), vals[5](r)),
                    text=rhs)
    if text == _CLUSTER_TRY:
        return _Ins(dst, None, sync=lambda r: ("mbar_try", vals[0](r), 0), text=rhs)
    return None


def _mapa(p: Any, rank: Any) -> tuple[str, int]:
    """`mapa.shared::cluster`: the address of shared location `p` in the block of cluster rank `rank`."""
    if p[0] != "$smem":
        raise Unsupported(f"mapa of a pointer that is not into shared memory: {p}")
    return (f"smem@{int(rank)}", p[1])


def _hopper_call(name: str, vals: list[Callable[[dict[str, Any]], Any]], dst: str | None, rhs: str,
                 ss: list[str]) -> _Ins | None:
    """The sm_90 intrinsics the Hopper path emits (`backend/hopper.py`); `ss`: the operands' sources."""
    def nop(r: dict[str, Any]) -> None:
        return None

    if name == "llvm.nvvm.mapa.shared.cluster":
        return _Ins(dst, lambda r: _mapa(vals[0](r), vals[1](r)), text=rhs)
    if name in ("llvm.nvvm.barrier.cluster.arrive.relaxed", "llvm.nvvm.barrier.cluster.wait"):
        # every block of the cluster has started: `_run_cluster` runs a block with the others' pushes
        # already in its shared memory, so there is nothing to wait for
        return _Ins(None, nop, text=rhs)
    if name == "llvm.nvvm.wgmma.commit_group.sync.aligned":
        return _Ins(None, None, sync=lambda r: ("wg_commit",), text=rhs, sync_src="('wg_commit',)")
    if name == "llvm.nvvm.bar.warp.sync":
        # __syncwarp: every lane of the warp gets there before any goes on
        return _Ins(None, None, sync=lambda r: ("warp", name, []), text=rhs, sync_src=_req("'warp'", repr(name), "[]"))
    if name == "llvm.nvvm.fence.proxy.async.shared_cta":
        return _Ins(None, None, sync=lambda r: ("fence_async",), text=rhs, sync_src="('fence_async',)")
    if name.startswith("llvm.nvvm.cp.async.bulk.tensor.s2g.tile."):  # a TMA store: src, map, coords innermost first
        n = int(name[-2])
        return _Ins(None, None, sync=lambda r: ("tma_store", vals[0](r), vals[1](r), *[vals[2 + i](r) for i in range(n)]),
                    text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.commit.group":
        return _Ins(None, None, sync=lambda r: ("bulk_commit",), text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.wait.group.read":
        return _Ins(None, None, sync=lambda r: ("bulk_wait", vals[0](r)), text=rhs)
    if (name == "llvm.nvvm.wgmma.fence.sync.aligned" or name.startswith("llvm.nvvm.setmaxnreg.")
            or name.startswith("llvm.nvvm.prefetch.tensormap.")):  # (a tensor map's prefetch: a hint)
        return _Ins(None, nop, text=rhs)
    if name == "llvm.nvvm.barrier.cta.sync.aligned.count":
        return _Ins(None, None, sync=lambda r: ("nbar", vals[0](r), vals[1](r)), text=rhs,
                    sync_src=_req("'nbar'", *ss[:2]))
    if name == "llvm.nvvm.barrier.cta.arrive.aligned.count":
        return _Ins(None, None, sync=lambda r: ("nbar_arrive", vals[0](r), vals[1](r)), text=rhs,
                    sync_src=_req("'nbar_arrive'", *ss[:2]))
    if name == "llvm.nvvm.mbarrier.init.shared":
        return _Ins(None, None, sync=lambda r: ("mbar_init", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta":
        return _Ins(dst, None, sync=lambda r: ("mbar_arrive", vals[0](r), vals[1](r)), text=rhs,
                    sync_src=_req("'mbar_arrive'", *ss[:2]))
    if name == "llvm.nvvm.mbarrier.arrive.shared":
        return _Ins(dst, None, sync=lambda r: ("mbar_arrive", vals[0](r), 0), text=rhs,
                    sync_src=_req("'mbar_arrive'", ss[0], "0"))
    if name == "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta":
        return _Ins(dst, None, sync=lambda r: ("mbar_try", vals[0](r), vals[1](r)), text=rhs,
                    sync_src=_req("'mbar_try'", *ss[:2]))
    if name == "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d":
        return _Ins(None, None, sync=lambda r: ("tma", vals[0](r), vals[1](r), vals[2](r), vals[3](r), vals[4](r)),
                    text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.3d":
        # the outermost coordinate (the 3-D map's first dim) is folded into the row
        return _Ins(None, None, sync=lambda r: ("tma", vals[0](r), vals[1](r), vals[2](r), vals[3](r), vals[4](r),
                                                vals[5](r)), text=rhs)
    return None
