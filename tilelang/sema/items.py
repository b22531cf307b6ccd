"""Items and generics: modules, `use`, signatures, type expressions, constants.

Registers the items of every module (`collect_module`), loads the modules a
`use` names and imports their items (E01xx on a missing module or item, a
duplicate name), resolves each function's generics, parameter and result
types into a `FnInfo` (`resolve_signatures`, with `#[hints]`), turns a
written type into a semantic `Type` (`resolve_type`: scalars, `Tensor` and
`Tile` with their shapes, references, tuples), and evaluates `const` items
on demand, once each, reporting a constant that depends on itself
(`eval_const`, reached through `CheckCx.eval_const`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeGuard, assert_never

from tilelang import requires
from tilelang.cluster import MAX_CLUSTER_BLOCKS
from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DTYPE_NAMES, DType, convert_scalar
from tilelang.intrinsics.constants import MATH_CONSTANTS, RUST_DERIVED_CONSTANTS
from tilelang.intrinsics.habits import FOREIGN_MODULES
from tilelang.intrinsics.math_habits import MATH_HABITS, RUST_SCALAR_METHODS, RUST_TYPE_FUNCTIONS, scalar_method_habit
from tilelang.intrinsics.signatures import FUNCTIONS
from tilelang.limits import MAX_RANK
from tilelang.sema.coerce import coerce, mismatch, settle
from tilelang.sema.consts import const_value, math_const_help, rank_limit, static_dim
from tilelang.sema.context import CheckCx, Fx, suggest
from tilelang.sema.kernel import check_kernel_param, check_tile_limits
from tilelang.sema.loader import ModuleLoader, is_file
from tilelang.sema.program import FnInfo, ModuleInfo, Symbol, SymbolKind
from tilelang.sema.typeops import elem_is_int, is_poison, is_pow2
from tilelang.sema.types import (
    ERROR,
    F32,
    I32,
    UNIT,
    Dim,
    ErrorT,
    FnT,
    RefT,
    ScalarT,
    TensorT,
    TileT,
    TupleT,
    Type,
    TypeParam,
    UnitT,
    UntypedFloat,
    UntypedInt,
)
from tilelang.source import DUMMY_SPAN, Span
from tilelang.syntax import ast
from tilelang.tuner.space import HINTS

KNOWN_HINTS = ("num_warps", "stages", "min_blocks", "max_blocks", "pdl_early", "prefetch_lines", "evict_first",
               "fast_math", "arrive_wait")
# hints `#[autotune]` may list candidates for: the tuner's (`tuner/space.py`)
TUNABLE_HINTS = HINTS


KNOWN_ATTRIBUTES = ("hints", "autotune", "allow", "cluster", "requires")


# Type names from other languages, for "did you mean" on E0104.
_TYPE_ALIASES = {
    "float": "f32", "int": "i32", "double": "f64", "half": "f16", "bfloat16": "bf16", "long": "i64",
    "usize": "u64", "isize": "i64", "float32": "f32", "float16": "f16", "float64": "f64", "int32": "i32",
    "int64": "i64", "uint8": "u8", "char": "u8", "Bool": "bool", "boolean": "bool", "Tensr": "Tensor",
}

# Types narrower than a byte, which Tile has not (round 11): what to write instead
_SUB_BYTE = ("Tile has no integer type narrower than 8 bits: keep two 4-bit values in a `u8` (`lo | (hi << 4)`) "
             "and take them apart with `b & 15` and `b >> 4` (a signed one from its nibble: "
             "`where(v >= 8, v - 16, v)`)")
_NARROW_TYPES = {
    **dict.fromkeys(("u4", "i4", "int4", "uint4", "u2", "i2", "int2", "uint2", "nibble"), _SUB_BYTE),
    **dict.fromkeys(("f8", "fp8", "float8", "f8e4m3", "f8e5m2", "e4m3", "e5m2", "float8_e4m3fn", "float8_e5m2",
                     "f4", "fp4"),
                    "Tile has no float type narrower than 16 bits yet: keep such values as `f16` or `bf16` (or "
                    "their bits in a `u8` tensor, decoded with integer operations)"),
}


def collect_module(tcx: CheckCx, mod: ModuleInfo) -> None:
    for item in mod.ast.items:
        match item:
            case ast.FnDecl():
                kind = SymbolKind.KERNEL if item.is_kernel else SymbolKind.FN
                if item.name.name in STRUCTURAL_BUILTINS:
                    _shadows_structural(tcx, item)
                _define_item(tcx, mod, item.name, kind, item)
            case ast.ConstDecl():
                _define_item(tcx, mod, item.name, SymbolKind.CONST, item)
            case ast.UseDecl():
                pass
            case _:
                assert_never(item)
    for item in mod.ast.items:
        if isinstance(item, ast.UseDecl):
            _process_use(tcx, mod, item)


# built-in functions that the checkers and the lowering recognise where they are written
# (`if last_block(1) { .. }`, `for s in queue(0)`, `block_id(0)` in an index): a function of
# the program with such a name would be called, while the checks took it for the built-in
# (`fn last_block(a: i32) -> bool { true }` let every block of a group write its tile)
STRUCTURAL_BUILTINS = frozenset(("block_id", "num_blocks", "last_block", "queue", "tiles", "cluster_gather"))


def _shadows_structural(tcx: CheckCx, item: ast.FnDecl) -> None:
    name = item.name.name
    tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"the name `{name}` is the built-in function `{name}`",
                     item.name.span, f"a function named `{name}` would shadow the built-in")
             .note(f"the checker reads `{name}(..)` as the built-in wherever it is written, so the program "
                   "would run other code than what was checked")
             .with_help(f"rename the function (`fn my_{name}(..)`) and its calls"))


def _define_item(tcx: CheckCx, mod: ModuleInfo, name: ast.Ident, kind: SymbolKind, decl: Any) -> None:
    prev = mod.own.get(name.name)
    if prev is not None:
        tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"the name `{name.name}` is defined multiple times",
                         name.span, f"`{name.name}` redefined here")
                 .secondary(prev.span, f"previous definition of `{name.name}` here")
                 .with_help("rename one of them"))
        return
    sym = Symbol(kind, name.name, name.span, decl, qualname=mod.qual(name.name))
    mod.own[name.name] = sym
    mod.scope[name.name] = sym
    tcx.program.items[sym.qualname or name.name] = sym
    tcx.program.symbols[decl] = sym


def load_module(tcx: CheckCx, name: str, path: Any, display_span: Span) -> ModuleInfo | None:
    key_guess = None
    # stdlib files keep their real path as their name: the LSP opens them from it
    loaded = tcx.loader.load(path, tcx.sources, tcx.sink)
    if loaded is None:
        return None
    key_guess = loaded.key
    if key_guess in tcx.module_by_key:
        return tcx.module_by_key[key_guess]
    mod = ModuleInfo(name, loaded.key, loaded.module)
    tcx.module_by_key[loaded.key] = mod
    unique = name
    i = 2
    while unique in tcx.program.modules:
        unique = f"{name}{i}"
        i += 1
    mod.name = unique
    tcx.program.modules[unique] = mod
    collect_module(tcx, mod)
    if tcx.program.modules.get(unique) is mod and mod is not tcx.root:
        # signatures of late-loaded modules are resolved by run() (modules list copy
        # is taken after all collection finished)
        pass
    return mod


def _process_use(tcx: CheckCx, mod: ModuleInfo, use: ast.UseDecl) -> None:
    if use.file is not None:
        fpath = ModuleLoader.user_module_path(mod.path, file=use.file.value)
        stem = use.file.value.rsplit("/", 1)[-1].removesuffix(".tile")
        target = load_module(tcx, stem, fpath, use.file.span)
        if target is None:
            mod.failed.add("*")  # a name not found may be the file's: not reported again
            reason = tcx.loader.failure(fpath)
            if reason is not None:
                tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"cannot read module file `{use.file.value}`",
                                 use.file.span, reason)
                         .note(f"the `use` names `{fpath}`")
                         .with_help(f"name a `.tile` file in it: `use \"{use.file.value.rstrip('/')}/name.tile\";`"
                                    if "directory" in reason else "check the file's permissions and encoding (UTF-8)"))
                return
            if not use.file.value.endswith(".tile") and is_file(Path(f"{fpath}.tile")):  # `use "util";`
                tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"cannot find module file `{use.file.value}`",
                                 use.file.span, "no such file")
                         .with_help(f"the file has its extension: `use \"{use.file.value}.tile\";`"))
                return
            tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"cannot find module file `{use.file.value}`",
                             use.file.span, "no such file")
                     .note(f"looked for `{fpath}`, relative to "
                           + ("the importing file" if mod.path and not mod.path.startswith("<") else
                              f"the current directory (`{mod.path or '<input>'}` is text, not a file)"))
                     .with_help("check the file name; `use \"path.tile\";` is relative to the importing file"
                                + ("" if mod.path and not mod.path.startswith("<") else
                                   ", and for a program given as text (`tilelang.compile`, stdin, the REPL) to the "
                                   "current directory")))
            return
        if target is mod:
            _self_import(tcx, use)
            return
        tid = target.ast.span.file
        if any(d.code.startswith("E00") and (d.primary_span or DUMMY_SPAN).file == tid  # (E00xx: syntax.py's)
               for d in tcx.sink.diagnostics):
            # the file has syntax errors, reported: an item they cut off is not reported again where used
            mod.failed.add("*")
        for name, sym in target.own.items():
            if name != "main":  # a module may be a program of its own; its entry point stays there
                _import(tcx, mod, name, sym, use.file.span, use.file.value)
        return
    segs = [s.name for s in use.path]
    if not segs:
        return
    # Which prefix of the path is the module? Try the full path first (for
    # `use std::nn;`, groups and globs), then all but the last segment.
    def locate(parts: list[str]) -> Any:
        if parts[0] == "std":
            return tcx.loader.std_module_path(parts) if len(parts) > 1 else None
        p = ModuleLoader.user_module_path(mod.path, segments=parts)
        return p if is_file(p) else None

    full = locate(segs)
    path: Any
    if use.names is not None or use.glob or (full is not None):
        mod_segs, item_ids = segs, (list(use.names) if use.names is not None else [])
        path = full
    else:
        mod_segs, item_ids = segs[:-1], [use.path[-1]]
        path = locate(mod_segs) if mod_segs else None
    mod_span = use.path[0].span.to(use.path[len(mod_segs) - 1].span) if mod_segs else use.span
    target = load_module(tcx, "::".join(mod_segs), path, mod_span) if path is not None else None
    if target is None:  # the names it meant to bind are not reported again where used (round 22: E0102 "a
        # similar name: `tiles`" at each call of `f` after a failed `use crate::lib::f;`)
        mod.failed.update(mod_segs[-1] if i.name == "self" else i.name for i in item_ids)
        if not item_ids and not use.glob and use.names is None:
            mod.failed.add(segs[-1])
        if use.glob:
            mod.failed.add("*")  # (any name: the glob's module is unknown)
    if path is None:
        shown = "::".join(mod_segs or segs)
        d = tcx.err(N.UNRESOLVED_MODULE, f"unresolved module `{shown}`", mod_span,
                    "no such module")
        tail = "::*" if use.glob else "::{" + ", ".join(i.name for i in use.names) + "}" if use.names is not None \
            else ""
        tcx.emit(unresolved_module_help(tcx, d, mod_segs or segs, segs, mod.path, use_tail=tail))
        return
    if target is None:
        reason = tcx.loader.failure(path)
        tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"cannot read module `{'::'.join(mod_segs)}`",
                         mod_span, reason or "")
                 .note(f"read `{path}`")
                 .with_help("check that the module file exists next to the importing file and is readable"))
        return
    if target is mod:
        _self_import(tcx, use)
        return
    if use.glob:
        for name, sym in target.own.items():
            if name != "main":
                _import(tcx, mod, name, sym, use.span)
        return
    if not item_ids and use.names is None:
        msym = Symbol(SymbolKind.MODULE, mod_segs[-1], use.path[-1].span, use,
                      qualname=target.name, value=target.name)
        _import(tcx, mod, mod_segs[-1], msym, use.path[-1].span)
        return
    for ident in item_ids:
        if ident.name == "self" and use.names is None:  # (it listed the module's items)
            shown = "::".join(mod_segs)
            tcx.emit(tcx.err(N.UNRESOLVED_IMPORT, "`self` imports a module only inside a `{..}` group",
                             ident.span, "outside braces")
                     .with_help(f"`use {shown};` imports the module `{mod_segs[-1]}` (as `use {shown}::{{self}};` "
                                "does, beside the items of a group)"))
        if ident.name == "self":
            # Rust's `use a::m::{self, f};`: the module itself, as `use a::m;` (round 22: "no `self` in `m`")
            msym = Symbol(SymbolKind.MODULE, mod_segs[-1], ident.span, use, qualname=target.name, value=target.name)
            _import(tcx, mod, mod_segs[-1], msym, ident.span)
            continue
        isym = target.own.get(ident.name)
        if isym is None:
            mod.failed.add(ident.name)  # (reported here, not again where it is used)
        if isym is None and tcx.has_syntax_errors(target):
            continue  # likely dropped by that module's syntax error (already reported)
        if isym is None:
            d = tcx.err(N.UNRESOLVED_IMPORT, f"no `{ident.name}` in `{target.name}`", ident.span,
                        f"not found in `{target.name}`")
            guess = suggest(ident.name, target.own)
            d = d.with_help(f"an item with a similar name exists: `{guess}`: `use {target.name}::{guess};`, "
                            f"and call it `{guess}`") if guess else \
                d.with_help(items_help(target.name, target.own))
            tcx.emit(d)
            continue
        _import(tcx, mod, ident.name, isym, ident.span)
        tcx.program.symbols[ident] = isym


def unresolved_module_help(tcx: CheckCx, d: Diagnostic, mod_segs: list[str],
                           path: list[str], importer: str = "", use_tail: str | None = None) -> Diagnostic:
    """The help of E0109 for a module `mod_segs` that does not exist (in a
    `use` or a path `path`): what exists instead, never "import it first"
    (a `use` of a missing module fails the same way). `use_tail`: in a `use`,
    what it writes after `path` (`::*`, `::{a, b}`, or nothing)."""
    floats = [i for i, s in enumerate(mod_segs) if (dt := DType.parse(s)) is not None and dt.is_float]
    if floats and mod_segs[floats[0] + 1:floats[0] + 2] == ["consts"]:
        # Rust's `std::f32::consts::PI`
        item = path[len(mod_segs)] if len(path) > len(mod_segs) else None
        if item in MATH_CONSTANTS:
            return d.with_help(f"Tile's `{item}` is `std::math::{item}` (untyped: it takes the "
                               f"float type it meets), or `use std::math::{item};`")
        if item in RUST_DERIVED_CONSTANTS:
            expr, value = RUST_DERIVED_CONSTANTS[item]
            spelt = f"`{expr}` of `std::math`'s constants (`use std::math::*;`), or the literal `{value!r}`" \
                if expr else f"the literal `{value!r}`"
            return d.with_help(f"`std::math` has no `{item}`: write {spelt}, as a `const {item} = ..;` of your own")
        return d.with_help("Tile's mathematical constants are in `std::math`: "
                           + ", ".join(f"`{c}`" for c in MATH_CONSTANTS))
    if len(mod_segs) == 1 and (dt := DType.parse(mod_segs[0])) is not None and len(path) == 2 \
            and path[1] in ("to_bits", "from_bits") and dt.is_float:
        # Rust's `f32::to_bits(x)` / `f32::from_bits(u)` (round 23: "bring a file's items into scope", and
        # `from_bits(..)`, which then wants its type)
        return d.note(f"`{mod_segs[0]}` is a type: `{mod_segs[0]}::NAME` names its constants (`{mod_segs[0]}::MAX`)") \
            .with_help(f"`{mod_segs[0]}::to_bits(x)` is the method `x.to_bits()`" if path[1] == "to_bits" else
                       f"`{mod_segs[0]}::from_bits(u)` is `from_bits::<{mod_segs[0]}>(u)`")
    fn = RUST_TYPE_FUNCTIONS.get(path[-1], path[-1])
    if len(mod_segs) == 1 and DType.parse(mod_segs[0]) is not None and len(path) == 2 and fn in FUNCTIONS:
        # Rust's `f32::max(a, b)`, `f32::sqrt(x)` (round 15: "bring a file's items into scope")
        return d.note(f"`{mod_segs[0]}` is a type: `{mod_segs[0]}::NAME` names its constants (`{mod_segs[0]}::MAX`)") \
            .with_help(f"Tile's built-ins take no type prefix: `{mod_segs[0]}::{path[1]}(..)` is `{fn}(..)`"
                       + (f" (the {'larger' if fn == 'maximum' else 'smaller'} of two values)"
                          if fn in ("maximum", "minimum") else ""))
    if len(mod_segs) == 1 and DType.parse(mod_segs[0]) is not None and len(path) == 2 \
            and path[1] in RUST_SCALAR_METHODS:
        # Rust's `u32::wrapping_mul(a, b)` (round 22: "bring a file's items into scope with `use`")
        names = RUST_SCALAR_METHODS[path[1]][1]
        habit = scalar_method_habit(path[1], list("bcd"[:len(names)])) or ""
        return d.note(f"`{mod_segs[0]}` is a type: `{mod_segs[0]}::NAME` names its constants (`{mod_segs[0]}::MAX`)") \
            .with_help(f"Tile has no `{mod_segs[0]}::{path[1]}`; for `{mod_segs[0]}::{path[1]}"
                       f"({', '.join(['a', *'bcd'[:len(names)]])})`: " + habit.format(x="a"))
    if len(mod_segs) == 1 and (dt := DType.parse(mod_segs[0])) is not None and len(path) == 2 \
            and path[1] in ("from", "try_from", "into", "try_into"):
        # Rust's `i64::from(n)`, `u32::try_from(x)` (round 23: "bring a file's items into scope with `use`")
        return d.note(f"`{mod_segs[0]}` is a type: `{mod_segs[0]}::NAME` names its constants (`{mod_segs[0]}::MAX`)") \
            .with_help(f"Tile has no `From`/`TryFrom`: `x as {dt}` converts (an integer narrowed wraps, a float "
                       "to an integer saturates)")
    if len(mod_segs) == 1 and len(path) == 2 and mod_segs[0] in ("Tensor", "Tile", *FOREIGN_MODULES):
        return d.with_help(_constructor_help(mod_segs[0], path[1]))
    if mod_segs[:2] == ["std", "mem"] and path[2:3] == ["transmute"]:
        # Rust's `std::mem::transmute::<f32, u32>(x)` (round 23: the help below, of swapping by moves)
        return d.with_help("Tile has no `std::mem`: " + MATH_HABITS["transmute"].format(x="x"))
    if mod_segs[:2] == ["std", "mem"]:
        # Rust's `std::mem::swap(&mut a, &mut b)` (round 22: "a similar name exists: `std::llm`")
        return d.with_help("Tile has no `std::mem`: tensors move, so two swap by moves, `let t = a; a = b; b = t;` "
                           "(`mem::replace(&mut a, b)` is `let old = a; a = b;`)")
    if mod_segs[:2] == ["std", "cmp"]:
        # Rust's `std::cmp::max(a, b)` (round 23: "a similar name exists: `std::llm`")
        fn = {"max": "maximum", "min": "minimum"}.get(path[2] if len(path) > 2 else "", "")
        return d.with_help("Tile has no `std::cmp`: " + (
            f"`std::cmp::{path[2]}(a, b)` is the built-in `{fn}(a, b)`, of numbers, tiles and tensors (element-wise)"
            if fn else "the built-ins `maximum(a, b)` and `minimum(a, b)` take numbers, tiles and tensors "
                       "(element-wise); compare with `<`, `==`, .."))
    if mod_segs[0] == "std":
        shown = "::".join(mod_segs)
        guess = suggest(shown, tcx.loader.std_modules())
        if guess:
            return d.with_help(f"a module with a similar name exists: `{guess}`")
        return d.with_help("the standard library's modules are " + ", ".join(
            f"`{m}`" for m in tcx.loader.std_modules()))
    if mod_segs[0] in ("crate", "self", "super") and len(path) > 1:
        return d.with_help(_rust_prefix_help(mod_segs[0], path[1:], importer, use_tail))
    file = "/".join(mod_segs) + ".tile"
    return (d.note(f"a module is a `.tile` file: there is no `{file}` next to this file")
            .with_help("bring a file's items into scope with `use \"path/to/file.tile\";`"))


def _rust_prefix_help(prefix: str, rest: list[str], importer: str, use_tail: str | None = None) -> str:
    """Rust's `use crate::lib::f;` (`self::`, `super::`: a sibling module in Rust's layout of files): Tile's
    module paths are files relative to the importing file, with no prefix (round 22: the help was "bring a
    file's items into scope with `use "path/to/file.tile";`"). In a `use`, the path with what follows it
    (`use_tail`: `::*`, `::{a, b}`) and the whole `use` to write (hfix4: `use crate::lib::tiles::*;` was told
    "`crate::lib::tiles` is `lib::tiles`", which dropped the glob)."""
    head = f"Tile's module paths name `.tile` files relative to the importing file, with no `{prefix}::` prefix"
    shown = "::".join(rest) + (use_tail or "")
    write = f": `use {shown};`" if use_tail is not None else ""
    for n in range(len(rest), 0, -1):
        if is_file(ModuleLoader.user_module_path(importer, segments=rest[:n])):
            return f"{head}: `{prefix}::{shown}` is `{shown}`{write} (`{'/'.join(rest[:n])}.tile` beside this file)"
    if prefix == "super":  # (round 24: a file one directory up was told to be `use hashing::f;`, "beside this file")
        for n in range(len(rest), 0, -1):
            up = "../" + "/".join(rest[:n]) + ".tile"
            if is_file(Path(importer).parent / up):
                return (f"{head}, and a module path names no file above this file's directory: "
                        f"`use \"{up}\";` imports every item of `{up}`")
    file = "/".join(rest[:-1] or rest) + ".tile"
    return f"{head}: `{shown}` would name `{file}` beside this file{write}, but there is no `{file}` there"


def _constructor_help(prefix: str, name: str) -> str:
    """`Tensor::zeros([n])`, `Tile::ones([B])`, `np::arange(n)`, `Tensor::new(..)` (round 21: "bring a file's
    items into scope with `use`"): Tile's built-ins take no prefix, and the element type as a turbofish."""
    sig = FUNCTIONS.get(name)
    if sig is not None:
        spelt = f"`{name}::<f32>(..)`" if sig.generics else f"`{name}(..)`"
        return (f"Tile's built-ins take no `{prefix}::` prefix" + (" and their element type as a turbofish" if
                sig.generics else "") + f": `{prefix}::{name}(..)` is {spelt}")
    return (f"`{prefix}` is not a module: Tile makes tensors (and, in kernels, tiles) with the built-ins "
            "`zeros::<f32>([..])`, `ones`, `full::<f32>([..], v)`, `arange::<i32>(n)`, `rand`, `randn` and "
            "`load_npy(\"x.npy\")`")


def _self_import(tcx: CheckCx, use: ast.UseDecl) -> None:
    tcx.emit(tcx.err(N.SELF_IMPORT, "this file imports itself", use.span,
                     "this `use` names the file it is in")
             .with_help("remove the `use`: a file's own items are always in scope"))


def _import(tcx: CheckCx, mod: ModuleInfo, name: str, sym: Symbol, span: Span, whole: str | None = None) -> None:
    prev = mod.scope.get(name)
    if prev is not None and prev is not sym:
        help_ = "rename the local item or import only what you need"
        if whole is not None:  # (round 24: a file above this one's directory has no module path to pick items by)
            stem = whole.removesuffix(".tile")
            path = stem.split("/")
            picks = ("" if ".." in path or whole.startswith("/") or not whole.endswith(".tile") else
                     f", or import only what you need by its module path: `use {'::'.join(path)}::{{..}};`")
            help_ = f"rename one of the two: `use \"{whole}\";` imports every item of that file{picks}"
        tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"the name `{name}` is defined multiple times",
                         span, f"`{name}` imported here")
                 .secondary(prev.span, f"previous definition of `{name}` here")
                 .with_help(help_))
        return
    mod.scope[name] = sym


def _generic_syms(tcx: CheckCx, decl: ast.FnDecl, mod: ModuleInfo) -> dict[str, Symbol]:
    out: dict[str, Symbol] = {}
    for g in decl.generics:
        if g.name.name in out:
            tcx.emit(tcx.err(N.DUPLICATE_DEFINITION,
                             f"the generic parameter `{g.name.name}` is declared twice",
                             g.name.span, "declared again here")
                     .secondary(out[g.name.name].span, "first declared here")
                     .with_help("give each generic parameter its own name"))
            continue
        if g.is_const:
            ty = resolve_type(tcx, g.ty, {}, mod, in_kernel=False) if g.ty else I32
            if not (isinstance(ty, ScalarT) and elem_is_int(ty.dtype)) and not is_poison(ty):
                tcx.emit(tcx.err(T.MISMATCHED_TYPES,
                                 f"const generic `{g.name.name}` must have an integer type",
                                 g.ty.span if g.ty else g.span, f"found `{ty}`")
                         .with_help(f"declare it as `const {g.name.name}: i32`"))
            sym = Symbol(SymbolKind.GENERIC, g.name.name, g.name.span, g, ty=I32,
                         dim=Dim.var(g.name.name))
        else:
            sym = Symbol(SymbolKind.TYPE_PARAM, g.name.name, g.name.span, g,
                         value=TypeParam(g.name.name))
        out[g.name.name] = sym
        tcx.program.symbols[g] = sym
    return out


def register_consts(tcx: CheckCx, mod: ModuleInfo) -> None:
    """Make `mod`'s `const` items known to `eval_const`, before any signature is resolved."""
    for item in mod.ast.items:
        if isinstance(item, ast.ConstDecl):
            sym = mod.own.get(item.name.name)
            if sym is not None and sym.decl is item:
                tcx.pending_consts[sym.qualname or item.name.name] = (item, mod)


def resolve_signatures(tcx: CheckCx, mod: ModuleInfo) -> None:
    register_consts(tcx, mod)  # (a module loaded by a path in an expression comes here alone)
    for item in mod.ast.items:
        if not isinstance(item, ast.FnDecl):
            continue
        sym = mod.own.get(item.name.name)
        if sym is None or sym.decl is not item:
            continue  # a duplicate, already reported
        generics = _generic_syms(tcx, item, mod)
        ptypes: list[Type] = []
        seen: dict[str, ast.Param] = {}
        for p in item.params:
            if p.name.name in seen:
                tcx.emit(tcx.err(N.DUPLICATE_DEFINITION,
                                 f"identifier `{p.name.name}` is bound more than once in this "
                                 "parameter list", p.name.span, "used as parameter more than once")
                         .secondary(seen[p.name.name].name.span, "first bound here")
                         .with_help("give each parameter its own name"))
            seen[p.name.name] = p
            ty = resolve_type(tcx, p.ty, generics, mod, in_kernel=item.is_kernel)
            if item.is_kernel:
                ty = check_kernel_param(tcx, p, ty, item)
            ptypes.append(ty)
        ret = resolve_type(tcx, item.ret, generics, mod, in_kernel=item.is_kernel) if item.ret else UNIT
        if item.is_kernel and item.ret is not None and not isinstance(ret, UnitT):
            tcx.emit(tcx.err(T.KERNEL_RETURNS, f"kernel `{item.name.name}` cannot return a value",
                             item.ret.span, "kernels return nothing")
                     .note("a kernel writes its results through its `&mut` parameters")
                     .with_help("remove the return type and `store` the result instead"))
            ret = ERROR  # the body is not checked against it either
        info = FnInfo(
            decl=item, qualname=sym.qualname or item.name.name, module=mod.name,
            is_kernel=item.is_kernel,
            const_generics=tuple(n for n, s in generics.items() if s.kind is SymbolKind.GENERIC),
            type_params=tuple(n for n, s in generics.items() if s.kind is SymbolKind.TYPE_PARAM),
            param_names=tuple(p.name.name for p in item.params),
            param_types=tuple(ptypes), ret=ret, symbol=sym,
            hints=_hints(tcx, item, mod),
        )
        sym.ty = FnT(info.qualname, info.param_types, ret, item.is_kernel)
        tcx.fn_by_decl[item] = info
        (tcx.program.kernels if item.is_kernel else tcx.program.functions)[info.qualname] = info


# the value a hint's help suggests (`evict_first`, `pdl_early`, `prefetch_lines`, `arrive_wait` are switches)
_HINT_EXAMPLE: dict[str, Any] = {"num_warps": 4, "stages": 3, "min_blocks": 2, "max_blocks": 2, "fast_math": "true"}


def items_help(module: str, own: Any) -> str:
    names = sorted(n for n in own if not n.startswith("_"))
    if not names:
        return f"`{module}` defines no items"
    return f"`{module}` defines " + ", ".join(f"`{n}`" for n in names[:12]) + (", .." if len(names) > 12 else "")


def _hints(tcx: CheckCx, decl: ast.FnDecl, mod: ModuleInfo | None = None) -> dict[str, Any]:
    hints: dict[str, Any] = {}
    given: dict[str, ast.Arg] = {}  # each hint once, across every `#[hints(..)]` of the kernel
    for attr in decl.attrs:
        if attr.name.name not in KNOWN_ATTRIBUTES:
            d = tcx.err(N.UNKNOWN_ATTRIBUTE, f"unknown attribute `{attr.name.name}`",
                        attr.name.span, "not a tilec attribute")
            guess = suggest(attr.name.name, KNOWN_ATTRIBUTES)
            tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                     d.note("tilec knows `#[hints(num_warps = .., stages = ..)]`, "
                            "`#[autotune(..)]`, `#[cluster(..)]`, `#[requires(cond, \"message\")]` and "
                            "`#[allow(lint, ..)]`")
                     .with_help("remove it, or write one of those"))
            continue
        if attr.name.name == "allow":
            _check_allow(tcx, attr)
            continue
        if not decl.is_kernel:
            tcx.emit(tcx.err(N.UNKNOWN_ATTRIBUTE, f"`{attr.name.name}` only applies to a `kernel fn`",
                             attr.name.span, "on a non-kernel function")
                     .with_help("put the attribute on a `kernel fn`, or remove it"))
            continue
        if attr.name.name == "autotune":
            _check_autotune(tcx, decl, attr)
            continue
        if attr.name.name == requires.NAME:
            def module_const(name: str) -> Any:  # a module constant the kernel sees, or None
                sym = mod.scope.get(name) if mod is not None else None
                if sym is None or sym.kind is not SymbolKind.CONST or not isinstance(sym.decl, ast.ConstDecl):
                    return None
                return tcx.eval_const(sym.qualname or name)

            for r in requires.check(decl, attr, tcx.snippet, module_const):
                tcx.emit(tcx.err(T.INVALID_OPERAND if r.kind == "form" else T.MISMATCHED_TYPES, r.message,
                                 r.span, r.label).with_help(r.help))
            continue
        if attr.name.name == "cluster":
            shape = _cluster(tcx, decl, attr, "cluster" in hints)
            if shape is not None:
                hints["cluster"] = shape
            continue
        for arg in attr.args:
            key = arg.name.name if arg.name else None
            if key is None and isinstance(arg.value, ast.Name) and arg.value.ident.name in KNOWN_HINTS:
                bare = arg.value.ident.name
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"hint `{bare}` needs a value", arg.span, "no `= value`")
                         .with_help(f"write `{bare} = {_HINT_EXAMPLE.get(bare, 1)}`"))
                continue
            if key in given:
                tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"hint `{key}` is given twice", arg.span,
                                 "given again here")
                         .secondary(given[key].span, "first given here")
                         .note("a later value would silently replace the earlier one")
                         .with_help("keep one of them"))
                continue
            if key in KNOWN_HINTS:
                given[key] = arg
            if key not in KNOWN_HINTS:
                span = arg.name.span if arg.name else arg.span
                d = tcx.err(N.UNKNOWN_ATTRIBUTE, f"unknown hint `{key or tcx.snippet(arg)}`", span,
                            "not a known hint")
                guess = suggest(key or "", KNOWN_HINTS)
                tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                         d.note("known hints: " + ", ".join(f"`{h}`" for h in KNOWN_HINTS))
                         .with_help("remove it, or use one of the known hints"))
                continue
            if key == "fast_math":  # `true` or `false`: the GPU's math by the approximate forms (fastmath.FAST_MATH)
                if isinstance(arg.value, ast.BoolLit):
                    hints[key] = bool(arg.value.value)
                else:
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "hint `fast_math` is `true` or `false`", arg.value.span,
                                     "not `true` or `false`")
                             .with_help("write `fast_math = true`"))
                continue
            if key in ("min_blocks", "max_blocks", "pdl_early", "prefetch_lines", "evict_first", "arrive_wait",
                       "stages") and isinstance(arg.value, ast.Name):
                # a const generic: the launch picks the value (0: no bound, not early, no hint)
                if arg.value.ident.name not in {g.name.name for g in decl.generics if g.is_const}:
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES,
                                     f"hint `{key}` needs a positive integer literal or a const "
                                     f"generic of kernel `{decl.name.name}`",
                                     arg.value.span, "not a const generic of this kernel")
                             .with_help(f"write a positive literal, or add `const {tcx.snippet(arg.value)}: i32` to the kernel's generics"))
                    continue
                hints[key] = arg.value.ident.name
                continue
            value = arg.value.value if isinstance(arg.value, ast.IntLit) else None
            if key == "pdl_early" and value is not None and value > 3:
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "hint `pdl_early` is 1, 2 or 3", arg.value.span,
                                 "not 1, 2 or 3")
                         .note("1 lets the next kernel be scheduled at this one's entry, 2 at the start of its "
                               "main loop's last iteration, 3 at its exit")
                         .with_help("write `pdl_early = 1` (or `pdl_early = 2`, `pdl_early = 3`)"))
                continue
            if value is None or value <= 0 or (key == "num_warps" and not (is_pow2(value) and value <= 32)):
                tcx.emit(tcx.err(T.MISMATCHED_TYPES,
                                 f"hint `{key}` needs a positive integer literal"
                                 + (" that is a power of two up to 32" if key == "num_warps" else ""),
                                 arg.value.span, "invalid value")
                         .with_help(f"write e.g. `{key} = {_HINT_EXAMPLE.get(key or '', 1)}`"))
                continue
            hints[key] = value
    for at in decl.attrs:
        if at.name.name != "autotune":
            continue
        for a in at.args:
            if a.name is not None and a.name.name in given:
                name = a.name.name
                tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"hint `{name}` is both fixed and tuned", a.span,
                                 "tuned here")
                         .secondary(given[name].span, "fixed here")
                         .note("the tuner's pick would silently replace the fixed value (or the other way round)")
                         .with_help(f"keep `{name}` in one of `#[hints(..)]` and `#[autotune(..)]`"))
                hints.pop(name, None)
    lo, hi = hints.get("min_blocks"), hints.get("max_blocks")
    if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
        arg = next(a for at in decl.attrs for a in at.args if a.name and a.name.name == "max_blocks")
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"hint `max_blocks = {hi}` is below `min_blocks = {lo}`",
                         arg.value.span, "fewer blocks than `min_blocks` asks an SM to hold")
                 .with_help(f"raise `max_blocks` to at least {lo}, or lower `min_blocks`"))
        del hints["max_blocks"]
    return hints


def _cluster(tcx: CheckCx, decl: ast.FnDecl, attr: ast.Attribute, again: bool) -> tuple[int | str, ...] | None:
    """`#[cluster(x)]`, `#[cluster(x, y)]` or `#[cluster(x, y, z)]`: the blocks
    of one thread-block cluster along grid axes 0, 1, 2 (integer literals or
    const generics of the kernel, at most `MAX_CLUSTER_BLOCKS` blocks in all:
    a generic's value is checked by each instance's lowering); padded with 1s."""
    if again:
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "a kernel has one `#[cluster(..)]`", attr.span, "a second cluster shape")
                 .with_help("remove one of them"))
        return None
    help_ = ("write the blocks of a cluster along grid axes 0, 1, 2 as integer literals or const generics, "
             "e.g. `#[cluster(1, 8)]`")
    if not 1 <= len(attr.args) <= 3 or any(a.name is not None for a in attr.args):
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`#[cluster(..)]` takes one to three integer literals",
                         attr.span, "not a cluster shape").with_help(help_))
        return None
    dims: list[int | str] = []
    consts = {g.name.name for g in decl.generics if g.is_const}
    for a in attr.args:
        if isinstance(a.value, ast.Name) and a.value.ident.name in consts:
            dims.append(a.value.ident.name)
            continue
        if not isinstance(a.value, ast.IntLit) or a.value.value <= 0:
            tcx.emit(tcx.err(T.MISMATCHED_TYPES, "a cluster dimension is a positive integer literal",
                             a.value.span, "not a positive literal").with_help(help_))
            return None
        dims.append(a.value.value)
    total = 1
    for d in dims:
        total *= d if isinstance(d, int) else 1
    if total > MAX_CLUSTER_BLOCKS:
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"a cluster of {total} blocks is more than the "
                         f"{MAX_CLUSTER_BLOCKS} every GPU can place", attr.span, f"{total} blocks")
                 .note("the blocks of a cluster run at once on one GPU processing cluster; CUDA guarantees "
                       f"room for {MAX_CLUSTER_BLOCKS}")
                 .with_help(f"use at most {MAX_CLUSTER_BLOCKS} blocks a cluster, and give each more work"))
        return None
    return tuple([*dims, 1, 1, 1][:3])


def _check_autotune(tcx: CheckCx, decl: ast.FnDecl, attr: ast.Attribute) -> None:
    """`#[autotune(BM = [64, 128], num_warps = [4, 8], key = [a, b])]`: each
    name is a const generic of the kernel or a hint, with a non-empty list of
    candidate values; `key` lists the parameters whose shapes, element types
    (or values) the tuner keys its records on. `tilelang/tuner/space.py`
    reads the attribute the same way."""
    generics = {g.name.name for g in decl.generics if g.is_const}
    params = {p.name.name for p in decl.params}
    seen: set[str] = set()
    for arg in attr.args:
        if arg.name is None:
            tcx.emit(tcx.err(N.UNKNOWN_ATTRIBUTE, f"`autotune` takes `name = [..]` pairs, not "
                             f"`{tcx.snippet(arg)}`", arg.span, "no name")
                     .with_help("write the candidates of a const generic or hint, "
                                "like `BM = [64, 128]`"))
            continue
        key = arg.name.name
        if key in seen:
            tcx.emit(tcx.err(N.UNKNOWN_ATTRIBUTE, f"`{key}` is given twice in `autotune`",
                             arg.name.span, "again here")
                     .with_help("list every candidate of a key once, in one list"))
            continue
        seen.add(key)
        elems = arg.value.elems if isinstance(arg.value, ast.ArrayExpr) else None
        if key == "key":
            names = [e.ident.name for e in elems or () if isinstance(e, ast.Name)]
            if elems is None or len(names) != len(elems):
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "the `key` of `autotune` is a list of the "
                                 "kernel's parameter names", arg.value.span, "not a list of names")
                         .with_help(f"for example `key = [{', '.join(sorted(params)[:2])}]`"))
                continue
            for e, n in zip(elems, names, strict=True):
                if n not in params:
                    d = tcx.err(N.UNKNOWN_ATTRIBUTE, f"`{n}` is not a parameter of kernel "
                                f"`{decl.name.name}`", e.span, "not a parameter")
                    guess = suggest(n, sorted(params))
                    tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                             d.with_help("the key names the kernel's parameters: "
                                         + ", ".join(f"`{p}`" for p in sorted(params))))
            continue
        tunable = "const generics and the hints " + ", ".join(f"`{h}`" for h in TUNABLE_HINTS)
        if key not in generics and key in KNOWN_HINTS and key not in TUNABLE_HINTS:
            # (a hint, but not one the tuner picks: "neither a const generic nor a hint" was untrue; hrev18)
            tcx.emit(tcx.err(N.UNKNOWN_ATTRIBUTE, f"hint `{key}` cannot be tuned", arg.name.span,
                             "not a hint `autotune` picks")
                     .note(f"`autotune` tunes {tunable}")
                     .with_help(f"give it one value in `#[hints({key} = ..)]` instead, or remove it"))
            continue
        if key not in generics and key not in TUNABLE_HINTS:
            d = tcx.err(N.UNKNOWN_ATTRIBUTE, f"`{key}` is neither a const generic of kernel "
                        f"`{decl.name.name}` nor a hint", arg.name.span, "cannot be tuned")
            guess = suggest(key, sorted(generics | set(TUNABLE_HINTS)))
            tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                     d.note(f"`autotune` tunes {tunable}")
                     .with_help("remove it, or list the candidates of one of those"))
            continue
        values = [e.value for e in elems or () if isinstance(e, ast.IntLit)]
        bad = (elems is None or not elems or len(values) != len(elems) or any(v <= 0 for v in values)
               or (key == "num_warps" and not all(is_pow2(v) and v <= 32 for v in values)))
        if bad:
            tcx.emit(tcx.err(T.MISMATCHED_TYPES,
                             f"the candidates of `{key}` are a non-empty list of positive integer "
                             "literals" + (" that are powers of two up to 32" if key == "num_warps" else ""),
                             arg.value.span, "invalid candidates")
                     .with_help(f"for example `{key} = [{'4, 8' if key == 'num_warps' else '64, 128'}]`"))


def _check_allow(tcx: CheckCx, attr: ast.Attribute) -> None:
    """`#[allow(unused_variables, ..)]`: every argument a lint name."""
    from tilelang.sema.lints import ALL_LINTS, LINTS

    known = [*LINTS, ALL_LINTS]
    for arg in attr.args:
        name = arg.value.ident.name if arg.name is None and isinstance(arg.value, ast.Name) else None
        if name in known:
            continue
        d = tcx.err(N.UNKNOWN_ATTRIBUTE, f"unknown lint `{name or tcx.snippet(arg)}`", arg.span,
                    "not a lint name")
        guess = suggest(name or "", known)
        tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                 d.with_help("allow one of the lints: " + ", ".join(f"`{k}`" for k in known)))


def eval_const(tcx: CheckCx, qual: str) -> Any:
    if qual in tcx.program.consts:
        return tcx.program.consts[qual]
    if qual not in tcx.pending_consts:
        return None
    state = tcx.const_state.get(qual)
    if state == "cycle":  # reported once: its value is asked again while the cycle unwinds
        return None
    if state == "busy":
        tcx.const_state[qual] = "cycle"
        decl, _ = tcx.pending_consts[qual]
        tcx.emit(tcx.err(T.NOT_CONSTANT, f"constant `{decl.name.name}` depends on itself",
                         decl.name.span, "cycle in constant definitions")
                 .with_help("define the constant from literals or from constants that do not refer back to it"))
        return None
    tcx.const_state[qual] = "busy"
    decl, mod = tcx.pending_consts[qual]
    fx = Fx(mod, None, False, UNIT, {})
    want = resolve_type(tcx, decl.ty, {}, mod, in_kernel=False) if decl.ty else None
    errors_before = tcx.sink.error_count
    ty = tcx.check_expr(decl.value, fx, want)
    sym = mod.own[decl.name.name]
    if want is not None and not is_poison(ty):
        if not coerce(tcx, ty, want, decl.value):
            mismatch(tcx, want, ty, decl.value, decl.ty)
        ty = want
    untyped_float = isinstance(ty, UntypedFloat)
    if isinstance(ty, (UntypedInt,)):
        ty = I32
    elif untyped_float:
        ty = F32
    # an untyped float constant (`const PI = 3.141592653589793;`) takes each use's type, as a float
    # literal does: its value is kept in f64 and each use rounds it to its own type (`let a: f64 = PI;`
    # is f64's pi; it was f32's, 3.1415927410125732, on the host and, since constants round, in kernels)
    settle(tcx, decl.value, ScalarT(DType.F64) if untyped_float else ty)
    value = const_value(tcx, decl.value, fx)  # once settled: a shift wraps in its own type
    if not untyped_float and isinstance(value, float) and isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) and ty.dtype.is_float:
        value = convert_scalar(value, ty.dtype)  # `const C: f32 = 0.1;` holds f32's 0.1, as every use reads it
    if value is None and not is_poison(ty) and tcx.sink.error_count == errors_before:
        math = (math_const_help(tcx, decl.value, fx, DType.F64 if untyped_float else ty.dtype)
                if isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) and ty.dtype.is_float else None)
        tcx.emit(tcx.err(T.NOT_CONSTANT, f"the value of constant `{decl.name.name}` is not a "
                         "compile-time constant", decl.value.span, "not constant")
                 .note("constants are evaluated at compile time from literals and other constants")
                 .with_help(math or "use literals, other constants and operators on them"))
    sym.ty = ty
    sym.value = value
    if isinstance(value, int) and not isinstance(value, bool):
        sym.dim = Dim.const(value)
    tcx.program.consts[qual] = value
    tcx.const_state[qual] = "done"
    return value


def resolve_type(tcx: CheckCx, te: ast.TypeExpr | None, generics: dict[str, Symbol], mod: ModuleInfo,
                 in_kernel: bool) -> Type:
    match te:
        case None:
            return UNIT
        case ast.RefType(mutable=m, inner=inner):
            return RefT(m, resolve_type(tcx, inner, generics, mod, in_kernel))
        case ast.TupleType(elems=elems):
            if not elems:
                return UNIT
            return TupleT(tuple(resolve_type(tcx, x, generics, mod, in_kernel) for x in elems))
        case ast.ShapeType():
            return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "expected a type, found a shape", te.span,
                                    "a shape is only allowed inside `Tensor<..>` or `Tile<..>`")
                            .with_help("write the shape inside a type: `Tensor<f32, [..]>`"))
        case ast.NamedType(name=ident, args=args):
            name = ident.name
            if name in DTYPE_NAMES:
                if args:
                    return tcx.emit(tcx.err(N.WRONG_GENERIC_COUNT,
                                            f"`{name}` takes no generic arguments", te.span)
                                    .with_help(f"write `{name}` without `<..>`"))
                return ScalarT(DType(name))
            if name in generics and generics[name].kind is SymbolKind.TYPE_PARAM:
                tcx.program.symbols[ident] = generics[name]
                return ScalarT(TypeParam(name))
            if name in ("Tensor", "Tile"):
                return _resolve_array_type(tcx, te, generics, mod, in_kernel)
            cands = [*DTYPE_NAMES, "Tensor", "Tile", *(n for n, s in generics.items()
                                                       if s.kind is SymbolKind.TYPE_PARAM)]
            d = tcx.err(N.UNKNOWN_TYPE, f"cannot find type `{name}` in this scope", ident.span,
                        "not found in this scope")
            if name in _NARROW_TYPES:
                return tcx.emit(d.with_help(_NARROW_TYPES[name]))
            if name in ("usize", "isize"):  # an index's type in Rust; `u64` (the alias) is then refused as one
                return tcx.emit(d.with_help(
                    f"Tile's indices and sizes are `i32` (a tensor dimension is below 2^31) where Rust's are "
                    f"`{name}`: write `i32` (`{'u64' if name == 'usize' else 'i64'}` for a 64-bit number)"))
            guess = _TYPE_ALIASES.get(name) or suggest(name, cands)
            return tcx.emit(d.with_help(f"a type with a similar name exists: `{guess}`") if guess
                            else d.with_help("types are scalars (`f32`, `i32`, ..), `Tensor<..>`, `Tile<..>`, "
                                             "references and tuples; operations, handles and graphs have no "
                                             "written type: keep them where they are made"))
        case _:
            assert_never(te)


def _resolve_array_type(tcx: CheckCx, te: ast.NamedType, generics: dict[str, Symbol], mod: ModuleInfo,
                        in_kernel: bool) -> Type:
    name = te.name.name
    if len(te.args) != 2 or not isinstance(te.args[1], ast.ShapeType):
        return tcx.emit(tcx.err(N.WRONG_GENERIC_COUNT,
                                f"`{name}` takes an element type and a shape",
                                te.span, f"expected `{name}<T, [d0, ..]>`")
                        .with_help(f"e.g. `{name}<f32, [128]>`"))
    elem_te, shape_te = te.args
    assert isinstance(shape_te, ast.ShapeType)
    elem_ty = (resolve_type(tcx, elem_te, generics, mod, in_kernel)
               if not isinstance(elem_te, ast.ShapeType) and is_type_expr(elem_te) else None)
    if elem_ty is None or not isinstance(elem_ty, (ScalarT, ErrorT)):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"the element type of `{name}` must be a scalar "
                                "type", elem_te.span, "expected `f32`, `i32`, ...")
                        .with_help("write a scalar element type, e.g. `Tensor<f32, [..]>`"))
    if isinstance(elem_ty, ErrorT):
        return ERROR
    if len(shape_te.dims) > MAX_RANK:
        return rank_limit(tcx, shape_te.span, len(shape_te.dims))
    fx = Fx(mod, None, in_kernel, UNIT, generics)
    dims: list[Dim | None] = []
    bad = False
    for d in shape_te.dims:
        if d is None:
            if name == "Tile":
                tcx.emit(tcx.err(T.NOT_CONSTANT, "a tile dimension cannot be `?`", shape_te.span,
                                 "`?` in a tile shape")
                         .note("every dimension of a tile is a compile-time constant")
                         .with_help("use a const generic (`const B: i32`) for the dimension"))
                bad = True
            dims.append(None)
            continue
        dim = static_dim(tcx, d, fx)
        if dim is None:
            tcx.emit(tcx.err(T.NOT_CONSTANT, "array dimension is not a compile-time constant",
                             d.span, "not constant")
                     .with_help("use a literal, a `const`, or a const generic parameter"))
            bad = True
        dims.append(dim)
    if bad:
        return ERROR
    if name == "Tile":
        shape = tuple(d for d in dims if d is not None)
        check_tile_limits(tcx, shape, shape_te.span, None)
        return TileT(elem_ty.dtype, shape)
    return TensorT(elem_ty.dtype, tuple(dims))


def is_type_expr(t: Any) -> TypeGuard[ast.TypeExpr]:
    return isinstance(t, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType))
