"""Arrays a call would write that nothing but the call holds (E0313).

Tile refuses `k(zeros::<f32>([8]).partition([4]))` and `bump(&mut a.clone())`:
the kernel's (or function's) writes go to a value no variable holds, which
is dropped after the call, and the program reads the old data without a
word (E0313). A Python caller makes the same mistake with a copy made in the
call: `tilelang.partition(a.T.reshape(-1), [4])` (a strided view's
`reshape` is a copy), `a.astype(numpy.float32)`, `numpy.ascontiguousarray(v)`,
`f(a.astype(..))` for a host function's `&mut` parameter, or a kernel's `&`
parameter its `unsafe` atomics write given `numpy.zeros(1, numpy.int32)`.
NumPy writes the copy in place and the caller's array keeps its values.

A NumPy array is "held by nothing but the call" when no Python object but
the call's own argument holds it, and the memory it views belongs to an
array (or a `bytearray`/`array.array` buffer) that is held by nothing else
either: its chain of `.base` objects is followed, and any link something
else holds (the caller's array `a` of a view `a[1:]`, a `bytearray` the
caller named) makes the writes reachable. A link of another kind (an
`mmap`, another library's object) ends the search as held: its memory may
be a file's, or read through that library.

Who holds an object is read from its reference count, measured the same
way a calibration at import measures a probe held by exactly one holder, so
the counts the interpreter keeps for its own frames cancel out:

- a partition's array is held by the `Partition` (`tilelang.partition(x, ..)`
  returns, and the caller's expression holds the partition, not `x`): held
  once where nothing else holds it, on every CPython;
- an array given directly (a host function's `&mut`, a kernel's written `&`)
  is on the caller's stack too: its count at the top of the call is compared
  with a probe's given the same way to a class of the same shape
  (`_Twin`). Where CPython lends a local variable to the stack without a
  count of its own (3.14's borrowed loads), a named array counts as a
  temporary would: the frames of the calling stack are searched for a
  variable that holds it before anything is refused. An argument unpacked
  from a container (`f(*lst)`) has a temporary's count too (the list
  holds it where the stack holds a temporary): the calling instruction
  tells the two apart (`_how_called`), and only where C code stands between
  the caller and the call is the heap searched for a container that holds
  it (`gc.get_referrers`). One count less in an unpacking call is an
  argument the unpacked container alone holds: made in the call where that
  is a `**` dict (always the call's own) or a `*` list or tuple the
  calling expression built (`f(*[a.copy()])`: `_unpacks_a_new_sequence`).
  Not seen (E0313.md says so): C code passing an argument on
  (`functools.partial`, `map`) and a sequence another call returns.

Only NumPy arrays are judged (PyTorch, CuPy and other libraries' objects
share memory in ways a reference count does not show: they are never
refused here).
"""

from __future__ import annotations

import array
import dis
import functools
import gc
import sys
import types
import weakref
from typing import Any

import numpy as np

_getrefcount = sys.getrefcount


def _count(obj: Any) -> int:
    return _getrefcount(obj)


class _Box:
    __slots__ = ("x",)


def _held_once() -> int:
    box = _Box()
    box.x = object()
    return _count(box.x)


def _held_by_view() -> int:
    view = memoryview(bytearray(4))
    return _count(view.obj)


# `_count(holder.attr)` of an object `holder` alone holds
HELD_ONCE = _held_once()
# `_count(view.obj)` of a buffer a `memoryview` alone holds
HELD_BY_VIEW = _held_by_view()


def _buffer_unheld(view: memoryview) -> bool:
    """Whether the buffer a `memoryview` (held once) views is a plain
    memory object the view alone holds."""
    return isinstance(view.obj, (bytearray, array.array)) and _count(view.obj) == HELD_BY_VIEW


def memory_unheld(a: Any) -> bool:
    """Whether the memory of `a` (an array its caller's one holder alone
    holds, counted already) belongs to nothing anyone else holds: the
    writes to it would be lost. False for anything not a NumPy array."""
    x = a
    for _ in range(32):
        if not isinstance(x, np.ndarray):
            return False
        if x.base is None:
            # it owns its memory; or (no owner object) memory of C code that
            # may read it afterwards: held
            return bool(x.flags.owndata)
        if isinstance(x.base, memoryview):
            return _buffer_unheld(x.base) if _count(x.base) == HELD_ONCE else False
        if isinstance(x.base, (bytearray, array.array)):
            return _count(x.base) == HELD_ONCE
        if _count(x.base) != HELD_ONCE:
            return False
        x = x.base
    return False


def partition_array_unheld(part: Any) -> bool:
    """Whether the array of partition `part` is held by the partition alone
    and so is its memory: a kernel's writes to it would be lost (unless the
    partition itself is held: `p.array` reads them)."""
    if not isinstance(part.array, np.ndarray):
        return False
    if _count(part.array) != HELD_ONCE:
        return False
    return memory_unheld(part.array)


def arg_counts(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[int], dict[str, int]]:
    """The reference count of each argument of a call, read at the top of
    its `__call__(self, *args, **kwargs)`: to be compared with `TEMP`."""
    return [_getrefcount(v) for v in args], {k: _getrefcount(v) for k, v in kwargs.items()}


class _Twin:
    """A class whose `__call__` has the shape of `Kernel.__call__` and
    `HostFunction.__call__`: a probe passed to it as a temporary counts as
    an argument made in the call does there."""

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[list[int], dict[str, int]]:
        return arg_counts(args, kwargs)


def _temp_counts() -> tuple[int, int]:
    twin = _Twin()
    return twin(object())[0][0], twin(x=object())[1]["x"]


# (positional, keyword): the count of an argument made in the call
TEMP_POSITIONAL, TEMP_KEYWORD = _temp_counts()


def _unpacked_counts() -> tuple[int, int]:
    twin = _Twin()
    return twin(*[object()])[0][0], twin(**{"x": object()})[1]["x"]


# (positional, keyword): the count of an argument made in the call inside a list, tuple or dict made there and
# unpacked (`f(*[a.copy()])`, `f(**{"z": a.copy()})`): the container is gone or the call's own, one holder less
# than a temporary on the stack; a container that outlives the call (`f(*lst)`, `f(**d)`) adds one
UNPACKED_POSITIONAL, UNPACKED_KEYWORD = _unpacked_counts()


def _beside_keywords() -> tuple[int, int]:
    twin = _Twin()
    return twin(object(), x=1)[0][0], twin(*[object()], x=1)[0][0]


# the same two of a positional argument in a call that passes keyword arguments too (`f(numpy.zeros(8), n=1)`:
# one more, the tuple the call makes of its positional arguments; it was judged by the first and never refused)
TEMP_POSITIONAL_KW, UNPACKED_POSITIONAL_KW = _beside_keywords()


def _holds(value: Any, obj: Any) -> bool:
    """`value` is `obj`, or a tuple or dict that holds it (the containers
    the garbage collector may stop tracking, so `gc.get_referrers` can miss
    them: one of arrays only)."""
    if value is obj:
        return True
    if type(value) is tuple:
        return any(x is obj for x in value)
    if type(value) is dict:
        return any(x is obj for x in value.values())
    return False


def _caller() -> Any:
    """The frame that called into this API: the first outside its own frames."""
    frame: Any = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("tilelang.api"):
        frame = frame.f_back
    return frame


def _a_variable(obj: Any) -> bool:
    """Whether a variable of a frame of the calling stack (outside this
    API's own frames) holds `obj`, directly or in a tuple or dict."""
    frame = _caller()
    while frame is not None:
        try:
            values = list(frame.f_locals.values())
        except Exception:  # a frame whose variables cannot be read: take it as holding
            return True
        if any(_holds(v, obj) for v in values):
            return True
        frame = frame.f_back
    return False


def _a_container(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an object the garbage collector tracks holds `obj`, other
    than the call's own argument tuples and keyword dicts (those hold what
    the call holds) and frames (their variables: `_a_variable`)."""
    for r in gc.get_referrers(obj):
        if type(r) is tuple and len(r) == len(args) and all(a is b for a, b in zip(r, args)):
            continue
        if type(r) is dict and r.keys() == kwargs.keys() and all(r[k] is kwargs[k] for k in r):
            continue
        if isinstance(r, types.FrameType):
            continue
        return True
    return False


_CALLS = frozenset(dis.opmap[n] for n in ("CALL", "CALL_KW") if n in dis.opmap)
_UNPACKING = dis.opmap.get("CALL_FUNCTION_EX", -1)
_EXTENDED = dis.opmap.get("EXTENDED_ARG", -1)


#: The instructions that leave a new list or tuple for `CALL_FUNCTION_EX` to unpack: `f(*[x])`, `f(*(x,))`,
#: `f(a, *[x])` (3.11's `LIST_TO_TUPLE`, 3.12's `CALL_INTRINSIC_1 INTRINSIC_LIST_TO_TUPLE`)
_NEW_SEQUENCE = frozenset(("BUILD_LIST", "BUILD_TUPLE", "LIST_TO_TUPLE", "BUILD_LIST_UNPACK",
                           "BUILD_TUPLE_UNPACK", "BUILD_TUPLE_UNPACK_WITH_CALL"))


def _unpacks_a_new_sequence() -> bool:
    """Whether the calling instruction (a `CALL_FUNCTION_EX`) unpacks a list or tuple that its own expression
    built (`f(*[x])`, `f(*(x,))`, `f(a, *[x])`, `f(*[x], z=1)`), so that nothing but the call holds it:
    False where it unpacks a value loaded from elsewhere (`f(*t)`, `f(*obj.parts)`, `f(*make())`, which may be
    a tuple something else holds) or cannot tell."""
    frame = _caller()
    if frame is None:
        return False
    return _built_before(frame.f_code, frame.f_lasti)


#: Instructions that push nothing (they pop, or change what is below them in place)
_PUSH_NONE = frozenset(("DICT_MERGE", "DICT_UPDATE", "LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "SET_ADD", "MAP_ADD",
                        "POP_TOP", "NOP", "PRECALL", "KW_NAMES", "RESUME", "CACHE", "EXTENDED_ARG"))


@functools.lru_cache(maxsize=1024)
def _built_before(code: types.CodeType, at: int) -> bool:
    """`_unpacks_a_new_sequence` of the instruction at `at` of `code` (a call in a loop reads its code once): the
    instruction that left the unpacked sequence, found walking back over the straight-line code before the call
    (past a `**` mapping's, `f(*[x], z=1)`, by each instruction's stack effect), is one that builds a list or
    tuple; False at a jump or a jump target on the way (`f(*(t if c else (x,)))`: the instruction before is one
    branch's), an instruction that reorders the stack, or after 64 instructions."""
    raw = code.co_code
    if not 0 <= at < len(raw) - 1 or raw[at] != _UNPACKING:
        return False
    ins = [i for i in dis.get_instructions(code) if i.offset <= at and i.opname != "CACHE"]
    if not ins or ins[-1].offset != at or ins[-1].is_jump_target:
        return False
    above = raw[at + 1] & 1  # the stack's items above the sequence: the `**` mapping
    if not above and len(ins) > 1 and ins[-2].opname == "PUSH_NULL":
        above = 1  # (3.14 pushes a NULL where there is no mapping)
    for i in reversed(ins[-65:-1]):
        if "JUMP" in i.opname or i.opname in ("SWAP", "COPY", "FOR_ITER", "SEND", "RETURN_VALUE") \
                or i.opname.startswith("ROT_") or i.opname.startswith("DUP_"):
            return False
        net = dis.stack_effect(i.opcode, i.arg if i.opcode >= dis.HAVE_ARGUMENT else None, jump=False)
        pushes = 0 if i.opname in _PUSH_NONE or i.opname.startswith(("STORE_", "DELETE_")) else max(1, net)
        if above < pushes:  # this instruction left the sequence
            return i.opname in _NEW_SEQUENCE or (i.opname == "CALL_INTRINSIC_1" and "LIST_TO_TUPLE" in str(i.argrepr))
        above -= net
        if i.is_jump_target:
            return False
    return False


def _how_called(n: int) -> str | None:
    """How the calling frame's current instruction passes the call's `n` arguments: "stack" (a `CALL` of
    that many: each is on the caller's stack), "unpacked" (`f(*lst)`, `f(**d)`: from a container), or None
    where it cannot tell (C code between, such as `functools.partial`, calls with another count)."""
    frame = _caller()
    if frame is None:
        return None
    code, at = frame.f_code.co_code, frame.f_lasti
    if not 0 <= at < len(code) - 1:
        return None
    op, arg = code[at], code[at + 1]
    if op == _UNPACKING:
        return "unpacked"
    if op in _CALLS and arg == n and not (at >= 2 and code[at - 2] == _EXTENDED):
        return "stack"
    return None


def made_in_the_call(
    v: Any, count: int, keyword: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether an argument `v` whose count at the top of the call was
    `count` is a value made in the call: held by nothing but the call. The
    count is the quick test; an argument passed from a list, `f(*lst)`,
    counts as one made in the call does (the list holds it where the
    caller's stack holds a temporary). A variable that holds it is searched
    for first; then the calling instruction says where the arguments came
    from: a `CALL` of the call's own count passed each on the caller's
    stack, which is then its one holder besides the call, and an unpacking
    call (`CALL_FUNCTION_EX`) passes a temporary with one count less than
    a plain call does (the container's tuple holds it, no stack), so this
    count means a holder besides: neither walks the heap. Only where the
    instruction cannot tell (C code between) are the objects the collector
    tracks searched for a container that holds it (`gc.get_referrers`,
    which walks every one: seconds over many calls in a large process)."""
    if keyword:
        temp, unpacked = TEMP_KEYWORD, UNPACKED_KEYWORD
    elif kwargs:  # (a positional argument beside keyword ones: the call makes a tuple of them, one count more)
        temp, unpacked = TEMP_POSITIONAL_KW, UNPACKED_POSITIONAL_KW
    else:
        temp, unpacked = TEMP_POSITIONAL, UNPACKED_POSITIONAL
    base = TEMP_KEYWORD if keyword else TEMP_POSITIONAL  # (what a call through C code is judged by)
    if count not in (temp, unpacked, base) or _a_variable(v):
        return False
    how = _how_called(len(args) + len(kwargs))
    if how == "stack":
        return count == temp
    if how == "unpacked":
        # held by the unpacked container alone (hfix2's note: `f(*[numpy.zeros(..)])` lost its writes with no
        # word): a dict given by `**` is always one made for the call (`f(**d)` copies `d`, which adds one);
        # a positional one only where the expression built it (`f(*t)` of a tuple `t` held elsewhere counts
        # the same: `_unpacks_a_new_sequence`); a temporary's count here means a container holds it
        if count != unpacked or (keyword and unpacked == TEMP_KEYWORD):
            return False
        return keyword or _unpacks_a_new_sequence()
    return count == base and not _a_container(v, args, kwargs)


def _unheld_path(tup: tuple[Any, ...], paths: tuple[tuple[int, ...], ...]) -> tuple[int, ...] | None:
    for q in paths:
        if _element_unheld(tup, q):
            return q
    return None


def _element_unheld(tup: tuple[Any, ...], path: tuple[int, ...]) -> bool:
    """Whether the element of `tup` (a tuple made in the call) at `path` is
    an array its tuple alone holds (each tuple on the way too) whose memory
    nothing else holds."""
    x: Any = tup
    for i in path:
        if type(x) is not tuple or i >= len(x) or _count(x[i]) != HELD_ONCE:
            return False
        x = x[i]
    return isinstance(x, np.ndarray) and memory_unheld(x)


def made_in_call(kind: str) -> str:
    """The examples of E0313's message for a Python caller."""
    return (
        f"{kind} no Python variable holds (a new array, or a copy made in the call: "
        "`a.astype(..)`, `numpy.ascontiguousarray(a)`, a `reshape` that has to copy)"
    )


# The operations of kernel calls that would lose their results, with their
# E0313: refused when run (`Operation.sync`/`.launch`, recorded or not), not
# when built, so an operation built to read its compiled code, never run,
# loses nothing and is not refused.
LOST: weakref.WeakKeyDictionary[Any, Exception] = weakref.WeakKeyDictionary()


def unheld_partition(positions: tuple[int, ...], args: tuple[Any, ...]) -> bool:
    """Whether a partition among `args` at `positions` holds an array that
    nothing else holds (then `find_unheld` decides)."""
    from tilelang.api.partition import Partition

    for i in positions:
        if i < len(args) and type(args[i]) is Partition and partition_array_unheld(args[i]):
            return True
    return False


def find_unheld(
    fn: Any,
    what: str,
    params: list[tuple[str, Any, str]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    counts: tuple[list[int], dict[str, int]],
) -> Exception | None:
    """E0313 (to raise once the call's other checks passed: their errors
    come first) for an argument of `fn` (a kernel or host function of a
    loaded module) that it writes and no Python variable holds; None if
    there is none. `params` are its written parameters as (name, span,
    kind), kind "mut" (a partition's array) or "written" (an array given
    directly); `counts` are the arguments' counts at the top of the call
    (`arg_counts`)."""
    from tilelang.api.errors import BorrowError, span_text
    from tilelang.api.partition import Partition
    from tilelang.diagnostics.codes import ownership as ocodes

    m = fn.module
    for i, (name, span, kind) in enumerate(params):
        keyword = i >= len(args)
        if keyword and name not in kwargs:
            continue
        v = kwargs[name] if keyword else args[i]
        count = counts[1].get(name, -1) if keyword else counts[0][i]
        if kind == "mut":
            # the partition made in the call (one held, `p.array`, reads the
            # results), its array held by it alone
            if type(v) is not Partition or not partition_array_unheld(v) \
                    or not made_in_the_call(v, count, keyword, args, kwargs):
                continue
            message = (
                f"the array of the partition given for `{name}` of {what} `{fn.__name__}` is "
                + made_in_call("an array")
                + ": the kernel's writes to it would be lost"
            )
            fix = (
                f"bind the array to a name first and read the results from it: `{name} = <the array>` "
                f"then `tilelang.partition({name}, [..])`; a copy of your array (`astype`, a `reshape` "
                "that copies) is written, not your array: copy the results back where you need them"
            )
        elif isinstance(kind, tuple):  # a tuple parameter: the paths to its written tensors
            if type(v) is not tuple or not made_in_the_call(v, count, keyword, args, kwargs):
                continue
            path = _unheld_path(v, kind)  # (no closure over `v` here: a cell would hold it)
            if path is None:
                continue
            inner = name + "".join(f".{i}" for i in path)
            message = (
                f"element `{inner}` of the tuple given for `{name}` of {what} `{fn.__name__}` is "
                + made_in_call("an array")
                + f", in a tuple made in the call, and the {what} writes it: the writes would be lost"
            )
            fix = (
                "bind the array to a name first, pass the tuple with it, and read the results from it: "
                f"`z = <the array>`, then a tuple holding `z` at `{inner}`"
            )
        else:
            if not isinstance(v, np.ndarray) or not made_in_the_call(v, count, keyword, args, kwargs) \
                    or not memory_unheld(v):
                continue
            message = (
                f"argument `{name}` of {what} `{fn.__name__}` is "
                + made_in_call("an array")
                + f", and the {what} writes it: the writes would be lost"
            )
            fix = (
                f"bind the array to a name first, pass it, and read the results from it: "
                f"`{name} = <the array>`; a copy of your array (`astype`, a `reshape` that copies) "
                "is written, not your array: copy the results back where you need them"
            )
        return BorrowError(
            message,
            code=ocodes.PARTITION_OF_TEMPORARY,
            where=m._where(span, f"`{span_text(span, m._sources)}` is declared here"),
            help=fix,
        )
    return None
