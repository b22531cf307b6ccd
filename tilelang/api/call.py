"""The checked path of a kernel call from Python: each argument against its
parameter, then the host runtime's own launch checks (`bind_launch`, E05xx,
and the ownership checker's deferred facts), the tile limits of the
instantiation, and the overlap of the call's own arrays (E0303). Its result
is an `Operation`; nothing runs here."""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from tilelang.api import arrays
from tilelang.api.arrays import ArrayRef, NotAnArray, Unsupported, tile_dtype_name
from tilelang.api.borrowed import frozen_by
from tilelang.api.engines import _device
from tilelang.api.errors import BorrowError, CallError, a_type, span_text
from tilelang.api.fastpath import (
    MAX_PLANS,
    ArraySlot,
    Plan,
    ScalarSlot,
    memo_for,
    tensor_guard,
)
from tilelang.api.operation import Operation
from tilelang.api.partition import Partition
from tilelang.api.scalars import scalar_value
from tilelang.api.signature import (
    _fix_contiguous,
    _fix_dtype,
    _fix_not_an_array,
    _fix_rank,
    _inferable,
    _match_args,
)
from tilelang.api.temporaries import LOST, arg_counts, find_unheld, unheld_partition
from tilelang.diagnostics.codes import api as acodes
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.codes import types as tcodes
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.ownership.dynamic import BorrowTracker, Region
from tilelang.requires import DivisionByZero, read_names, requirements
from tilelang.requires import evaluate as evaluate_requirement
from tilelang.runtime.launch import (
    BoundLaunch,
    LaunchArg,
    ParamSpec,
    Runtime,
    _to_scalar,
    bind_launch,
    requirement_inputs,
)
from tilelang.runtime.launch import Operation as _RtOperation
from tilelang.runtime.tensor import Partition as _RtPartition
from tilelang.runtime.tensor import Tensor, dtype_of_array
from tilelang.source import Span

if TYPE_CHECKING:
    from tilelang.api.protocols import KernelLike

# The type checker's limit (`sema/check.py` MAX_TILE_ELEMENTS), restated to
# keep `sema` out of the API's imports.
MAX_TILE_ELEMENTS = 1 << 20
# A tensor dimension is an `i32` in kernels (`ir/nodes.py`): the largest one.
MAX_DIM = (1 << 31) - 1


def _strides_text(ref: ArrayRef) -> str:
    if ref.strides is None:
        return (
            f"strides {list(ref.byte_strides)} in bytes, not whole elements of "
            f"{_itemsize(ref)} bytes"
        )
    return f"strides {list(ref.strides)} in elements"


def _itemsize(ref: ArrayRef) -> int:
    """Bytes an element of `ref` takes in its memory (2 for bf16 memory)."""
    return 2 if ref.dtype is DType.BF16 else np.dtype(ref.dtype.np_dtype).itemsize if ref.dtype else 1


class _Call:
    """One kernel call being checked and bound (becomes an `Operation`)."""

    def __init__(self, kernel: KernelLike, values: list[Any]) -> None:
        self.k = kernel
        self.m = kernel.module
        self.values = values
        self.kname = kernel.__name__
        self.refs: list[tuple[ParamSpec, ArrayRef, bool]] = []  # (param, array, mutable)
        self.keep_plan = True  # False: this call's plan must not serve its key (`array`)
        self.grad_written = False  # a written PyTorch tensor requires grad (`Plan.grad_written`)

    def where(self, spec: ParamSpec) -> str:
        return self.m._where(
            spec.span, f"`{spec.name}: {span_text(spec.span, self.m._sources)}` is declared here"
        )

    def fail(
        self,
        spec: ParamSpec,
        message: str,
        *,
        help: str,
        code: str,
        cls: type[CallError] | type[BorrowError] = CallError,
    ) -> NoReturn:
        raise cls(message, code=code, help=help, where=self.where(spec))

    def array(self, spec: ParamSpec, value: Any, mutable: bool) -> ArrayRef:
        try:
            ref = arrays.describe(value)
        except NotAnArray:
            want = DType.parse(spec.elem or "")
            np_name = tile_dtype_name(want) if want else "..."
            if isinstance(value, Partition) and mutable:  # `partition(partition(z, [4]), [2])`
                self.fail(
                    spec,
                    f"argument `{spec.name}` of kernel `{self.kname}` is a partition of a partition",
                    help=f"partition the array once, with the tile the kernel takes: "
                    f"`tilelang.partition({spec.name}, [..])`",
                    code=acodes.NOT_AN_ARRAY,
                )
            self.fail(
                spec,
                f"argument `{spec.name}` of kernel `{self.kname}` must be an array, "
                f"not {a_type(value)}",
                help=_fix_not_an_array(value, spec.name, np_name, mutable),
                code=acodes.NOT_AN_ARRAY,
            )
        except Unsupported as e:
            self.fail(
                spec,
                f"argument `{spec.name}` of kernel `{self.kname}`: {e.why}",
                help=e.help.replace("`t.", f"`{spec.name}."),
                code=acodes.UNUSABLE_ARRAY,
            )
        what = f"argument `{spec.name}` of kernel `{self.kname}`"
        if ref.dtype is None:
            self.fail(
                spec,
                f"{what} is {ref.describe()}, an element type Tile does not have",
                code=lcodes.DTYPE_MISMATCH,
                help=arrays.foreign_dtype_help(ref, spec.name),
            )
        want = DType.parse(spec.elem or "")
        if want is not None:
            storage = DType.F32 if want is DType.BF16 else want
            # bf16 comes as float32 arrays (rounded by the kernel) or, on the
            # GPU, as 2-byte torch.bfloat16 tensors used in place
            bf16_memory = want is DType.BF16 and ref.dtype is DType.BF16 and ref.is_cuda
            if ref.dtype is not storage and not bf16_memory:
                extra = (
                    " (Tile takes bf16 values in float32 arrays, or torch.bfloat16 tensors on the GPU)"
                    if want is DType.BF16
                    else ""
                )
                self.fail(
                    spec,
                    f"{what} must hold `{want.value}`{extra}, but it is {ref.describe()}",
                    code=lcodes.DTYPE_MISMATCH,
                    help=_fix_dtype(ref, spec.name, storage, mutable),
                )
        rank = len(spec.dims or ())
        if spec.dims is not None and rank != len(ref.shape):
            self.fail(
                spec,
                f"{what} must have {rank} dimension{'s' if rank != 1 else ''}, "
                f"but it is {ref.describe()}",
                code=lcodes.RANK_MISMATCH,
                help=_fix_rank(tuple(ref.shape), spec.name, tuple(spec.dims or ()), mutable, ref.host),
            )
        big = next((d for d in ref.shape if d > MAX_DIM), None)
        if big is not None:
            self.fail(
                spec,
                f"{what} is {ref.describe()}: a dimension of {big} elements is more than "
                f"the {MAX_DIM} a Tile tensor's dimension holds (its indices are `i32`)",
                help=f"split that dimension in two (`{spec.name}.reshape(..)` with one more "
                "dimension), or pass the array in parts",
                code=acodes.UNUSABLE_ARRAY,
            )
        if not ref.contiguous:
            self.fail(
                spec,
                f"{what} is not contiguous ({_strides_text(ref)}, shape {list(ref.shape)}): "
                "Tile reads a tensor as one row-major block",
                help=_fix_contiguous(ref, spec.name, mutable),
                code=acodes.NOT_CONTIGUOUS,
            )
        if mutable and ref.readonly and frozen_by(value):
            # read-only only while a launch in flight uses it (`borrowed.py`):
            # the operation may be built, and starting it while that launch
            # is in flight is the in-flight error (E0305/E0309). Its plan is
            # not kept: the key says "read-only", and a later call of that
            # key with an array that really is read-only must be refused.
            self.keep_plan = False
        elif mutable and ref.readonly:
            message, fix = arrays.read_only_text(ref, what, spec.name, "the kernel writes it")
            self.fail(spec, message, help=fix, code=acodes.READ_ONLY_ARRAY)
        if mutable and ref.library == "torch" and getattr(ref.obj, "requires_grad", False):
            # the key holds `requires_grad` but not autograd's mode, which decides (`grad_leaf`):
            # such a call takes this path each time
            self.keep_plan = False
            self.grad_written = True
            if arrays.grad_leaf(ref):
                message, fix = arrays.grad_leaf_text(what, spec.name, "the kernel writes it", ref.obj)
                self.fail(spec, message, help=fix, code=acodes.READ_ONLY_ARRAY)
        if ref.copied and (mutable or not arrays.immutable(ref)):  # (a JAX array's copy is its value)
            message, fix = arrays.copied_text(ref, what, spec.name, "the kernel writes it", mutable)
            self.fail(spec, message, help=fix, code=acodes.UNUSABLE_ARRAY)
        if ref.is_cuda and ref.nbytes and not ref.ptr:  # (hrev30: a foreign interface's address 0 for elements)
            self.fail(
                spec,
                f"{what} is {ref.describe()} at address 0: an array of elements has memory somewhere, and "
                "the GPU cannot load from address 0",
                help="pass an array its library made (a CuPy array or a PyTorch tensor): its interface is malformed",
                code=acodes.UNUSABLE_ARRAY,
            )
        if ref.is_cuda and ref.nbytes and ref.ptr % _itemsize(ref):  # (an empty one is never read)
            self.fail(
                spec,
                f"{what} is {ref.describe()} at address {ref.ptr:#x}, which is not a multiple "
                f"of its element size ({_itemsize(ref)} bytes): the GPU cannot load it",
                help=(
                    f"pass an aligned copy and keep it, the results are written into it: "
                    f"`{spec.name} = {spec.name}.copy()`"
                    if mutable
                    else f"pass an aligned copy (`{spec.name}.copy()`)"
                ),
                code=acodes.UNUSABLE_ARRAY,
            )
        self.refs.append((spec, ref, mutable))
        return ref

    def _tile_rank_help(self, spec: ParamSpec, tile: Sequence[Any], rank: int) -> str:
        """E0507's help for a partition's tile of the wrong rank: the parameter's declared tile shape, with the
        given sizes in its generic dimensions where they fill them exactly (`[64]` for `[1, BN]`: `[1, 64]`)."""
        dims = [span_text(d.span, self.m._sources) if d is not None else "?" for d in spec.dims or ()]
        if len(dims) != rank or not dims:
            return "give one tile size per dimension"
        sizes = iter(tile)
        open_dims = [d for d in dims if not d.isdigit()]
        if len(open_dims) == len(tile) and all(isinstance(t, int) for t in tile):
            fill = [d if d.isdigit() else str(next(sizes)) for d in dims]
            return (f"give one tile size per dimension, as `{spec.name}`'s tile `[{', '.join(dims)}]` has: "
                    f"`tilelang.partition({spec.name}, [{', '.join(fill)}])`")
        return f"give one tile size per dimension, as `{spec.name}`'s tile `[{', '.join(dims)}]` has"

    def check_tile(self, spec: ParamSpec, tile: tuple[int, ...]) -> None:
        """The backend's limits on tile shapes, which the type checker applies
        to Tile callers (E0212: positive dims, E0213: at most 2^20 elements):
        they hold on every engine alike."""
        for d in tile:
            if d <= 0:
                self.fail(
                    spec,
                    f"tile dimension {d} of `{spec.name}` is not positive",
                    code=tcodes.TILE_DIM_NOT_POSITIVE,
                    help="use a positive size (any size: edge tiles may be partial)",
                )
        n = math.prod(tile)
        if n > MAX_TILE_ELEMENTS:
            self.fail(
                spec,
                f"a tile of shape {list(tile)} has {n} elements, more than the "
                f"{MAX_TILE_ELEMENTS} a tile block may hold",
                code=tcodes.TILE_TOO_LARGE,
                help="use smaller tiles",
            )

    def scalar(self, spec: ParamSpec, value: Any, dt: DType | None) -> Any:
        return check_scalar(self.k, spec, value, dt)

    def build(self) -> Operation:
        k = self.k
        decl = k.decl
        type_names = {g.name.name for g in decl.generics if not g.is_const}
        tensors: list[Any] = []
        for spec, value in zip(k.specs, self.values, strict=True):
            if spec.kind == "mut":
                if not isinstance(value, Partition):
                    try:
                        arrays.describe(value)
                        is_array = True
                    except (NotAnArray, Unsupported):
                        is_array = False
                    if is_array:
                        tile = ", ".join(
                            span_text(d.span, self.m._sources) if d is not None else "?"
                            for d in spec.dims or ()
                        )
                        self.fail(
                            spec,
                            f"mutable argument `{spec.name}` of kernel `{self.kname}` must "
                            "be a partition, so that each block writes only its own tile",
                            code=ocodes.MUT_TENSOR_WITHOUT_PARTITION,
                            cls=BorrowError,
                            help=f"pass `tilelang.partition({spec.name}, [{tile}])` "
                            "with the tile shape the kernel should use",
                        )
                    self.fail(
                        spec,
                        f"argument `{spec.name}` of kernel `{self.kname}` must be "
                        f"`tilelang.partition(array, tile)`, not {a_type(value)}",
                        code=acodes.NOT_AN_ARRAY,
                        help=f"pass `tilelang.partition({spec.name}, [..])` of a NumPy array, a "
                        "PyTorch tensor or a CuPy array",
                    )
                if Ellipsis in value.tile:
                    self.fail(
                        spec,
                        f"the tile shape of `{spec.name}` is left to the tuner (`...`), but kernel "
                        f"`{self.kname}` has no `#[autotune(..)]` attribute",
                        code=lcodes.BAD_PARTITION,
                        help="give the tile shape, or add `#[autotune(..)]` with candidates for "
                        "the generics of the tile to the kernel",
                    )
                ref = self.array(spec, value.array, True)
                if len(value.tile) != len(ref.shape):
                    self.fail(
                        spec,
                        f"the tile shape {list(value.tile)} of `{spec.name}` has "
                        f"{len(value.tile)} dimension{'s' if len(value.tile) != 1 else ''}, "
                        f"but the array has {len(ref.shape)}",
                        code=lcodes.BAD_PARTITION,
                        help=self._tile_rank_help(spec, value.tile, len(ref.shape)),
                    )
                self.check_tile(spec, value.tile)
                tensors.append((spec, ref, value.tile))
            elif spec.kind == "ref":
                if isinstance(value, Partition):
                    self.fail(
                        spec,
                        f"argument `{spec.name}` of kernel `{self.kname}` is read only "
                        "(`&`): pass the array itself, not a partition",
                        code=tcodes.MISMATCHED_TYPES,
                        help=f"pass `{spec.name}`",
                    )
                # a `&` parameter the kernel's `unsafe` code writes (atomics,
                # `store_unchecked`) is written memory for the borrow checks
                writes = getattr(self.m._ownership, "writes_for", None)
                written = writes is not None and spec.name in writes(self.k.key)
                tensors.append((spec, self.array(spec, value, written), None))
            elif spec.kind == "scalar":
                dt = DType.parse(spec.elem or "") if spec.elem not in type_names else None
                checked = self.scalar(spec, value, dt)
                raw = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
                if dt is None and isinstance(raw, np.generic):
                    checked = raw  # a NumPy scalar's dtype may fix `T` (`a: T`)
                tensors.append((spec, checked, None))
            else:
                tensors.append((spec, value, None))

        # One engine per call: the arrays' address space decides.
        spaces: dict[str, tuple[ParamSpec, ArrayRef]] = {}
        for spec, ref, _ in self.refs:
            spaces.setdefault(ref.space, (spec, ref))
        if len(spaces) > 1:
            (s1, r1), (s2, r2) = list(spaces.values())[:2]
            self.fail(
                s2,
                f"the arrays of one call must be on one device, but `{s1.name}` is "
                f"{r1.describe()} and `{s2.name}` is {r2.describe()}",
                help="move them to one device first (`.cuda()`/`cupy.asarray(..)`, or "
                "`.cpu().numpy()`)",
                code=acodes.MIXED_DEVICES,
            )
        space = next(iter(spaces), "cpu")
        engine = space if space != "cpu" else self.m._engine_for_host()
        runtime = self.m._runtime(engine)
        device: Any = runtime.device  # a CudaDevice when `engine` is CUDA

        # Bind with the caller's memory (no copies): host arrays as CPU tensors,
        # CUDA arrays wrapped in place.
        launch_args: list[LaunchArg] = []
        for spec, v, tile in tensors:
            if isinstance(v, ArrayRef):
                dt = v.dtype
                want = DType.parse(spec.elem or "")
                if want is DType.BF16:
                    dt = DType.BF16
                assert dt is not None
                if v.is_cuda and v.dtype is DType.BF16:
                    # 2-byte bfloat16 memory in place (torch.bfloat16 on the GPU)
                    storage = device.wrap_external(v.ptr, v.shape, np.uint16, v.nbytes, bf16=True)
                    t = Tensor(dt, v.shape, storage, device)
                elif v.is_cuda:
                    storage = device.wrap_external(v.ptr, v.shape, dt.np_dtype, v.nbytes)
                    t = Tensor(dt, v.shape, storage, device)
                else:
                    t = Tensor(dt, v.shape, v.host, _device("cpu"))
                launch_args.append(
                    LaunchArg(_RtPartition(t, tile) if tile is not None else t, spec.span)
                )
            else:
                launch_args.append(LaunchArg(v, spec.span))

        generics = self.generics(type_names)
        ev = self.m._evaluator()
        call_span = decl.name.span
        try:
            bound = bind_launch(decl, launch_args, call_span, generics, ev._eval_dim)
            from tilelang.runtime.host import FnRef

            ev.check_deferred(call_span, FnRef(decl, k.key), bound)
        except TileError as e:
            err = CallError.from_tile_error(e, self.m._sources)
            # The runtime's label describes the argument, which has no source
            # here; point at the parameter's declaration instead.
            span = e.diagnostics[0].primary_span if e.diagnostics else None
            param = next((sp for sp in k.specs if sp.span == span), None)
            if param is not None:
                err.where = self.where(param)
            raise err from None

        for spec, value in zip(k.specs, self.values, strict=True):
            # a scalar of a type parameter: checked as the type the tensors bound
            # it to (`a: T` with `T = i32` takes no 2.5, as `a: i32` would not)
            if spec.kind == "scalar" and spec.elem in type_names:
                bound_dt = bound.instantiation.get(spec.elem)
                if isinstance(bound_dt, DType):
                    self.scalar(spec, value, bound_dt)
        kir, prepared = self.check_instance(runtime, bound)
        if kir.claims:  # a device function's declared sizes (hrev29): at the call, as the kernel's own
            from tilelang.ir import arg_dims

            try:
                arg_dims.check(kir, [a.value.tensor if isinstance(a.value, _RtPartition) else a.value
                                     for a in launch_args], None, arg_dims.claimed_dims(kir))
            except TileError as e:
                raise CallError.from_tile_error(e, self.m._sources) from None
        plan = self.plan(bound, runtime, engine, space, launch_args, kir, prepared)
        ptrs = [r.ptr for _, r, _ in self.refs]
        check_overlaps(plan, ptrs)
        if self.grad_written:
            plan.grad_written = True
        if plan.arrays and all(s.library == "torch" for s in plan.arrays):
            plan.guard = tensor_guard([r.obj for _, r, _ in self.refs])
        scalars = [bound.args[sc.param] for sc in plan.scalars]
        op = Operation(
            plan,
            ptrs,
            [r.obj for _, r, _ in self.refs],
            scalars,
            [r.host for _, r, _ in self.refs],
        )
        if engine != "cpu" and space != "cpu":  # the buffers made for the checks
            op._wrapped = [
                (a.value.tensor if isinstance(a.value, _RtPartition) else a.value).storage
                for a in launch_args
                if isinstance(a.value, (Tensor, _RtPartition))
            ]
        return op

    def plan(
        self,
        bound: BoundLaunch,
        runtime: Runtime,
        engine: str,
        space: str,
        launch_args: list[LaunchArg],
        kir: Any,
        prepared: Any,
    ) -> Plan:
        """What every later call with this call's argument kinds may reuse."""
        k = self.k
        type_names = {g.name.name for g in k.decl.generics if not g.is_const}
        slots: list[ArraySlot] = []
        host_views: list[str | None] = []  # how the fast path gets a slot's NumPy view
        iface: list[tuple[int, str]] = []  # arrays of other libraries: their interface, re-read
        scalars: list[ScalarSlot] = []
        by_name: dict[str, tuple[bool, int]] = {}
        refs = iter(self.refs)
        for i, (spec, la) in enumerate(zip(k.specs, launch_args, strict=True)):
            v = la.value
            if isinstance(v, (Tensor, _RtPartition)):
                _, ref, mutable = next(refs)
                t = v.tensor if isinstance(v, _RtPartition) else v
                bf16_memory = ref.is_cuda and ref.dtype is DType.BF16
                by_name[spec.name] = (True, len(slots))
                if ref.library in ("jax", "jaxlib"):
                    pass  # (immutable: a JAX array's memory never changes)
                elif isinstance(ref.obj, arrays.DLPackExport) or (
                    ref.host is not None and ref.host is not ref.obj and ref.library not in ("numpy", "torch")
                    and not hasattr(ref.obj, "__array_interface__")
                ):  # through DLPack: the export the operation holds keeps the old memory alive
                    iface.append((len(slots), "__dlpack__"))
                elif ref.library not in ("numpy", "torch", "cupy"):
                    attr = "__cuda_array_interface__" if ref.is_cuda else "__array_interface__"
                    if hasattr(ref.obj, attr):
                        iface.append((len(slots), attr))
                host_views.append(
                    None
                    if ref.host is None
                    else "array"
                    if ref.host is ref.obj
                    else "torch"
                    if ref.library == "torch"
                    else None  # not on the fast path (`fastpath.probe` refuses it)
                )
                slots.append(
                    ArraySlot(
                        param=i,
                        name=spec.name,
                        mutable=mutable,
                        nbytes=ref.nbytes,
                        shape=ref.shape,
                        dtype=t.dtype,
                        np_dtype=np.dtype(np.uint16) if bf16_memory else np.dtype(t.dtype.np_dtype),
                        bf16_memory=bf16_memory,
                        library=ref.library,
                        tile=v.tile if isinstance(v, _RtPartition) else None,
                    )
                )
            else:
                check = DType.parse(spec.elem or "") if spec.elem not in type_names else None
                bound_dt = check
                if bound_dt is None and isinstance(bound.instantiation.get(spec.elem or ""), DType):
                    bound_dt = bound.instantiation[spec.elem or ""]  # type: ignore[assignment]
                    check = bound_dt  # later calls with this key: the same type, the same checks
                by_name[spec.name] = (False, len(scalars))
                scalars.append(ScalarSlot(i, spec, check, bound_dt))
        names = [p.name for p in getattr(kir, "params", ())] or [s.name for s in k.specs]
        order = tuple(by_name[n] for n in names)
        pairs = tuple(
            (a, b)
            for b in range(len(slots))
            for a in range(b)
            if slots[a].mutable or slots[b].mutable
        )
        first = self.refs[0][1] if self.refs else None
        copies = (space == "cpu" and engine != "cpu") or (
            space == "cpu" and any(s.dtype is DType.BF16 for s in slots)
        )
        return Plan(
            requires=_requirements_of_numbers(k.decl, k.specs, launch_args, bound, scalars),
            kernel=k,
            # without the arguments: a plan must not keep the caller's arrays alive
            bound=BoundLaunch(bound.instantiation, bound.grid, []),
            runtime=runtime,
            engine=engine,
            space=space,
            arrays=tuple(slots),
            scalars=tuple(scalars),
            pairs=pairs,
            order=order,
            kir=kir,
            prepared=prepared,
            copies=copies,
            library=first.library if first is not None else "numpy",
            device_index=first.device_index if first is not None else -1,
            # a `__cuda_array_interface__`'s stream is part of the key, so a constant here
            stream_hint=first.stream if first is not None else None,
            host_views=tuple(host_views),
            iface=tuple(iface),
        )

    def check_instance(self, runtime: Runtime, bound: BoundLaunch) -> tuple[Any, Any]:
        """Lower this instantiation now (cached per instantiation) and apply the
        tile limits to every tile it makes: the type checker does this for a
        Tile caller's generics (E0212/E0213), which Python callers bypass."""
        from tilelang.ir import nodes as ir

        op = _RtOperation(self.k.decl, self.k.key, bound, self.k.decl.name.span, runtime)
        try:
            kir, prepared = runtime._prepared(op)
        except TileError as e:
            raise CallError.from_tile_error(e, self.m._sources) from None
        if id(kir) in self.m._checked:  # the runtime caches `kir`, so its id is stable
            return kir, prepared
        gen = ", ".join(f"{k} = {v}" for k, v in bound.instantiation.items())
        for node in ir.walk(kir.body):
            for v in ir.op_results(node):
                shape = v.type.shape
                bad = next((d for d in shape if d <= 0), None)
                n = math.prod(shape)
                if bad is None and n <= MAX_TILE_ELEMENTS:
                    continue
                where = (
                    self.m._where(node.span, "this tile") if getattr(node, "span", None) else None
                )
                if bad is not None:
                    raise CallError(
                        f"with {gen}, kernel `{self.kname}` makes a tile of shape {list(shape)}: "
                        f"dimension {bad} is not positive",
                        code=tcodes.TILE_DIM_NOT_POSITIVE,
                        where=where,
                        help="choose generics that make every tile dimension positive",
                    )
                raise CallError(
                    f"with {gen}, kernel `{self.kname}` makes a tile of shape {list(shape)} "
                    f"with {n} elements, more than the {MAX_TILE_ELEMENTS} a tile block "
                    "may hold",
                    code=tcodes.TILE_TOO_LARGE,
                    where=where,
                    help="choose smaller generics",
                )
        self.m._checked.add(id(kir))
        return kir, prepared

    def generics(self, type_names: set[str]) -> dict[str, tuple[Any, Span]]:
        decl = self.k.decl
        out: dict[str, tuple[Any, Span]] = {}
        explicit = self.k.explicit
        if len(explicit) == 1 and isinstance(explicit[0], dict):  # `kernel[{"BM": 64}]`: by name
            by_name = explicit[0]
            unknown = [n for n in by_name if n not in {g.name.name for g in decl.generics}]
            if unknown:
                raise CallError(
                    f"kernel `{self.kname}` has no generic `{unknown[0]}`",
                    where=self.m._where(decl.name.span, f"`{self.k.signature}`"),
                    help=f"its generics are {', '.join(f'`{g.name.name}`' for g in decl.generics)}",
                    code=acodes.BAD_GENERIC,
                )
            pairs = [(g, by_name[g.name.name]) for g in decl.generics if g.name.name in by_name]
        else:
            pairs = list(zip(decl.generics, explicit, strict=False))
        for g, v in pairs:
            if g.is_const:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise CallError(
                        f"const generic `{g.name.name}` of kernel `{self.kname}` takes an "
                        f"integer, not {v!r}",
                        where=self.m._where(g.span, "declared here"),
                        help=f"give `{g.name.name}` a Python int",
                        code=acodes.BAD_GENERIC,
                    )
                if not -(1 << 31) <= int(v) < (1 << 31):
                    raise CallError(
                        f"const generic `{g.name.name}` of kernel `{self.kname}` is an `i32`, which "
                        f"cannot hold {int(v)}",
                        where=self.m._where(g.span, "declared here"),
                        help="give a value in -2147483648..=2147483647 (as `k::<..>` takes in Tile)",
                        code=tcodes.LITERAL_OUT_OF_RANGE,
                    )
                out[g.name.name] = (int(v), g.span)
            else:
                dt = (
                    v
                    if isinstance(v, DType)
                    else DType.parse(str(v))
                    if isinstance(v, str)
                    else None
                )
                if dt is None and isinstance(v, (type, np.dtype)):
                    try:
                        dt = dtype_of_array(np.empty(0, v))
                    except TypeError:
                        dt = None
                if dt is None:
                    raise CallError(
                        f"type parameter `{g.name.name}` of kernel `{self.kname}` takes an "
                        f'element type ("f32", numpy.float16, ...), not {v!r}',
                        where=self.m._where(g.span, "declared here"),
                        help=f'give `{g.name.name}` a Tile type name ("f16") or a NumPy dtype',
                        code=acodes.BAD_GENERIC,
                    )
                out[g.name.name] = (dt, g.span)
        # Every generic needs a value: from the explicit list, or from an
        # argument that names it directly (a tile or array dimension, an
        # element type). The type checker asks the same of Tile callers (E0215).
        bindable = set(out) | _inferable(decl, self.k.specs)
        missing = [g for g in decl.generics if g.name.name not in bindable]
        if missing:
            names = ", ".join(g.name.name for g in decl.generics)
            raise CallError(
                f"kernel `{self.kname}` cannot infer {', '.join(f'`{g.name.name}`' for g in missing)} "
                "from its arguments",
                where=self.m._where(missing[0].span, "declared here"),
                help=f"give them by name, `{self.kname}[{{" + ", ".join(
                    f'"{g.name.name}": {"numpy.float16" if not g.is_const else "..."}' for g in missing)
                + f"}}](...)`, or all in order, `{self.kname}[{names}](...)`"
                + ("" if not (unnamed := [g.name.name for g in missing if g.is_const and g.name.name not in
                                          _shape_names(self.k.specs)]) else
                   f": no parameter's shape names {' or '.join(f'`{n}`' for n in unnamed)} "
                   "(the kernel's body uses it), so its value is the one your data needs, not one the call "
                   "can check"),
                code=tcodes.CANNOT_INFER,
            )
        return out


def _shape_names(specs: tuple[ParamSpec, ...]) -> set[str]:
    """Every name in a tensor parameter's shape (`[B]`, `[2 * HD, ?]`)."""
    from tilelang.syntax import ast

    return {n.ident.name for sp in specs for d in sp.dims or () if d is not None
            for n in ast.walk(d) if isinstance(n, ast.Name)}


def check_scalar(kernel: KernelLike, spec: ParamSpec, value: Any, dt: DType | None) -> Any:
    """A number for parameter `spec`, checked against its type `dt` (None: a
    type parameter, any number); raises `CallError` naming the fix."""
    what = f"argument `{spec.name}` of kernel `{kernel.__name__}`"
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, Partition):
        _fail(kernel, spec, f"{what} is a number (`{spec.elem}`), not a partition",
              help="pass a Python number")
    if not isinstance(value, (bool, int, float, numbers.Number, np.generic)):  # (`scalar_value`'s helps)
        one = False
        try:
            ref = arrays.describe(value)
            got, one = ref.describe(), math.prod(ref.shape) == 1
        except (NotAnArray, Unsupported):
            got = f"a `{type(value).__name__}`"
        _fail(kernel, spec, f"{what} is a number (`{spec.elem}`), but it is {got}",  # (round 17: `.item()`)
              help="pass a Python number" + (": `.item()` of the tensor is its one value (on a GPU it waits for "
                                            "the value to be computed)" if one else ""))
    # kind and range: the same rules (and codes) as host functions' scalars (api/scalars.py)
    m = kernel.module
    where = m._where(spec.span, f"`{spec.name}: {span_text(spec.span, m._sources)}` is declared here")
    return scalar_value(what, value, dt, where=where)


def _fail(kernel: KernelLike, spec: ParamSpec, message: str, *, help: str) -> NoReturn:
    """A scalar parameter given something that is not a number: E0203, as a
    Tile caller's `k(.., "2")` or a host function's from Python."""
    m = kernel.module
    where = m._where(
        spec.span, f"`{spec.name}: {span_text(spec.span, m._sources)}` is declared here"
    )
    raise CallError(message, help=help, where=where, code=tcodes.MISMATCHED_TYPES)


def _in_place_help(plan: Plan, a: int, b: int) -> str | None:
    """E0303 of one array given to a `&mut` parameter and a `&` one that the kernel reads only at the `&mut`
    one's own tile (`x.load_like(y)`): the help says how to write the kernel in place (huser26: "pass a copy, or
    separate arrays" alone)."""
    from tilelang.ownership.host_report import reads_own_tile_only

    sa, sb = plan.arrays[a], plan.arrays[b]
    if sa.mutable == sb.mutable:
        return None
    m, s = (sa, sb) if sa.mutable else (sb, sa)
    decl = getattr(plan.kernel, "decl", None)
    if decl is None or not reads_own_tile_only(decl, m.name, s.name):
        return None
    return (f"`{decl.name.name}` reads `{s.name}` only at the own tile of `{m.name}` (`{s.name}.load_like("
            f"{m.name})`): to update the array in place, read `{m.name}.load()` there instead and drop the "
            f"parameter `{s.name}`; or pass `{s.name}` a copy of the array (`.copy()`)")


def check_overlaps(plan: Plan, ptrs: list[int]) -> None:
    """E0303: no two arrays of one call share memory where one of them is
    written (interval tests; the tracker words the error)."""
    arrays_ = plan.arrays
    for a, b in plan.pairs:
        pa, pb = ptrs[a], ptrs[b]
        na, nb = arrays_[a].nbytes, arrays_[b].nbytes
        if na and nb and pa < pb + nb and pb < pa + na:
            regions = [
                (Region(p, s.nbytes, s.name), s.mutable) for p, s in zip(ptrs, arrays_, strict=True)
            ]
            try:
                BorrowTracker().launch(
                    plan.kernel.__name__,
                    [r for r, m in regions if m],
                    [r for r, m in regions if not m],
                    sync=True,
                )
            except TileError as e:
                err = BorrowError.from_tile_error(e, plan.kernel.module._sources)
                err.help = _in_place_help(plan, a, b) or err.help
                raise err from None


def call(kernel: KernelLike, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Operation:
    """`kernel(*args, **kwargs)`: from the plan of an earlier call with the
    same key when there is one (`fastpath.py`; for PyTorch tensors the last
    plan's memo reads the key first), after the checks the key does not
    settle (the overlap of the call's own arrays, E0303; the numbers); else
    through every check (and the plan is kept for the next call)."""
    if kwargs:
        got = None
    else:
        memo = kernel._memo
        if memo is not None:
            op = memo(args)
            if op is not None:
                return op  # type: ignore[no-any-return]
        got = kernel._keyer(args)
        if got is not None:
            key, ptrs, objs = got
            plan = kernel._plans.get(key)
            if plan is not None:
                if plan.memo is not None:
                    kernel._memo = plan.memo
                return _from_plan(kernel, plan, args, ptrs, objs)
    # a partition's array no variable holds (E0313, `temporaries.py`): the key
    # skips one the partition alone holds; the arguments' counts are still the
    # caller's here (only their tuple was passed on), unless the top of
    # `Kernel.__call__` checked them already
    lost = None
    if not kwargs and got is None:
        if not kernel._check_at_top and unheld_partition(kernel._mut_at, args):
            lost = find_unheld(kernel, "kernel", kernel._written_params, args, kwargs, arg_counts(args, kwargs))
        if lost is None:
            # a partition the caller holds (`p.array`), or whose array's writes are not lost (a view of a
            # held array; another library's array, which E0313 never judges: `o.view(..)` made in the
            # call): its plan serves it (it took the whole checked path every call, ~0.5 ms on the H100)
            got = kernel._keyer_held(args)
            if got is not None:
                plan = kernel._plans.get(got[0])
                if plan is not None:
                    return _from_plan(kernel, plan, args, got[1], got[2])
    values = _match_args(kernel.__name__, "kernel", kernel.decl, args, kwargs, kernel.module)
    checked = _Call(kernel, values)
    op = checked.build()
    if lost is not None:  # refused when it runs
        LOST[op] = lost
        return op
    if got is not None and checked.keep_plan:
        plans = kernel._plans
        if len(plans) >= MAX_PLANS:
            plans.clear()
        plan = plans[got[0]] = op._plan
        plan.memo = memo_for(
            kernel._kinds, got[0], plan, Operation, functools.partial(_from_plan, kernel, plan)
        )
        if plan.memo is not None:
            kernel._memo = plan.memo
    return op


def _from_plan(
    kernel: KernelLike, plan: Plan, args: tuple[Any, ...], ptrs: list[int], objs: list[Any]
) -> Operation:
    """The operation of a call whose key has `plan`: the checks the key
    does not settle, then the operation."""
    for i, size in plan.align:
        if (ptrs[i] % size or not ptrs[i]) and plan.arrays[i].nbytes:  # the checked path words it (E0801)
            values = _match_args(kernel.__name__, "kernel", kernel.decl, args, {}, kernel.module)
            return _Call(kernel, values).build()
    for a, b, na, nb in plan.overlaps:
        pa = ptrs[a]
        pb = ptrs[b]
        if pa < pb + nb and pb < pa + na:
            check_overlaps(plan, ptrs)  # words the error
    scalars: list[Any] = []
    if plan.quick:
        for (param, quick), sc in zip(plan.quick, plan.scalars, strict=True):
            v = args[param]
            if quick is not None and type(v) is quick[0] and quick[1] <= v <= quick[2]:
                scalars.append(quick[3](v))
            else:
                scalars.append(_bound_scalar(kernel, sc, v))
    if plan.requires is not None and not plan.requires(scalars):
        # a `#[requires(..)]` these numbers break: the checked path words it (E0513)
        values = _match_args(kernel.__name__, "kernel", kernel.decl, args, {}, kernel.module)
        return _Call(kernel, values).build()
    plan.stats["hits"] += 1
    return Operation(plan, ptrs, objs, scalars)


def _requirements_of_numbers(
    decl: Any, specs: tuple[ParamSpec, ...], launch_args: list[LaunchArg], bound: BoundLaunch,
    scalars: list[ScalarSlot],
) -> Any:
    """`Plan.requires`: the kernel's requirements that read a number, as a
    function of a call's numbers (the shapes and generics are the key's)."""
    names = {sc.spec.name for sc in scalars}
    reqs = tuple(r for r in requirements(decl) if read_names(r) & names)
    if not reqs:
        return None
    shapes, values = requirement_inputs(specs, [a.value for a in launch_args], bound.args,
                                        dict(bound.instantiation), bound.grid)
    order = [sc.spec.name for sc in scalars]

    def hold(numbers: list[Any]) -> bool:
        env = {**values, **dict(zip(order, numbers, strict=True))}
        try:
            return all(evaluate_requirement(r.cond, shapes, env) for r in reqs)
        except DivisionByZero:
            return False

    return hold


def _bound_scalar(kernel: KernelLike, sc: ScalarSlot, value: Any) -> Any:
    v = check_scalar(kernel, sc.spec, value, sc.check)
    return v if sc.bound is None else _to_scalar(v, sc.bound)
