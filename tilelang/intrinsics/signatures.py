"""The one table of Tile's built-in operations (BRIEF §4 and §5).

Every built-in function (`exp`, `zeros`, `mma`, `assert_close` ...) and every
built-in method (`x.load_like(z)`, `t.partition([..])`, `op.sync()` ...) has one
`Signature` here: its name, where it may be used (`Context`), its parameter
names, a display signature and a one-line doc (the LSP and the REPL show
them), and `rule`, the name of its typing rule in `tilelang.sema.rules`
(`RULES[rule]`). Functions and methods live in two dicts because a name can be
both (`sum(t, 1)` and `t.sum(1)`); `OPERATIONS` names every operation once.

The interpreter (`tilelang.interp`), the host runtime and the backend key their
implementation tables by these same names; a test checks that none lacks an
entry and that every `rule` exists in the checker.

Invariant: this module imports only the standard library (and
`tilelang.intrinsics.constants`, which imports `tilelang.dtypes`).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from tilelang.frozen import frozen
from tilelang.intrinsics.constants import assert_close_defaults_text


class Context(Enum):
    KERNEL = "kernel"  # only inside a kernel (or a device function)
    HOST = "host"  # only in host code
    BOTH = "both"

    def allows(self, in_kernel: bool) -> bool:
        return self is Context.BOTH or (self is Context.KERNEL) == in_kernel

    @property
    def where(self) -> str:
        """Words for diagnostics: "`x` is only allowed {where}"."""
        return {
            Context.KERNEL: "inside a kernel or device function",
            Context.HOST: "in host code",
            Context.BOTH: "anywhere",
        }[self]


@frozen(eq=True)
class Signature:
    name: str
    context: Context
    params: tuple[str, ...]  # positional parameter names (a `*` prefix: variadic)
    signature: str  # for display, e.g. "exp(x: Tile<T, S>) -> Tile<T, S>"
    doc: str  # one line
    rule: str  # typing rule key in tilelang.sema.rules.RULES
    optional: int = 0  # how many trailing positional params may be left out
    keywords: tuple[str, ...] = ()  # keyword-only params (`rtol`, `atol`)
    receivers: tuple[str, ...] = ()  # methods: receiver kinds, see RECEIVERS
    generics: tuple[str, ...] = ()  # turbofish params, e.g. ("T",)
    is_method: bool = False

    @property
    def qualname(self) -> str:
        """`exp` for a function, `.load_like` for a method (OPERATIONS' key)."""
        return "." + self.name if self.is_method else self.name

    @property
    def min_args(self) -> int:
        if self.params and self.params[-1].startswith("*"):
            return len(self.params) - 1
        return len(self.params) - self.optional

    @property
    def max_args(self) -> int | None:
        if self.params and self.params[-1].startswith("*"):
            return None
        return len(self.params)


# Kinds of receiver a method is defined on (for docs, completion, "no method").
RECEIVERS = {
    "tile": "a tile value (kernel)",
    "param": "a tensor parameter of a kernel (`&` or `&mut`)",
    "view": "a tiling made by `x.partition([..])` inside a kernel",
    "tensor": "a host tensor",
    "partition": "a host partition",
    "op": "a kernel call not yet run",
    "handle": "a launched operation",
    "graph": "a recorded graph",
    "scalar": "a scalar",
}

FUNCTIONS: dict[str, Signature] = {}
METHODS: dict[str, Signature] = {}


def _fn(name: str, ctx: Context, params: tuple[str, ...], sig: str, doc: str, rule: str,
        **kw: Any) -> None:
    FUNCTIONS[name] = Signature(name, ctx, params, sig, doc, rule, **kw)


def _m(name: str, ctx: Context, receivers: tuple[str, ...], params: tuple[str, ...], sig: str,
       doc: str, rule: str, **kw: Any) -> None:
    METHODS[name] = Signature(name, ctx, params, sig, doc, rule, receivers=receivers, is_method=True, **kw)


K, H, B = Context.KERNEL, Context.HOST, Context.BOTH

# ---------------------------------------------------------------- kernel: position
_fn("block_id", K, ("axis",), "block_id(axis: i32) -> i32",
    "this tile block's index along grid axis `axis` (0, 1 or 2)", "grid_index")
_fn("num_blocks", K, ("axis",), "num_blocks(axis: i32) -> i32",
    "the number of tile blocks along grid axis `axis`", "grid_index")
_fn("last_block", K, ("axis",), "if last_block(axis: i32) { .. }",
    "true in the one block of each group (the blocks that differ only along grid axis `axis`) "
    "that arrives last, after every other block of its group has finished; only as the whole "
    "condition of an `if` that ends a kernel", "last_block")
_fn("queue", K, ("axis",), "for s in queue(axis: i32) { .. }",
    "the tiles of the kernel's `&mut` partitions along grid axis `axis`, one row of blocks pulling "
    "them until none is left (each tile exactly once, a block that finishes early takes more); "
    "inside the loop the `&mut` tiles are tile `s`'s; only as the range of a `for` at the top "
    "level of a kernel", "queue")
_fn("tiles", K, ("axis",), "for s in tiles(axis: i32) { .. }",
    "the tiles of the kernel's `&mut` partitions along grid axis `axis`, dealt round-robin to one wave "
    "of blocks a row (block b of G takes tiles b, b + G, b + 2 G, ..: each tile exactly once, no "
    "atomics); inside the loop the `&mut` tiles are tile `s`'s; only as the range of a `for` at the "
    "top level of a kernel", "queue")
_fn("cluster_gather", K, ("x",), "let parts = cluster_gather(x: Tile<T, S> | T) -> Tile<T, [C, ..S]>",
    "in a `#[cluster(..)]` kernel: every block of the thread-block cluster gives its `x` and gets "
    "all of them, row c the block of cluster rank c (axis 0 fastest: `block_id(0) % cx + cx * "
    "(block_id(1) % cy) + ..`), a read-only copy; only as the whole initializer of a `let` at the "
    "top level of the kernel's body", "cluster_gather")

# ---------------------------------------------------------------- creation
_fn("zeros", B, ("shape",), "zeros::<T>(shape: [..]) -> Tile<T, shape> | Tensor<T, shape>",
    "a tile (kernel) or tensor (host) of zeros", "fill", generics=("T",))
_fn("ones", B, ("shape",), "ones::<T>(shape: [..]) -> Tile<T, shape> | Tensor<T, shape>",
    "a tile (kernel) or tensor (host) of ones", "fill", generics=("T",))
_fn("full", B, ("shape", "value"), "full::<T>(shape: [..], value: T) -> Tile<T, shape> | Tensor<T, shape>",
    "a tile (kernel) or tensor (host) filled with `value`", "fill", generics=("T",))
_fn("arange", B, ("n",), "arange::<T>(n) -> Tile<T, [n]> | Tensor<T, [n]>",
    "0, 1, ..., n - 1 as a tile (kernel, `n` constant) or tensor (host); values past `T`'s range are an "
    "error, never wrapped (E0231, at run time E0722)", "arange", generics=("T",))
_fn("rand", H, ("shape", "seed"), "rand::<T>(shape: [..], seed: i64) -> Tensor<T, shape>",
    "a tensor of uniform random numbers in [0, 1), deterministic for a seed", "random",
    generics=("T",))
_fn("randn", H, ("shape", "seed"), "randn::<T>(shape: [..], seed: i64) -> Tensor<T, shape>",
    "a tensor of standard normal random numbers, deterministic for a seed", "random",
    generics=("T",))
_fn("load_npy", H, ("path",), "load_npy(path: str) -> Tensor<?, ?>",
    "load a tensor from a `.npy` file (dtype and shape checked at launch)", "load_npy",
    generics=("T",))

# ---------------------------------------------------------------- element-wise math
UNARY_MATH = {
    "exp": "e to the power of each element",
    "exp2": "2 to the power of each element",
    "log": "natural logarithm of each element",
    "log2": "base-2 logarithm of each element",
    "sqrt": "square root of each element",
    "rsqrt": "reciprocal square root of each element",
    "abs": "absolute value of each element",
    "sin": "sine of each element",
    "cos": "cosine of each element",
    "tanh": "hyperbolic tangent of each element",
    "sigmoid": "1 / (1 + exp(-x)) of each element",
    "floor": "largest integer not above each element",
    "ceil": "smallest integer not below each element",
    "erf": "the error function of each element",
    "asin": "the arcsine of each element, in [-pi/2, pi/2] (NaN outside [-1, 1])",
    "acos": "the arccosine of each element, in [0, pi] (NaN outside [-1, 1])",
    "atan": "the arctangent of each element, in [-pi/2, pi/2]",
}
for _name, _doc in UNARY_MATH.items():
    _fn(_name, B, ("x",), f"{_name}(x: Tile<T, S> | T) -> Tile<T, S> | T", _doc, "unary_math")
_fn("fma", B, ("a", "b", "c"), "fma(a, b, c) -> a * b + c",
    "fused multiply-add, element-wise with broadcasting", "elementwise3")
_fn("pow", B, ("x", "y"), "pow(x, y) -> x to the power y",
    "element-wise power of floats (IEEE `pow`), with broadcasting", "elementwise2_float")
_fn("atan2", B, ("y", "x"), "atan2(y, x) -> the angle of the point (x, y)",
    "element-wise IEEE `atan2` of floats, in [-pi, pi] (C's argument order: `y` first), with broadcasting",
    "elementwise2_float")
_fn("maximum", B, ("a", "b"), "maximum(a, b) -> max of a and b",
    "element-wise maximum with broadcasting", "elementwise2")
_fn("minimum", B, ("a", "b"), "minimum(a, b) -> min of a and b",
    "element-wise minimum with broadcasting", "elementwise2")
_fn("where", B, ("cond", "a", "b"), "where(cond: Tile<bool, S>, a, b) -> Tile<T, S>",
    "element-wise select: `a` where `cond` is true, else `b`", "where")

# ---------------------------------------------------------------- reductions and scans
REDUCTIONS = {
    "sum": "sum along an axis (the axis is removed)",
    "max": "maximum along an axis (the axis is removed)",
    "min": "minimum along an axis (the axis is removed)",
    "prod": "product along an axis (the axis is removed)",
    "argmax": "index (i32) of the maximum along an axis (the axis is removed)",
    "argmin": "index (i32) of the minimum along an axis (the axis is removed)",
}
for _name, _doc in REDUCTIONS.items():
    _fn(_name, B, ("x", "axis"), f"{_name}(x: Tile<T, S>, axis: const i32) -> Tile<T, S without axis>",
        _doc + "; on the host, over the whole tensor when no axis is given", "reduce", optional=1)
_fn("cumsum", B, ("x", "axis"), "cumsum(x: Tile<T, S> | Tensor<T, S>, axis: i32) -> same type",
    "inclusive prefix sum along an axis", "scan", optional=1)
_fn("cumprod", B, ("x", "axis"), "cumprod(x: Tile<T, S> | Tensor<T, S>, axis: i32) -> same type",
    "inclusive prefix product along an axis", "scan", optional=1)
_fn("cummax", B, ("x", "axis"), "cummax(x: Tile<T, S> | Tensor<T, S>, axis: i32) -> same type",
    "running maximum along an axis", "scan", optional=1)
_fn("cummin", B, ("x", "axis"), "cummin(x: Tile<T, S> | Tensor<T, S>, axis: i32) -> same type",
    "running minimum along an axis", "scan", optional=1)

# ---------------------------------------------------------------- matrix
_fn("mma", K, ("a", "b", "acc"),
    "mma(a: Tile<T, [M, K]>, b: Tile<T, [K, N]>, acc: Tile<A, [M, N]>) -> Tile<A, [M, N]>",
    "acc + a·b; `acc` is the inputs' accumulator type: f32 for f16/bf16/f32, f64 for f64, i32 for 8- and "
    "16-bit integers, the type itself for 32- and 64-bit ones", "mma")
_fn("dot", K, ("a", "b"), "dot(a: Tile<T, [M, K]>, b: Tile<T, [K, N]>) -> Tile<A, [M, N]>",
    "a·b, accumulated in (and returned as) the inputs' accumulator type: f32 for f16/bf16/f32, f64 for f64, "
    "i32 for 8- and 16-bit integers, the type itself for 32- and 64-bit ones", "dot")

# ---------------------------------------------------------------- debugging
_fn("print", B, ("*values",), "print(values...)",
    "print scalars, tiles (kernel) or tensors (host)", "print")
_fn("assert", B, ("cond", "message"), "assert(cond: bool, message: str)",
    "fail with `message` when `cond` is false (every element, for a tile)", "assert", optional=1)
_fn("assert_close", H, ("actual", "expected"),
    "assert_close(&actual: Tensor, &expected: Tensor, rtol = <by element type>, atol = <by element type>)",
    "fail, naming the worst elements, unless |a - b| <= atol + rtol * |b| everywhere "
    "(an infinity is close only to the same infinity, a NaN to nothing); the defaults: " + assert_close_defaults_text(),
    "assert_close", keywords=("rtol", "atol"))

# ---------------------------------------------------------------- unsafe escape hatches
_fn("atomic_add", K, ("tensor", "index", "value"), "atomic_add(&t, [i, ..], value)",
    "atomically add `value` (scalar or tile) at element index (only inside `unsafe`)", "atomic")
_fn("atomic_max", K, ("tensor", "index", "value"), "atomic_max(&t, [i, ..], value)",
    "atomically take the maximum at element index (only inside `unsafe`)", "atomic")
_fn("atomic_min", K, ("tensor", "index", "value"), "atomic_min(&t, [i, ..], value)",
    "atomically take the minimum at element index (only inside `unsafe`)", "atomic")
_fn("store_unchecked", K, ("tensor", "index", "tile"), "store_unchecked(&t, [i, ..], tile)",
    "store a tile at element offset `index` of any tensor (only inside `unsafe`)",
    "store_unchecked")

# ---------------------------------------------------------------- kernel methods
_m("load", K, ("param", "view"), ("index",), "x.load() | p.load([i, ..]) -> Tile<T, tile shape>",
   "the own tile of a `&mut` param, or tile `[i, ..]` of a partition view", "load", optional=1)
_m("load_padded", K, ("view",), ("index", "value"), "p.load_padded([i, ..], value) -> Tile",
   "tile `[i, ..]` of a view, reading `value` past the tensor's edge", "load_padded")
_m("store", K, ("param", "view"), ("tile", "index"), "z.store(tile) | q.store(tile, [i, ..])",
   "write the own tile of a `&mut` param, or a nested tile of it", "store", optional=1)
_m("load_like", K, ("param",), ("other",), "x.load_like(z) -> Tile<T, z's tile shape>",
   "the tile of `x` at the same position and shape as `z`'s own tile", "load_like")
_m("prefetch", K, ("view",), ("index",), "p.prefetch([i, ..])",
   "a hint: start reading tile `[i, ..]` of a view into the GPU's L2 cache for a later load "
   "(the next kernel's included); no value, nothing on the CPU", "prefetch")
_m("group", K, ("param",), (), "z.group() -> &Tensor<T, [..]>",
   "inside `if last_block(axis) { .. }`: the tiles of `&mut` parameter `z` of every block of "
   "this group, read only (the own tile's shape, `?` along `axis`)", "group")
_m("num_tiles", K, ("view",), ("axis",), "p.num_tiles(axis: i32) -> i32",
   "how many tiles a view has along an axis (ceil-divide)", "num_tiles")
_m("partition", B, ("tensor", "param"), ("tile_shape",),
   "t.partition([..]) -> Partition (host) | TileView (kernel)",
   "split a tensor into tiles of the given shape", "partition")

# tile methods mirroring the functions
for _name, _doc in REDUCTIONS.items():
    _m(_name, B, ("tile", "tensor"), ("axis",), f"t.{_name}(axis) -> Tile | scalar",
       _doc + "; on the host, over the whole tensor when no axis is given", "reduce", optional=1)
_m("cumsum", B, ("tile", "tensor"), ("axis",), "t.cumsum(axis) -> same type",
   "inclusive prefix sum along an axis", "scan", optional=1)
_m("cumprod", B, ("tile", "tensor"), ("axis",), "t.cumprod(axis) -> same type",
   "inclusive prefix product along an axis", "scan", optional=1)
_m("cummax", B, ("tile", "tensor"), ("axis",), "t.cummax(axis) -> same type",
   "running maximum along an axis", "scan", optional=1)
_m("cummin", B, ("tile", "tensor"), ("axis",), "t.cummin(axis) -> same type",
   "running minimum along an axis", "scan", optional=1)
for _name, _doc in UNARY_MATH.items():
    _m(_name, B, ("tile", "tensor", "scalar"), (), f"x.{_name}() -> same type", _doc, "unary_math")
_m("pow", B, ("tile", "tensor", "scalar"), ("y",), "x.pow(y) -> x to the power y",
   "element-wise power of floats (IEEE `pow`), with broadcasting", "elementwise2_float")
_m("atan2", B, ("tile", "tensor", "scalar"), ("x",), "y.atan2(x) -> the angle of the point (x, y)",
   "element-wise IEEE `atan2` of floats, in [-pi, pi] (Rust's `y.atan2(x)`), with broadcasting",
   "elementwise2_float")
_m("reshape", B, ("tile", "tensor"), ("shape",), "t.reshape([..]) -> same elements, new shape",
   "reshape (the element count must stay the same)", "reshape")
_m("broadcast", B, ("tile", "tensor"), ("shape",), "t.broadcast([..]) -> Tile<T, shape> | Tensor<T, shape>",
   "broadcast dims of size 1 (NumPy rules) to a larger shape", "broadcast")
_m("transpose", B, ("tile", "tensor"), (), "t.transpose() -> Tile<T, [N, M]> | Tensor<T, [N, M]>",
   "swap the two axes of a 2-D tile or tensor", "transpose")
_m("permute", B, ("tile", "tensor"), ("axes",), "t.permute([..]) -> Tile | Tensor",
   "reorder the axes of a tile or tensor", "permute")
_m("to_bits", K, ("tile", "scalar"), (), "x.to_bits() -> Tile<U, S> | U",
   "the bits of each float element as the unsigned integer of its width (`U`: u16 for f16 and bf16, u32 for "
   "f32, u64 for f64), Rust's `f32::to_bits`; `as` converts values instead", "to_bits")
_fn("from_bits", K, ("u",), "from_bits::<T>(u: Tile<U, S> | U) -> Tile<T, S> | T",
    "the float `T` whose bits are each element of `u` (the unsigned integer of `T`'s width: u16 for f16 and "
    "bf16, u32 for f32, u64 for f64), Rust's `f32::from_bits`", "from_bits", generics=("T",))
_m("item", B, ("tile", "tensor"), (), "t.item() -> T",
   "the one element of a tile or tensor of one element, as a scalar", "item")

# ---------------------------------------------------------------- host methods
_m("shape", B, ("tensor", "param"), (), "t.shape() -> Shape",
   "the tensor's shape; in a kernel a parameter's, `?` dims read at run time (`k.shape()[1]`); a `&mut` "
   "parameter's is its own tile's (W0010)",
   "shape")
_m("clone", H, ("tensor",), (), "t.clone() -> Tensor", "a copy of the tensor", "clone")
_m("save_npy", H, ("tensor",), ("path",), "t.save_npy(path: str)",
   "write the tensor to a `.npy` file", "save_npy")
_m("sync", H, ("op",), (), "op.sync()", "run the operation and wait for it", "sync")
_m("launch", H, ("op",), (), "op.launch() -> Handle",
   "start the operation; its borrows last until `.wait()`", "launch")
_m("wait", H, ("handle",), (), "h.wait()", "wait for a launched operation", "wait")
_m("replay", H, ("graph",), (), "g.replay()", "run a recorded graph again and wait", "replay")

del _name, _doc

OPERATIONS: dict[str, Signature] = {
    **FUNCTIONS,
    **{s.qualname: s for s in METHODS.values()},
}


def methods_for(kind: str | None, in_kernel: bool | None = None) -> list[Signature]:
    """The methods a receiver of `kind` (a key of `RECEIVERS`; None: not known)
    has, in kernel or host code (None: either), sorted by name. The language
    server's and the REPL's completion both list these."""
    out = []
    for name in sorted(METHODS):
        sig = METHODS[name]
        if kind is not None and sig.receivers and kind not in sig.receivers:
            continue
        if in_kernel is not None and not sig.context.allows(in_kernel):
            continue
        out.append(sig)
    return out


def lookup_function(name: str) -> Signature | None:
    return FUNCTIONS.get(name)


def lookup_method(name: str) -> Signature | None:
    return METHODS.get(name)
