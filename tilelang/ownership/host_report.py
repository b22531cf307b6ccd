"""The diagnostics of the host ownership checker (codes E03xx).

`HostReports` is the part of `HostChecker` that words the findings: each
method builds one rustc-style diagnostic (primary span, the other borrow's
span, a note on why, a help line) and hands it to `report`, which emits each
finding once however often a loop body is re-walked. Entry point:
`HostReports.report`; the checker decides, this module only words.
"""

from __future__ import annotations

from tilelang.diagnostics.codes import ownership as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.values import (
    Borrow,
    Capture,
    GraphVal,
    HandleVal,
    Loan,
    OpVal,
    PartOf,
    Place,
    RefTo,
    State,
    Var,
)
from tilelang.source import Span
from tilelang.syntax import ast


def _verb(mutable: bool) -> str:
    return "writing" if mutable else "reading"


# the label a diagnostic carries where a `let` hides a launch handle (the REPL refuses such an entry: tilelang/repl/synth)
HIDES_HANDLE = "hides the handle"

class HostReports:
    sink: DiagnosticSink
    _seen: set[tuple[object, ...]]
    _moved_uses: set[tuple[Place, Span]]

    # Provided by the statement walker (host.py): the binding a name means at the current point.
    def lookup(self, name: str) -> Var | None: ...

    def report(self, diag: Diagnostic, *key: object) -> None:
        k = (diag.code, diag.primary_span, *key)
        if k not in self._seen:
            self._seen.add(k)
            self.sink.emit(diag)

    # -- names --------------------------------------------------------------------
    @staticmethod
    def _holder(st: State, atom: HandleVal | GraphVal) -> str | None:
        """The variable that holds a handle or a graph, for messages."""
        v = HostReports._holder_var(st, atom)
        return v.name if v is not None else None

    @staticmethod
    def _holder_var(st: State, atom: HandleVal | GraphVal) -> Var | None:
        for var, val in st.values.items():
            if atom in val.all_atoms():
                return var
        return None

    def _shadow_of(self, var: Var | None) -> Var | None:
        """The binding that hides `var` here (`let h = k(..).launch(); let h = 5;`): `h.wait()` written here
        would name it, so a help must point before it. None when `var` is what its name means here."""
        if var is None:
            return None
        now = self.lookup(var.name)
        return now if now is not None and now is not var else None

    @staticmethod
    def _with_shadow(d: Diagnostic, name: str, shadow: Var) -> Diagnostic:
        return d.secondary(shadow.span, f"this `{name}` {HIDES_HANDLE}: after it `{name}` names the new value")

    # -- dropped handles (E0308) ----------------------------------------------------
    def report_dropped(
        self, live: list[Loan], at: Span, name: str | None, how: str, var: Var | None = None
    ) -> None:
        token = min((ln.token for ln in live), key=lambda t: t.span.start)
        what = f"`{name}`" if name else "the handle"
        subject = f"launch handle `{name}`" if name else "the launch handle"
        d = (
            Diagnostic.error(
                codes.HANDLE_DROPPED, f"{subject} is {how} while its launch may still be running"
            )
            .primary(token.span, "this launch may not have been waited for")
            .secondary(at, f"{what} is {how} here")
        )
        d = d.note(f"the launch borrows {self._loan_list(live)} until it is waited for")
        where = (
            "before assigning a new handle to it"
            if how == "overwritten"
            else "before it goes out of scope"
        )
        shadow = self._shadow_of(var) if name else None
        if shadow is not None:
            assert name is not None
            d = self._with_shadow(d, name, shadow).with_help(
                f"call `{name}.wait()` before the `let` that hides it, or give the new value another name"
            )
        else:
            d = d.with_help(
                f"call `{name}.wait()` {where}"
                if name
                else "bind the handle and call `.wait()` on it, or use `.sync()`"
            )
        self.report(d, at)

    @staticmethod
    def _loan_list(loans: list[Loan]) -> str:
        # "`z` mutably and `x` shared", never "`x`, `z` mutably" (which reads
        # as if both were mutable)
        mutable = sorted({f"`{ln.place.name}`" for ln in loans if ln.mutable})
        shared = sorted({f"`{ln.place.name}`" for ln in loans if not ln.mutable} - set(mutable))
        parts = [", ".join(mutable) + " mutably"] if mutable else []
        if shared:
            parts.append(", ".join(shared) + (" shared" if mutable else ""))
        return " and ".join(parts)

    # -- conflicts with a launch in flight (E0305, E0309) -----------------------------
    def report_conflict(
        self,
        place: Place,
        mode: str,
        span: Span,
        ln: Loan,
        st: State,
        kernel: str | None,
        mutable_borrow: bool,
        unsafe: str | None = None,
        atomic: str = "",
    ) -> None:
        name = f"`{place.name}`"
        graph = kernel is not None and (kernel == "graph" or kernel.startswith("graph `"))  # `g.replay()`
        who = ("the graph" if kernel == "graph" else kernel) if graph else f"`{kernel}`"
        running = f"a launched kernel may still be {_verb(ln.mutable)} it"
        loan_label = (
            f"`{ln.place.name}` is borrowed {'mutably' if ln.mutable else 'shared'} "
            f"by this launch of `{ln.kernel}`"
        )
        holder = self._holder_var(st, HandleVal(ln.token))
        handle = holder.name if holder is not None else None
        shadow = self._shadow_of(holder)
        this = {"borrow": "this replay" if graph else "this launch", "drop": "the end of this block"}.get(
            mode, f"this use of {name}"
        )
        help_ = (
            f"call `{handle}.wait()` before the `let` that hides it, or give the new value another name"
            if handle and shadow is not None
            else f"call `{handle}.wait()` before {this}"
            if handle
            else f"wait for the launch of `{ln.kernel}` before {this}"
        )
        if mode == "borrow" and mutable_borrow and ln.mutable:
            d = Diagnostic.error(
                codes.CONCURRENT_WRITES, f"two launches in flight at once would both write {name}"
            ).primary(span, f"{'the replay of ' + who if graph else 'the launch of ' + who} writes {name} here")
            if ln.arg != span:
                d = d.secondary(
                    ln.arg, f"the launch of `{ln.kernel}` writes {name} and may still be running"
                )
        else:
            msg = {
                "read": f"cannot read {name} while {running}",
                "write": f"cannot write {name} while {running}",
                "move": f"cannot move {name} while {running}",
                "assign": f"cannot assign to {name} while {running}",
                "drop": f"{name} is dropped while {running}",
                "borrow": f"cannot {'replay' if graph else 'launch'} {who} {_verb(mutable_borrow)} {name} "
                f"while {running}",
            }[mode]
            label = {
                "drop": f"{name} is dropped here",
                "borrow": f"{who} {'writes' if mutable_borrow else 'reads'} {name} here",
                "read": f"{name} is read here",
                "write": f"{name} is written here",
                "move": f"{name} is moved here",
                "assign": f"{name} is assigned here, dropping its old value",
            }[mode]
            d = Diagnostic.error(codes.USE_WHILE_IN_FLIGHT, msg).primary(span, label)
            if ln.arg != span:
                d = d.secondary(ln.arg, loan_label)
        if ln.arg.start >= span.start and ln.arg.file == span.file:
            d = d.note(
                "the launch is from the previous iteration of the loop and was "
                "not waited for in that iteration"
            )
        if unsafe is not None and kernel is not None:
            d = d.note(_unsafe_note(kernel, unsafe))
        if ln.unsafe is not None and (ln.kernel, ln.unsafe) != (kernel, unsafe):
            # (one note where both launches are of one kernel and parameter: the same text twice, round 27)
            d = d.note(_unsafe_note(ln.kernel, ln.unsafe))
        if atomic and ln.atomic and atomic != ln.atomic:
            d = d.note(f"both update it atomically, but with `{ln.atomic}` and `{atomic}`: atomics of different "
                       "kinds do not commute, so the result would depend on which launch's blocks come first")
        d = d.note("`.launch()` borrows its tensors until `.wait()` is called on its handle")
        if handle and shadow is not None:
            d = self._with_shadow(d, handle, shadow)
        d = d.with_help(help_)
        self.report(d, ln.arg)

    # -- moves (E0306) ------------------------------------------------------------------
    def report_moved(
        self, place: Place, what: str, span: Span, moved: Place, moves: frozenset[Span]
    ) -> None:
        self._moved_uses.add((place, span))
        first = min(moves, key=lambda s: (s.start, s.end))
        name = place.name if len(moved.path) <= len(place.path) else moved.name
        d = Diagnostic.error(codes.USE_AFTER_MOVE, f"use of moved {what} `{name}`").primary(
            span, "value used here after move"
        )
        for m in sorted(moves, key=lambda s: s.start):
            later = m.start >= span.start and m.file == span.file
            d = d.secondary(
                m,
                "value moved here, in a previous iteration of the loop"
                if later
                else "value moved here",
            )
        if what == "value":
            d = d.note(
                f"`{name}` owns tensor data, which is affine: `let b = a;` and "
                "passing by value move it"
            )
            d = d.with_help(
                f"borrow it with `&{name}` instead, or copy it with "
                f"`{name}.clone()` before the move"
            )
        else:
            d = d.note(f"a {what} is affine: binding it to another name moves it").with_help(
                f"use the {what} through the name it was moved to")
        self.report(d, first)

    def report_reassigned(self, op: OpVal, b: Borrow, span: Span) -> None:
        """An operation built before its tensor's variable was reassigned, run
        after: it would write (or read) the old tensor, which no name holds."""
        n = b.place.name
        if b.dropped:
            assert b.reassigned is not None
            self.report(
                Diagnostic.error(codes.MOVE_OF_CAPTURED,
                                 f"this operation of `{op.kernel}` writes `{n}`, which was dropped at the end of "
                                 "its block")
                .primary(span, "the operation runs here")
                .secondary(b.span, f"`{n}` is taken here, when the operation is built")
                .secondary(b.reassigned, f"`{n}` is dropped here")
                .note("a kernel call captures its tensors when it is built: its results would go to a tensor "
                      "nothing can read")
                .with_help(f"declare `{n}` where the operation runs (outside the block), or run the operation "
                           "inside the block"), b.span)
            return
        d = (
            Diagnostic.error(
                codes.MOVE_OF_CAPTURED,
                f"this operation of `{op.kernel}` holds the tensor `{n}` had before it was reassigned",
            )
            .primary(span, "the operation runs here, on the old tensor")
            .secondary(b.span, f"`{n}` is taken here, when the operation is built")
            .secondary(b.reassigned, f"`{n}` is given a new tensor here")
            .note("a kernel call captures its tensors when it is built, and `.sync()` and `.launch()` run it on "
                  + ("those: its results would go to a tensor nothing can read any more" if b.mutable
                     else "those: it would read the old values, not the new ones"))
            .with_help(f"build the call after the assignment (`{op.kernel}(..).sync()` where it runs), or "
                       f"write into `{n}` instead of rebinding it")
        )
        self.report(d, b.span)

    def report_stale_write(self, view: RefTo | PartOf, span: Span, callee: str) -> None:
        """A partition of a tensor (or a `&mut` reference to it) taken before its variable was
        reassigned, written through after: the writes would go to the old tensor, which no
        name holds (`let p = z.partition(..); z = ..; k(p).sync();`)."""
        n = view.place.name
        what = "partition" if isinstance(view, PartOf) else "reference"
        assert view.reassigned is not None
        if view.dropped:
            self.report(
                Diagnostic.error(codes.MOVE_OF_CAPTURED,
                                 f"this {what} names `{n}`, which was dropped at the end of its block")
                .primary(span, f"`{callee}` would write `{n}` through it")
                .secondary(view.span, f"the {what} {'of' if what == 'partition' else 'to'} `{n}` is taken here")
                .secondary(view.reassigned, f"`{n}` is dropped here")
                .note("its results would go to a tensor nothing can read")
                .with_help(f"declare `{n}` outside the block, where it is written through the {what}"), span)
            return
        d = (
            Diagnostic.error(codes.MOVE_OF_CAPTURED,
                             f"this {what} holds the tensor `{n}` had before it was reassigned")
            .primary(span, f"`{callee}` would write the old tensor through it")
            .secondary(view.span, f"the {what} {'of' if what == 'partition' else 'to'} `{n}` is taken here")
            .secondary(view.reassigned, f"`{n}` is given a new tensor here")
            .note("its results would go to a tensor nothing can read any more")
            .with_help(f"take the {what} after the assignment (`"
                       + (f"{n}.partition(..)" if what == "partition" else f"&mut {n}" if view.mutable else f"&{n}")
                       + f"` where it is used), or write into `{n}` instead of rebinding it")
        )
        self.report(d, span)

    # -- graph captures (E0307) ------------------------------------------------------------
    def report_captured(self, place: Place, mode: str, span: Span, cap: Capture, st: State) -> None:
        gname = self._holder(st, GraphVal(cap.token))
        g = f"`{gname}`" if gname else "a graph"
        n = place.name
        verb = {"move": "move", "assign": "assign to", "drop": "drop"}[mode]
        d = (
            Diagnostic.error(
                codes.MOVE_OF_CAPTURED,
                f"cannot {verb} `{n}` while graph {g} captures it"
                if gname
                else f"cannot {verb} `{n}` while a graph captures it",
            )
            .primary(
                span,
                {
                    "move": f"`{n}` is moved here",
                    "assign": f"`{n}` is reassigned here, dropping the captured tensor",
                    "drop": f"`{n}` is dropped here",
                }[mode],
            )
            .secondary(cap.arg, f"`{cap.place.name}` is captured by the graph here")
        )
        d = d.note(
            "a graph replays its operations on the tensors it recorded; those must "
            "stay alive and in place while the graph lives"
        )
        d = d.with_help(
            "reading and writing the tensor between replays is fine: give it new values in place, with "
            f"compound assignment (`{n} *= 0.0; {n} += new;` for finite values) or a kernel that stores "
            f"into `{n}.partition([..])`, instead of rebinding it"
            if mode == "assign"
            else f"declare `{n}` before the graph, where it lives as long as the graph (outside the block or "
            f"branch that ends here)"
            if mode == "drop"
            else f"borrow it with `&{n}`, or use `{n}.clone()`"
        )
        self.report(d, cap.arg)

    # -- mutability (E0304) ------------------------------------------------------------------
    def report_immutable(self, var: Var, span: Span, what: str) -> None:
        if what == "partition":
            msg = f"cannot partition `{var.name}` for writing, as it is not declared as mutable"
            label = "`.partition` borrows the tensor mutably"
        else:
            msg = f"cannot borrow `{var.name}` as mutable, as it is not declared as mutable"
            label = "cannot borrow as mutable"
        d = Diagnostic.error(codes.MUT_USE_OF_IMMUTABLE, msg).primary(span, label)
        if var.target:
            d = d.secondary(
                var.span,
                f"`{var.name}` is a `&` reference, so the data it refers to cannot be written",
            )
            d = d.with_help(f"make the parameter `&mut`: `{var.name}: &mut Tensor<..>`")
        else:
            d = d.secondary(var.span, f"`{var.name}` is declared here without `mut`")
            d = d.with_help(f"consider making this binding mutable: `mut {var.name}`")
        self.report(d)

    def report_partition_of_temporary(self, e: ast.MethodCall) -> None:
        """E0313: `.partition` of a value no variable holds; a kernel's writes
        through it would land in a temporary nobody reads again."""
        self.report(
            Diagnostic.error(
                codes.PARTITION_OF_TEMPORARY,
                "`.partition` of a temporary value: a kernel's writes to it would be lost",
            )
            .primary(e.receiver.span, "this value is computed here and held by no variable")
            .with_help(_rows_of_help(e.receiver) or (
                "bind it to a variable first and read the results from that variable: "
                "`let mut t = <value>; k(t.partition(..)).sync();` (a `reshape` is a copy: "
                "reshape `t` back into the original afterwards if you need it there)")
            )
        )

    def report_write_to_temporary(self, e: ast.Expr, callee: str, param: str, kernel: bool) -> None:
        """E0313: a value no variable holds lent to a parameter the callee
        writes (a host function's `&mut`, a `&` a kernel's `unsafe` code
        writes); the writes would land in a temporary nobody reads again."""
        who = (f"`{param}` of kernel `{callee}`, whose `unsafe` code writes it" if kernel
               else f"`{param}` of function `{callee}` as `&mut`")
        lend = "&t" if kernel else "&mut t"
        self.report(
            Diagnostic.error(
                codes.PARTITION_OF_TEMPORARY,
                f"a temporary value lent to {who}: the writes to it would be lost",
            )
            .primary(e.span, "this value is computed here and held by no variable")
            .with_help(
                f"bind it to a variable first, pass `{lend}` and read the results from `t`: "
                f"`let {'' if kernel else 'mut '}t = <value>; {callee}(.., {lend}, ..)` (a `reshape` "
                "or `clone` is a copy: copy the results back where you need them)"
            )
        )

    # -- launch arguments (E0301, E0303) ----------------------------------------------------------
    def report_no_partition(
        self, place: Place, span: Span, p: ast.Param, decl: ast.FnDecl
    ) -> None:
        d = (
            Diagnostic.error(
                codes.MUT_TENSOR_WITHOUT_PARTITION,
                f"mutable tensor `{place.name}` passed to kernel `{decl.name.name}` "
                "without `.partition(...)`",
            )
            .primary(span, "every block of the launch would write all of it")
            .secondary(p.span, f"`{p.name.name}` is a `&mut` parameter: each block gets one tile")
        )
        d = d.with_help(f"split it into tiles, e.g. `{place.name}.partition([1024])`")
        self.report(d)

    def report_unsafe_shared(self, place: Place, span: Span, kernel: str, param: str) -> None:
        """A `&` reference parameter of a host function written by a launch
        (the kernel's `unsafe` code writes that argument): the caller may have
        passed the same tensor in another `&` argument, read here meanwhile."""
        root = place.var.name
        d = (
            Diagnostic.error(
                codes.UNSAFE_WRITE_THROUGH_SHARED,
                f"`{kernel}` writes `{place.name}` in `unsafe` code, but `{place.name}` is "
                "a `&` reference parameter",
            )
            .primary(span, f"`{kernel}` writes it through its parameter `{param}`")
            .secondary(place.var.span, f"`{root}` is a shared reference")
            .note(
                "a caller may pass one tensor in two `&` arguments; the function would read "
                "it through the other while the launch writes it"
            )
            .with_help(f"take `{root}` as `&mut`, so that no other argument can alias it")
        )
        self.report(d)

    def report_aliasing(self, a: Borrow, b: Borrow, what: str, decl: ast.FnDecl | None = None) -> None:
        how = "mutably" if b.mutable else "as shared"
        same = a.place == b.place
        name = b.place.name if same or len(b.place.path) <= len(a.place.path) else a.place.name
        d = (
            Diagnostic.error(
                codes.CONFLICTING_BORROWS_IN_LAUNCH,
                f"cannot pass `{name}` {how} because it is "
                f"also passed {'mutably' if a.mutable else 'as shared'}"
                f" to the same {what}",
            )
            .primary(b.span, f"`{name}` passed again here")
            .secondary(
                a.span,
                f"first {'mutable' if a.mutable else 'shared'} borrow of `{name}` here",
            )
        )
        d = d.note(
            "the kernel would read and write the same memory through two "
            "parameters; blocks could race on it"
            if what == "launch"
            else "the function could read and write the same memory through two "
            "parameters, e.g. in two launches of its own"
        )
        for x in (a, b):
            if x.unsafe:
                d = d.note(_unsafe_note("the kernel", x.param))
        if a.atomic and b.atomic and a.atomic != b.atomic:
            d = d.note(f"`{a.param}` is updated with `{a.atomic}` and `{b.param}` with `{b.atomic}`: atomics of "
                       "different kinds do not commute, so on one tensor the result would depend on the blocks' "
                       "order")
        if a.mutable and b.mutable:
            # two outputs on one tensor: a copy would take the second one's results away
            d = d.with_help(f"write the second output to a tensor of its own (`let mut {name}2 = "
                            f"zeros::<..>(..);`), or one `&mut` parameter that holds both results")
        else:
            own = _reads_own_tile_only(decl, a, b) if what == "launch" else None
            if own is not None:  # (huser26) an in-place update written as out-of-place: read the own tile
                d = d.with_help(f"`{decl.name.name}` reads `{own[1]}` only at the own tile of `{own[0]}` "  # type: ignore[union-attr]
                                f"(`{own[1]}.load_like({own[0]})`): to update `{name}` in place, read "
                                f"`{own[0]}.load()` there instead and drop the parameter `{own[1]}`")
            d = d.with_help(f"pass a copy instead: `&{name}.clone()`, or use separate tensors")
        self.report(d)

    # -- escapes (E0310, E0311) ---------------------------------------------------------------------
    def report_escape(self, handle: bool, span: Span, how: str) -> None:
        what = "launch handle" if handle else "graph"
        d = Diagnostic.error(
            codes.HANDLE_ESCAPES,
            f"a {what} cannot be {how}: it must stay in the function that created it",
        ).primary(span, f"this {what} is {how} here")
        d = d.note(
            "the ownership checker follows borrows within one function; a "
            "caller could not know which tensors are still in use"
        )
        if how.startswith("put in"):
            # the tuple (array) is in this very function: one variable a handle (graph) is what works
            d = d.with_help(
                "keep each handle in a variable of its own (`let h1 = k(..).launch();`, `let h2 = ..`) and "
                "wait for each (`h1.wait(); h2.wait();`)"
                if handle
                else "keep each graph in a variable of its own (`let g1 = graph { .. };`) and replay it by that name"
            )
        else:
            d = d.with_help(
                "wait for the launch inside the function, and return the tensor instead"
                if handle
                else "build and replay the graph in one function"
            )
        self.report(d)

    def report_ref_returned(self, fn: ast.FnDecl, ref: ast.RefType) -> None:
        d = (
            Diagnostic.error(
                codes.REF_RETURNED,
                f"host function `{fn.name.name}` cannot return a reference to a tensor",
            )
            .primary(ref.span, "a reference in the return type")
            .note(
                "the checker follows a borrow from the `&` that takes it to every use; "
                "a reference that comes out of a call could point to any of its "
                "arguments, so a launch in flight on one of them could not be seen"
            )
            .with_help(
                "return an owned tensor (`x.clone()`), or take the reference "
                "at the call site (`&t`) instead of returning it"
            )
        )
        self.report(d)


def _unsafe_note(kernel: str, param: str) -> str:
    kernel = kernel if kernel == "the kernel" else f"`{kernel}`"
    return (
        f"{kernel} writes its `&` parameter `{param}` in `unsafe` code (an atomic or "
        "`store_unchecked`), so a launch of it writes that tensor"
    )


def _rows_of_help(x: ast.Expr) -> str | None:
    """E0313's help for `.partition` of rows of a named tensor, `kc[37..57]` or `kc[i]` (round 16: a KV
    cache's new rows written as PyTorch's `k_cache[pos:pos + n] = k`): the rows are a copy, which the host
    cannot put back (E0114), so the help writes into the tensor itself, each block storing the new rows where
    they fall and its own rows elsewhere."""
    if not (isinstance(x, ast.Index) and isinstance(x.receiver, ast.Name)):
        return None
    n, ix = x.receiver.ident.name, x.index
    lo, what = (ix.start, "those rows") if isinstance(ix, ast.RangeExpr) else (ix, "that row")
    off = _text(lo) or "off"
    return (f"`{n}[..]` is a copy of {what}, and the host cannot put rows back into `{n}` (E0114): partition "
            f"`{n}` itself and pass the first row, `{off}`, to the kernel, whose blocks store the new rows where "
            f"they fall and their own rows elsewhere (with tiles of one row, `r = block_id(0)`: `if r >= off && "
            f"r < off + n {{ {n}.store(new) }} else {{ {n}.store({n}.load()) }}`)")


def _text(x: ast.Expr) -> str | None:
    if isinstance(x, ast.IntLit):
        return str(x.value)
    if isinstance(x, ast.Name):
        return x.ident.name
    return None


def _reads_own_tile_only(decl: ast.FnDecl | None, a: Borrow, b: Borrow) -> tuple[str, str] | None:
    """(the `&mut` parameter, the `&` one) where kernel `decl` reads the `&` parameter of one tensor passed both
    ways only as `x.load_like(z)` of that `&mut` parameter `z`: the in-place form reads `z.load()`."""
    if decl is None or a.mutable == b.mutable or a.unsafe or b.unsafe:
        return None
    m, s = (a, b) if a.mutable else (b, a)
    return (m.param, s.param) if reads_own_tile_only(decl, m.param, s.param) else None


def reads_own_tile_only(decl: ast.FnDecl, mut: str, shared: str) -> bool:
    """Whether kernel `decl` reads its `&` parameter `shared` only as `shared.load_like(mut)` (also the Python
    API's E0303, `api/call.check_overlaps`)."""
    uses = [n for n in ast.walk(decl.body) if isinstance(n, ast.Name) and n.ident.name == shared]
    reads = [n for n in ast.walk(decl.body) if isinstance(n, ast.MethodCall) and n.method.name == "load_like"
             and isinstance(n.receiver, ast.Name) and n.receiver.ident.name == shared and len(n.args) == 1
             and isinstance(n.args[0].value, ast.Name) and n.args[0].value.ident.name == mut]
    return bool(uses) and len(uses) == len(reads)
