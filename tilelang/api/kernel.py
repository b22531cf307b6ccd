"""`Kernel`: a kernel of a loaded module, callable from Python; a call checks
its arguments and returns an `Operation` (`call.py` does the checking)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from tilelang.api.arrays import tile_dtype_name
from tilelang.api.call import call
from tilelang.api.errors import CallError, given
from tilelang.api.fastpath import keyer_for
from tilelang.api.temporaries import LOST, arg_counts, find_unheld
from tilelang.api.signature import (
    _doc_comments,
    _header,
    _inferable,
    _py_signature,
    _type_text,
)
from tilelang.diagnostics.codes.names import WRONG_GENERIC_COUNT
from tilelang.dtypes import DType
from tilelang.env_switch import on_codegen_change
from tilelang.runtime.launch import ParamSpec, param_specs
from tilelang.syntax import ast
from tilelang.tuner.space import tune_spec

if TYPE_CHECKING:
    from tilelang.api.operation import Operation
    from tilelang.api.protocols import ModuleLike


#: every kernel made, for `_forget_plans`
_KERNELS: weakref.WeakSet[Kernel] = weakref.WeakSet()


def _forget_plans() -> None:
    """A codegen switch was set or changed (`env_switch.on_codegen_change`): each kernel's plans and memo hold
    the launcher of the variant compiled under the old setting; drop them (and the launchers of the plans an
    `Operation` still holds), so the next call takes the checked path and its launch the new setting's
    variant (the runtime keys its variants by the switches' values)."""
    from tilelang.api import tuning

    for k in list(_KERNELS):
        for plan in k._plans.values():
            plan.launcher, plan.launcher_tried, plan.memo = None, False, None
        k._plans.clear()
        k._memo = None
    tuning._HINTED.clear()


on_codegen_change(_forget_plans)


class Kernel:
    """A kernel of a loaded module. `kernel(args...)` checks the arguments and
    returns an `Operation`; `kernel[g1, g2](args...)` gives const generics (and
    element types) explicitly, like Tile's `kernel::<g1, g2>(..)`."""

    def __init__(
        self, module: ModuleLike, decl: ast.FnDecl, key: str, explicit: tuple[Any, ...] = ()
    ) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.explicit = explicit
        self.specs: tuple[ParamSpec, ...] = param_specs(decl)
        type_names = {g.name.name for g in decl.generics if not g.is_const}
        # "tscalar": a scalar of a type parameter (`a: T`), whose key part also
        # holds a NumPy scalar's dtype (it may fix `T`; a 0-D array's type does not)
        self._kinds = tuple("tscalar" if s.kind == "scalar" and s.elem in type_names else s.kind
                            for s in self.specs)
        self._keyer = keyer_for(self._kinds)  # reads a call's key (`fastpath.call_key`)
        self._keyer_held = keyer_for(self._kinds, held=False)  # the same, past E0313's test
        self._plans: dict[tuple[Any, ...], Any] = {}  # call key -> `fastpath.Plan`
        self._memo: Any = None  # the memo of the last plan that has one (`fastpath.memo_for`)
        self._specialised: dict[Any, Kernel] = {}  # `kernel[..]` by its generics
        _KERNELS.add(self)
        self._tune = tune_spec(decl)  # `#[autotune(..)]`, or None
        # E0313 (`temporaries.py`): the `&mut` parameters' positions (a
        # partition's array no variable holds), and the parameters a call
        # writes, as `refuse_unheld` takes them: a `&` one the kernel's
        # `unsafe` code writes is given an array directly
        writes_for = getattr(module._ownership, "writes_for", None)
        unsafe = writes_for(key) if writes_for is not None else frozenset()
        self._mut_at = tuple(i for i, s in enumerate(self.specs) if s.kind == "mut")
        # checked at the top of every call: a `&` array written directly, or a
        # tuned kernel (its own path); other kernels' partitions are tested by
        # the key (`fastpath.keyer_for`), whose miss checks them (`call.call`)
        self._check_at_top = self._tune is not None or any(
            s.kind == "ref" and s.name in unsafe for s in self.specs)
        self._written_params = [
            (s.name, s.span, "mut" if s.kind == "mut" else "written")
            for s in self.specs
            if s.kind == "mut" or (s.kind == "ref" and s.name in unsafe)
        ]
        self.__name__ = decl.name.name
        self.__qualname__ = decl.name.name
        self.signature = _header(decl, module._sources)
        self.__doc__ = self._doc()
        self.__signature__ = _py_signature(decl, module._sources)

    def _doc(self) -> str:
        src = self.module._sources
        lines = [self.signature]
        doc = _doc_comments(self.decl, src)
        if doc:
            lines += ["", doc]
        lines += [
            "",
            f"Call from Python: `{self.__name__}({', '.join(s.name for s in self.specs)})` "
            "returns an operation; run it with `.sync()`, or `.launch()` and then "
            "`.wait()` on the handle.",
        ]
        for s in self.specs:
            lines.append(f"  {s.name}: {self._describe_param(s)}")
        generics = [g.name.name for g in self.decl.generics]
        if generics:
            inferable = _inferable(self.decl, self.specs)
            names = ", ".join(generics)
            must = [g for g in generics if g not in inferable]
            lines.append(
                f"Generics: give them explicitly as `{self.__name__}[{names}](...)`"
                + (
                    f"; `{'`, `'.join(must)}` must be given, the arguments do not fix "
                    f"{'them' if len(must) > 1 else 'it'}."
                    if must
                    else ", or let the partitions and array shapes fix them."
                )
            )
        return "\n".join(lines)

    def _describe_param(self, s: ParamSpec) -> str:
        ty = _type_text(
            self.decl.params[[p.name.name for p in self.decl.params].index(s.name)].ty,
            self.module._sources,
        )
        want = DType.parse(s.elem or "")
        elem = f"{tile_dtype_name(want)} " if want is not None else ""
        an = f"{'an' if (elem or 'array')[0] in 'aeio' else 'a'} {elem}array"  # (`an int8 array`, `a uint8 array`)
        rank = len(s.dims or ())
        if s.kind == "mut":
            return (
                f"`tilelang.partition(array, tile)` of {an} of rank {rank}, written ({ty})"
            )
        if s.kind == "ref" and any(name == s.name and kind == "written" for name, _, kind in self._written_params):
            # its `unsafe` code writes it (`atomic_add(&h, ..)`): "read only" told a caller it could be shared
            return f"{an} of rank {rank}, written by the kernel's `unsafe` code ({ty}): pass one you keep"
        if s.kind == "ref":
            return f"{an} of rank {rank}, read only ({ty})"
        return f"a number ({ty})"

    def __repr__(self) -> str:
        return f"<tile {self.signature}>"  # `<tile kernel fn add<..>(..)>`

    def __get__(self, obj: Any, objtype: Any = None) -> Kernel:
        # A descriptor that returns itself: `inspect.isroutine` then holds, so
        # `help(mod.add)` documents it as a function with its signature.
        return self

    def __getattr__(self, name: str) -> Any:
        if name in ("sync", "launch", "wait"):  # `mod.add.launch()`: the call was left out
            from tilelang.api.errors import NameLookupError
            from tilelang.diagnostics.codes import api as acodes

            raise NameLookupError(
                f"kernel `{self.__name__}` has no `.{name}()`: a kernel call is an operation, the kernel is not",
                code=acodes.NOT_CALLED,
                help=f"call it with its arguments first: `mod.{self.__name__}(..).{name}()`" if name != "wait"
                else f"`.wait()` is a launch handle's: `h = mod.{self.__name__}(..).launch()`, then `h.wait()`")
        return object.__getattribute__(self, name)

    def __getitem__(self, generics: Any) -> Kernel:
        """`kernel[64, 128]` (in declaration order) or `kernel[{"BN": 128}]` (by name)."""
        if isinstance(generics, dict):
            key = tuple(sorted(generics.items()))
            k = self._specialised.get(("by name", key))
            if k is None:
                k = Kernel(self.module, self.decl, self.key, (dict(generics),))
                self._specialised[("by name", key)] = k
            return k
        values = generics if isinstance(generics, tuple) else (generics,)
        if len(values) > len(self.decl.generics):
            raise CallError(
                f"kernel `{self.__name__}` takes {len(self.decl.generics)} generic "
                f"argument{'s' if len(self.decl.generics) != 1 else ''} but {given(len(values))}",
                where=self.module._where(self.decl.name.span, f"`{self.signature}`"),
                help="give them in the order of the declaration" if self.decl.generics
                else f"it has none: call it without `[..]`, `mod.{self.__name__}(..)`",
                code=WRONG_GENERIC_COUNT,
            )
        # One `Kernel` per list of generics, so that its plans (and its doc,
        # which is not cheap to build) serve every call that names them.
        try:
            memo = tuple((type(v), v) for v in values)
            hash(memo)
        except TypeError:
            return Kernel(self.module, self.decl, self.key, tuple(values))
        k = self._specialised.get(memo)
        if k is None:
            if len(self._specialised) > 256:
                self._specialised.clear()
            k = self._specialised[memo] = Kernel(self.module, self.decl, self.key, tuple(values))
        return k

    # -- the call --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Operation:
        # first, while the arguments' counts are the caller's (`temporaries.py`):
        # an array no variable holds, written (E0313)
        lost = None
        if self._check_at_top or kwargs:
            lost = find_unheld(self, "kernel", self._written_params, args, kwargs,
                               arg_counts(args, kwargs))
        if self._tune is not None:
            from tilelang.api.tuning import tuned_call

            op = tuned_call(self, self._tune, args, kwargs)
        else:
            memo = self._memo  # `call`'s first step, inline: a repeated call on PyTorch tensors
            op = memo(args) if memo is not None and not kwargs else None
            if op is None:
                op = call(self, args, kwargs)
        if lost is not None:  # refused when it runs (`LOST`)
            LOST[op] = lost
        return op  # type: ignore[no-any-return]
