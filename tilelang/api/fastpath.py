"""The fast path of a repeated kernel call: a cache, per kernel, of what a call
with the same argument kinds needs.

A call's *key* is, per parameter, what every check of `call.py` reads off an
argument: for an array its type, element type, shape, strides, writeability
and device; for a partition its tile shape too; for a number its Python
type. Two calls with equal keys pass or fail the same argument checks, bind
the same generics and grid (`bind_launch` reads only these), pass the same
deferred ownership facts and the same tile limits, and lower to the same
kernel instance. So the first call of a key runs the full checked path
(`call.py`) and leaves a `Plan` here; later calls of that key take it and
re-check only what the key does not fix:

- the arrays' addresses (read fresh; `_np_ptr` for NumPy's quick way),
  and with them the overlap of the call's own arrays (E0303), an interval
  test per pair that one of them writes;
- the numbers: each is checked against its parameter type again;
- borrows of launches in flight: checked when the operation starts, as on
  the checked path (`operation.py`), never cached.

Anything `probe` does not recognise (an unusual array type, keyword
arguments) simply takes the checked path every time.

Invariant: a `Plan` is only reached through a key equal to the one of the
call that made it, and holds nothing that depends on an argument's address
or a number's value.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api.partition import Partition
from tilelang.frozen import frozen

if TYPE_CHECKING:
    from tilelang.api.protocols import KernelLike
    from tilelang.dtypes import DType
    from tilelang.runtime.launch import BoundLaunch, ParamSpec, Runtime

# An ndarray's address is `PyArrayObject_fields.data`, the first field after
# the object header (NumPy's C API reads it there: `PyArray_DATA`). Reading it
# with ctypes costs a tenth of `__array_interface__`, which builds a dict. A
# self-test at import compares the two on arrays, views and offsets; where
# they disagree (another interpreter, another object layout) the interface is
# used. (A memo of addresses per array would need a weak reference, and NumPy
# refuses `resize()` of an array that has one.)
_NDARRAY = np.ndarray
_HEADER = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
_READ_PTR = ctypes.c_void_p.from_address


def _ptr_by_interface(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _ptr_by_struct(a: np.ndarray) -> int:
    return _READ_PTR(id(a) + _HEADER).value or 0


def _struct_read_works() -> bool:
    try:
        base = np.arange(64, dtype=np.float32)
        samples: list[np.ndarray] = [
            base,
            base[3:],
            base[::2],
            base.reshape(8, 8)[2:, 1:],
            np.zeros(0),
            np.float64(1.0) * np.ones(3),
        ]
        return all(_ptr_by_struct(a) == _ptr_by_interface(a) for a in samples)
    except Exception:  # any surprise: use the interface
        return False


_np_ptr = _ptr_by_struct if _struct_read_works() else _ptr_by_interface


# A CPU torch tensor is read by the interpreter through a NumPy view of its
# memory; making one costs microseconds, so views are kept per tensor and
# reused while the tensor's address, shape and element type are those the
# view was made for (`t.data = t.view(torch.int32)` keeps the first two).
_TORCH_VIEWS: dict[int, tuple[Any, int, Any, np.ndarray, Any]] = {}


def torch_version_bump(torch: Any) -> Any:
    """`torch._C._increment_version` (it bumps the autograd version counters of
    a tuple of tensors written behind autograd's back), or None where `torch`
    is None or has no such function."""
    return getattr(getattr(torch, "_C", None), "_increment_version", None)


def torch_view(t: Any, ptr: int) -> np.ndarray:
    hit = _TORCH_VIEWS.get(id(t))
    shape = t.shape
    if hit is not None and hit[1] == ptr and hit[2] == shape and hit[4] == t.dtype and hit[0]() is t:
        return hit[3]
    view: np.ndarray = t.detach().numpy()
    if len(_TORCH_VIEWS) > 1024:
        _TORCH_VIEWS.clear()
    _TORCH_VIEWS[id(t)] = (weakref.ref(t), ptr, shape, view, t.dtype)
    return view


# ---------------------------------------------------------------- probes
# How to read a key and an address off an array of a given Python type;
# decided once per type. "np": numpy.ndarray; "torch": torch.Tensor (and
# nn.Parameter); "cupy": cupy.ndarray; "cai": another `__cuda_array_interface__`
# type; None: not on the fast path. NumPy and PyTorch are read inline in
# `call_key` (types in `_NP_TYPES`/`_TORCH_TYPES`), the others by `probe`.
_KINDS: dict[type, str | None] = {np.ndarray: "np"}
_TORCH_TYPES: set[type] = set()


def _kind_of(t: type) -> str | None:
    kind = _KINDS.get(t, "?")
    if kind != "?":
        return kind
    module = t.__module__ or ""
    torch = sys.modules.get("torch")
    if (
        torch is not None
        and module.startswith("torch")
        and t
        in (
            getattr(torch, "Tensor", None),
            getattr(getattr(torch, "nn", None), "Parameter", None),
        )
        and hasattr(t, "is_neg")  # (the key reads the negative bit: a PyTorch before 1.10 takes the checked path)
    ):
        kind = "torch"
        _TORCH_TYPES.add(t)
    elif module.startswith("cupy") and t.__name__ == "ndarray":
        kind = "cupy"
    elif "__cuda_array_interface__" in dir(t) and not module.startswith(("torch", "jax")):
        kind = "cai"
    else:
        kind = None
    _KINDS[t] = kind
    return kind


def torch_sig(v: Any) -> tuple[Any, ...]:
    """What the checked path reads off a PyTorch tensor (`arrays._torch`):
    element type, shape, C-contiguity (its only use of the strides; a
    non-contiguous tensor is refused), device (CPU, `cuda:<i>`, another
    accelerator the checked path refuses) and the negative bit (a lazy
    negation, refused: E0801; a repeat call's `t._neg_view()` of a first
    call's `t` read the un-negated memory on the GPU, and NumPy's refusal on
    the CPU was a traceback; hrev18), and `requires_grad` (a written leaf
    that requires grad is refused while autograd records, E0803, whose mode
    no key holds: such a call's plan is never kept), read with the tensor's
    cheapest accessors (`__cuda_array_interface__` would cost microseconds)."""
    return (type(v), v.dtype, v.shape, v.is_contiguous(), v.device, v.is_neg(), v.requires_grad)


def probe(v: Any) -> tuple[tuple[Any, ...], int] | None:
    """(key part, address) of an array, or None: not on the fast path."""
    t = type(v)
    kind = _KINDS.get(t, "?")
    if kind == "?":
        kind = _kind_of(t)
    if kind == "np":
        return (t, v.dtype, v.shape, v.strides, v.flags.writeable), _np_ptr(v)
    if kind == "torch":
        return torch_sig(v), v.data_ptr()
    if kind == "cupy":
        return (t, v.dtype, v.shape, v.strides, v.device.id), int(v.data.ptr)
    if kind == "cai":
        iface = v.__cuda_array_interface__
        ptr, readonly = iface["data"]
        strides = iface.get("strides")
        dev = getattr(v, "device", None)
        key = (
            t,
            iface["typestr"],
            tuple(iface["shape"]),
            None if strides is None else tuple(strides),
            bool(readonly),
            getattr(dev, "id", None),
            iface.get("stream"),
            iface.get("mask") is not None,  # (a masked array is refused)
        )
        return key, int(ptr or 0)
    return None


# ---------------------------------------------------------------- plans
@frozen(eq=True)
class ArraySlot:
    """One array argument of a plan: what the checks fixed about it."""

    param: int  # index of the kernel parameter
    name: str
    mutable: bool
    nbytes: int
    shape: tuple[int, ...]
    dtype: DType  # the Tensor's element type (bf16 for bf16 parameters)
    np_dtype: Any  # the storage's NumPy dtype (uint16 for 2-byte bf16 memory)
    bf16_memory: bool  # 2-byte bfloat16 (a torch.bfloat16 CUDA tensor)
    library: str
    tile: tuple[int, ...] | None  # the partition's tile (`&mut` only)


def torch_dtype_name(s: ArraySlot) -> str:
    """The `str(t.dtype)` of the PyTorch tensor a slot was built on."""
    return "torch.bfloat16" if s.bf16_memory else f"torch.{s.np_dtype.name}"


@frozen(eq=True)
class ScalarSlot:
    param: int
    spec: ParamSpec
    check: DType | None  # the type the Python value is checked against (None: a type parameter)
    bound: DType | None  # the type it is converted to for the kernel


# The NumPy scalar type a number of a kernel's scalar type becomes, for the
# types whose conversion from a plain Python number of the matching kind is
# just that constructor (f16 and bf16 round through `_to_scalar`).
_SCALAR_TYPES = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f32": np.float32, "f64": np.float64,
}  # fmt: skip


def _quick_scalar(sc: ScalarSlot) -> tuple[type, Any, Any, Any] | None:
    """(Python type, lowest, highest, converter) a number of the common kind
    passes the checks with, without them: an `int` in range for an integer
    parameter, a finite `float` in range for a float one, a `bool` for a
    `bool`. Anything else goes through `call.check_scalar`. None: no quick form."""
    dt, bound = sc.check, sc.bound
    if dt is None or bound is not dt or dt.value not in _SCALAR_TYPES:
        return None
    conv = _SCALAR_TYPES[dt.value]
    if dt.value == "bool":
        return bool, False, True, conv
    if dt.is_int:
        info = np.iinfo(dt.np_dtype)
        return int, int(info.min), int(info.max), conv
    big = float(np.finfo(dt.np_dtype).max)
    return float, -big, big, conv


@dataclass(eq=False, slots=True)
class Plan:
    """Everything a call with one key needs, found by the checked path."""

    kernel: KernelLike
    bound: BoundLaunch  # instantiation and grid (its args are those of the first call)
    runtime: Runtime
    engine: str  # "cpu" or "cuda:<index>": the device that runs it
    space: str  # "cpu" or "cuda:<index>": the arrays' address space
    arrays: tuple[ArraySlot, ...]
    scalars: tuple[ScalarSlot, ...]
    pairs: tuple[tuple[int, int], ...]  # array slots that must not overlap (one of them written)
    order: tuple[tuple[bool, int], ...]  # lowered kernel's parameter order: (is array, slot)
    kir: Any
    prepared: Any
    copies: bool  # host arrays on the GPU, or bf16 on the CPU: uploaded per run
    library: str  # the library of the first array (its current stream is used)
    device_index: int
    stream_hint: int | None = None  # a `__cuda_array_interface__` array's stream (in the key)
    host_views: tuple[str | None, ...] = ()  # per slot: "array" (NumPy), "torch" (a view), None
    # (slot, "__array_interface__" or "__cuda_array_interface__") of the arrays
    # of other libraries, whose object may give its interface other memory:
    # read again at every start (`Operation._check_interfaces`)
    iface: tuple[tuple[int, str], ...] = ()
    launcher: Any = None  # the device's fast launcher, made at the first GPU run
    # a written PyTorch tensor required grad when the call was made (under `torch.no_grad()`,
    # or a non-leaf): each start reads autograd's mode again (`Operation._check_memory`,
    # E0803), so no fast path; such a plan serves no other call (`call.Checked.keep_plan`)
    grad_written: bool = False
    launcher_tried: bool = False
    stream_handle: Any = None  # the raw stream handle of the last launch, and
    stream: Any = None  # the device's object for it (`foreign_stream`, memoised)
    stats: dict[str, int] = field(default_factory=lambda: {"hits": 0})
    wait_foreign: Any = None  # the device's `wait_foreign`, set with the launcher
    native_wait: bool = False  # the launcher may use the native launcher: so may the wait
    # Every array a PyTorch tensor: `guard(*tensors)` is PyTorch's own C check
    # that tensors have the first call's type, dtype, device, shape and
    # strides (`tensor_guard`), and `memo` reads a call of this plan's key
    # with it (`memo_for`); None otherwise.
    guard: Any = None
    memo: Any = None
    # what the memo closes over, for the native launcher's C memo (`FastPlan`):
    # (kinds "m"/"r"/"s" per argument, per argument its tile/number type/None,
    # per array its bytes, overlap pairs, `finish` or None); set by `memo_for`
    memo_spec: Any = None
    # the kernel's `#[requires(..)]` that read a number, over this key's shapes
    # and generics: `requires(scalars)` (the numbers in `scalars` order) is
    # whether they hold; None when no requirement reads a number (the key
    # decided the others: `bind_launch` checked them at the first call)
    requires: Any = None
    # derived from the above in `__post_init__` (and again by `dataclasses.replace`):
    overlaps: tuple[tuple[int, int, int, int], ...] = field(init=False)  # (a, b, nbytes a, b)
    quick: tuple[tuple[int, Any], ...] = field(init=False)  # (param, quick form or None)
    torch_slots: tuple[tuple[int, tuple[int, ...]], ...] = field(init=False)  # (slot, shape)
    torch_idx: tuple[int, ...] = field(init=False)  # the slots of `torch_slots`
    torch_written: tuple[int, ...] = field(init=False)  # slots of `&mut` PyTorch tensors
    torch_mut: bool = field(init=False)  # some written array is a torch tensor
    has_torch: bool = field(init=False)  # some array is a torch tensor (memory can change)
    direct_args: bool = field(init=False)  # the kernel's arguments are the arrays, in order
    bump: Any = field(init=False)  # torch._C._increment_version when `torch_mut`, else None
    stream_of: Any = field(init=False)  # () -> the raw stream its library has current now
    # `.launch()`/`.sync()` of an operation of this plan in one function each,
    # made once the native launcher runs it (`operation._make_fast`); None
    # until then and for plans it cannot take. Reset by `dataclasses.replace`
    # (a plan with other hints has another launcher).
    fast_launch: Any = field(init=False)
    fast_sync: Any = field(init=False)
    fast_tried: bool = field(init=False)
    np_slots: tuple[int, ...] = field(init=False)  # slots of NumPy arrays (`host_views` "array")
    # (slot, element size) of the CUDA arrays other than PyTorch's, whose
    # address the key does not fix: each call checks it is element-aligned
    # and, for every element size (bytes too), not 0 (hrev30: a foreign
    # interface's address 0 for elements)
    align: tuple[tuple[int, int], ...] = field(init=False)

    def __post_init__(self) -> None:
        arrays = self.arrays
        self.np_slots = tuple(i for i, how in enumerate(self.host_views) if how == "array")
        self.align = tuple(
            (i, s.np_dtype.itemsize)
            for i, s in enumerate(arrays)
            if self.space != "cpu" and s.library != "torch"
        )
        self.overlaps = tuple(
            (a, b, arrays[a].nbytes, arrays[b].nbytes)
            for a, b in self.pairs
            if arrays[a].nbytes and arrays[b].nbytes
        )
        self.quick = tuple((sc.param, _quick_scalar(sc)) for sc in self.scalars)
        self.torch_slots = tuple((i, s.shape) for i, s in enumerate(arrays) if s.library == "torch")
        self.torch_idx = tuple(i for i, _ in self.torch_slots)
        self.torch_written = tuple(
            i for i, s in enumerate(arrays) if s.library == "torch" and s.mutable
        )
        self.torch_mut = bool(self.torch_written)
        self.has_torch = bool(self.torch_slots)
        self.direct_args = not self.scalars and self.order == tuple(
            (True, i) for i in range(len(arrays))
        )
        torch = sys.modules.get("torch") if self.has_torch else None
        self.bump = torch_version_bump(torch) if self.torch_mut else None
        self.stream_of = _stream_getter(self.library, self.device_index, self.stream_hint)
        self.fast_launch = self.fast_sync = None
        self.fast_tried = False


def _stream_getter(library: str, index: int, hint: int | None) -> Any:
    """A function of no arguments: the raw handle of the CUDA stream the
    arrays' library has current (read when an operation starts, not when it
    was built, as a Tile launch does); 0, the legacy default stream, for a
    library with no notion of one."""
    if library == "torch":
        torch = sys.modules.get("torch")
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return functools.partial(raw, index)  # one C call
        return lambda: int(sys.modules["torch"].cuda.current_stream(index).cuda_stream)
    if library == "cupy":
        return lambda: int(sys.modules["cupy"].cuda.get_current_stream().ptr)
    handle = int(hint or 0)
    return lambda: handle


MAX_PLANS = 256  # per kernel; a kernel called with more keys starts over


def call_key(
    kernel: KernelLike, args: tuple[Any, ...]
) -> tuple[tuple[Any, ...], list[int], list[Any]] | None:
    """The key of a call with positional `args`, with its per-call values (the
    arrays' addresses, the caller's array objects); None: not on the fast path.

    The key has one part per parameter: a number's Python type; a
    partition's tile and its array's part; an array's part, which starts
    with the array's type (that type fixes what follows: `probe`)."""
    return kernel._keyer(args)  # type: ignore[no-any-return]


# A key is read by a function made for the kernel's parameter kinds (one per
# list of kinds, shared by every kernel with it): straight-line code, one
# local per argument, NumPy and PyTorch arrays read inline with the same
# accessors as `probe` (which reads every other kind). Made by `keyer_for`
# from the template below; the names in it are all fixed, nothing of a
# program or a caller's value reaches the generated source.
_KEYERS: dict[tuple[tuple[str, ...], bool], Any] = {}

_ARRAY_TEMPLATE = """\
    c = type(a{i})
    if c in TORCH:
        k{i} = (c, a{i}.dtype, a{i}.shape, a{i}.is_contiguous(), a{i}.device, a{i}.is_neg(), a{i}.requires_grad)
        p{i} = a{i}.data_ptr()
    elif c is NDARRAY:
        k{i} = (c, a{i}.dtype, a{i}.shape, a{i}.strides, a{i}.flags.writeable)
        p{i} = np_ptr(a{i})
    else:
        got = probe(a{i})
        if got is None:
            return None
        k{i}, p{i} = got
"""


def _held_in_key() -> int:
    """The count a partition's array that the partition alone holds has
    where a key's code reads it (`keyer_for`'s lines, with a probe)."""
    ns: dict[str, Any] = {"Partition": Partition, "getrefcount": sys.getrefcount}
    exec(compile(  # the lines of `keyer_for` for one "mut" parameter, up to the test
        "def probe(args):\n    a0, = args\n    if type(a0) is not Partition:\n        return None\n"
        "    t0 = a0.tile\n    a0 = a0.array\n    return getrefcount(a0)\n", "<tile key probe>", "exec"), ns)
    return int(ns["probe"]((Partition(object(), (1,)),)))


_HELD_IN_KEY = _held_in_key()


def keyer_for(kinds: tuple[str, ...], held: bool = True) -> Any:
    """`call_key` for kernels whose parameters are of `kinds` ("mut",
    "ref", "scalar", "tscalar"): a function of the positional arguments.
    `held`: None (not on the fast path) for a partition whose array the
    partition alone holds (`call.call` decides on E0313 first)."""
    keyer = _KEYERS.get((kinds, held))
    if keyer is not None:
        return keyer
    if any(k not in ("mut", "ref", "scalar", "tscalar") for k in kinds):
        _KEYERS[(kinds, held)] = keyer = lambda args: None
        return keyer
    n = len(kinds)
    lines = ["def keyer(args):", f"    if len(args) != {n}:", "        return None"]
    if n:
        lines.append(f"    {''.join(f'a{i}, ' for i in range(n))}= args")
    parts: list[str] = []
    ptrs: list[str] = []
    for i, kind in enumerate(kinds):
        if kind == "scalar":
            parts.append(f"type(a{i})")
            continue
        if kind == "tscalar":
            parts.append(f"(type(a{i}), getattr(a{i}, 'dtype', None))")
            continue
        if kind == "mut":
            lines += [
                f"    if type(a{i}) is not Partition:",
                "        return None",
                f"    t{i} = a{i}.tile",
                f"    a{i} = a{i}.array",
            ]
            if held:  # an array the partition alone holds: perhaps one made in
                # the call (E0313), which the checked path decides (`call.call`)
                lines += [f"    if getrefcount(a{i}) == HELD:", "        return None"]
            parts.append(f"t{i}")
        lines.append(_ARRAY_TEMPLATE.format(i=i).rstrip("\n"))
        parts.append(f"k{i}")
        ptrs.append(f"p{i}")
    objs = [f"a{i}" for i, k in enumerate(kinds) if k not in ("scalar", "tscalar")]
    lines.append(
        f"    return ({''.join(p + ', ' for p in parts)}), [{', '.join(ptrs)}], [{', '.join(objs)}]"
    )
    namespace: dict[str, Any] = {
        "Partition": Partition,
        "getrefcount": sys.getrefcount,
        "HELD": _HELD_IN_KEY,
        "TORCH": _TORCH_TYPES,
        "NDARRAY": _NDARRAY,
        "np_ptr": _np_ptr,
        "probe": probe,
    }
    exec(compile("\n".join(lines), f"<tile call key {kinds}>", "exec"), namespace)
    keyer = namespace["keyer"]
    _KEYERS[(kinds, held)] = keyer
    return keyer


# ---------------------------------------------------------------- memos
# A call on PyTorch tensors reads four accessors per tensor for its key (each
# a C call that makes a Python object) and hashes the result. The memo of a
# plan whose arrays are all tensors reads the same facts with one C call:
# PyTorch's `TensorGuards`, the check `torch.compile` guards compiled code
# with (each tensor's Python type, dispatch keys (the device type), dtype,
# device index, shape, strides, and `requires_grad`, which the key does not
# hold: a stricter test). A call the memo refuses takes the key as before.
# The class is private to PyTorch, so it is used only after a self-test on
# CPU tensors shows it refuses each change the key would tell apart.
_GUARD_CLASS: dict[int, Any] = {}  # id(the torch module) -> TensorGuards or None


def _make_guard(cls: Any, objs: Sequence[Any]) -> Any:
    try:
        return cls(*objs, dynamic_dims_sizes=None, dynamic_dims_strides=None).check
    except TypeError:
        return cls(*objs, dynamic_shapes=False).check


def _guard_class() -> Any:
    """TensorGuards once it passed the self-test under the PyTorch imported
    now (decided once per module object: a test may stand a fake in for it)."""
    torch = sys.modules.get("torch")
    if id(torch) in _GUARD_CLASS:
        return _GUARD_CLASS[id(torch)]
    cls = None
    try:
        cand = torch._C._dynamo.guards.TensorGuards  # type: ignore[union-attr]
        zeros = torch.zeros  # type: ignore[union-attr]
        a, b = zeros(4, 3), zeros(6)
        check = _make_guard(cand, (a, b))
        refused = (
            (zeros(4, 4), b),  # shape
            (zeros(4, 3, dtype=torch.float64), b),  # type: ignore[union-attr]  # dtype
            (zeros(3, 4).t(), b),  # strides: the same shape, not contiguous
            (torch.nn.Parameter(zeros(4, 3), requires_grad=False), b),  # type: ignore[union-attr]
            (zeros(4, 3, device="meta"), b),  # another device
            (a, 1.0),  # not a tensor
        )
        if check(zeros(4, 3), zeros(6)) and not any(check(*r) for r in refused):
            cls = cand
    except Exception:  # another PyTorch, or none: keys only
        cls = None
    if len(_GUARD_CLASS) > 8:
        _GUARD_CLASS.clear()
    _GUARD_CLASS[id(torch)] = cls
    return cls


def tensor_guard(objs: Sequence[Any]) -> Any:
    """`check(*tensors) -> bool`: the tensors have the Python type, dispatch
    keys, dtype, device, shape, strides and `requires_grad` of `objs` (all
    PyTorch tensors); None where PyTorch's check is not available."""
    cls = _guard_class()
    if cls is None:
        return None
    try:
        check = _make_guard(cls, objs)
        return check if check(*objs) else None
    except Exception:
        return None


_MEMO_MAKERS: dict[tuple[Any, ...], Any] = {}


def memo_for(
    kinds: tuple[str, ...], key: tuple[Any, ...], plan: Plan, operation: Any, finish: Any
) -> Any:
    """A function of a call's positional arguments: the call's `Operation`
    when they have `key` (read through `plan.guard` for the tensors, directly
    for partition tiles and numbers' types) and their arrays do not overlap
    where one is written, else None (then the key path runs, and words any
    error); None when `plan` has no guard. `operation(plan, ptrs, objs, [])`
    makes the operation of a plan without numbers, `finish(args, ptrs, objs)`
    that of one with numbers (their checks). Made, like `keyer_for`, from code
    per list of parameter kinds and overlap pairs; the key's values and the
    arrays' sizes are closed over, never written into the source."""
    if plan.guard is None or any(k not in ("mut", "ref", "scalar") for k in kinds):
        return None
    pairs = tuple((a, b) for a, b, _, _ in plan.overlaps)
    shape = (kinds, pairs, bool(plan.scalars))
    make = _MEMO_MAKERS.get(shape)
    if make is None:
        make = _MEMO_MAKERS[shape] = _memo_maker(*shape)
    consts: list[Any] = []
    j = 0
    for kind in kinds:  # the key's layout: see `keyer_for`
        if kind == "scalar":
            consts.append(key[j])
            j += 1
        elif kind == "mut":
            consts.append(key[j])
            j += 2
        else:
            j += 1
    sizes = [s.nbytes for s in plan.arrays]
    letters = {"mut": "m", "ref": "r", "scalar": "s"}
    per_arg: list[Any] = []
    it = iter(consts)
    for kind in kinds:
        per_arg.append(None if kind == "ref" else next(it))
    plan.memo_spec = (
        "".join(letters[k] for k in kinds),
        tuple(per_arg),
        tuple(sizes),
        pairs,
        finish if plan.scalars else None,
    )
    return make(plan, plan.guard, Partition, operation, finish, plan.stats, *consts, *sizes)


def _memo_maker(kinds: tuple[str, ...], pairs: tuple[tuple[int, int], ...], numbers: bool) -> Any:
    n = len(kinds)
    names = [f"c{i}" for i, k in enumerate(kinds) if k != "ref"]
    arrays = [f"a{i}" for i, k in enumerate(kinds) if k != "scalar"]
    sizes = [f"n{k}" for k in range(len(arrays))]
    lines = [
        "def make(PLAN, check, Partition, Operation, finish, STATS"
        f"{''.join(', ' + c for c in names + sizes)}):",
        "    def memo(args):",
        f"        if len(args) != {n}:",
        "            return None",
    ]
    if n:
        lines.append(f"        {''.join(f'a{i}, ' for i in range(n))}= args")
    for i, kind in enumerate(kinds):
        if kind == "scalar":
            lines += [f"        if type(a{i}) is not c{i}:", "            return None"]
        elif kind == "mut":
            lines += [
                f"        if type(a{i}) is not Partition or a{i}.tile != c{i}:",
                "            return None",
                f"        a{i} = a{i}.array",
            ]
    lines += [f"        if not check({', '.join(arrays)}):", "            return None"]
    for k, var in enumerate(arrays):
        lines.append(f"        p{k} = DPTR({var})")  # PyTorch's `Tensor.data_ptr`, unbound
    for a, b in pairs:  # two arrays, one written, that share memory: the key path words it
        lines += [f"        if p{a} < p{b} + n{b} and p{b} < p{a} + n{a}:", "            return None"]
    ptrs = f"[{', '.join(f'p{k}' for k in range(len(arrays)))}]"
    objs = f"[{', '.join(arrays)}]"
    if numbers:
        lines.append(f"        return finish(args, {ptrs}, {objs})")
    else:
        lines += ['        STATS["hits"] += 1', f"        return Operation(PLAN, {ptrs}, {objs}, [])"]
    lines.append("    return memo")
    c = sys.modules["torch"]._C  # a plan with a guard: every array is a PyTorch tensor
    namespace: dict[str, Any] = {"DPTR": (getattr(c, "TensorBase", None) or c._TensorBase).data_ptr}
    exec(compile("\n".join(lines), f"<tile call memo {kinds}>", "exec"), namespace)
    return namespace["make"]
