"""A fast LALR(1) driver over Lark's tables: text -> a light parse tree.

Lark builds the tables from `grammar/tile.lark` (the grammar stays the one
source of truth) and stays the reference; this module only runs them faster.
Lark's own loop shapes every reduction through a chain of wrapper objects,
builds `Tree`s with position metadata and lexes through a per-state lexer
object; on a 2,000-line file that was most of a second. Here:

- Lexing: Lark's root lexer's regular expression (every terminal, in Lark's
  order), with whitespace folded into a `\\s*` prefix, runs over the text with
  `finditer`. A token the current parser state does not accept is lexed again
  with that state's own lexer, as Lark's contextual lexer would (`>>` closing
  two generic lists, `&&x`, `x.0.1`), and `finditer` restarts after it.
  Keywords are always keyword tokens (what `parser._keyword` does for Lark);
  `_` is `UNDERSCORE` where the state accepts it and `NAME` elsewhere.
- Parsing: a tight shift/reduce loop over Lark's `IntParseTable`. A unit
  reduction (`?a: b`) only changes the state. Every other reduction shapes
  its children exactly as Lark's tree builder would (`?rule` inlining, `[x]`
  placeholders, filtered punctuation, `_rule` splicing) with a small
  function generated once per rule.
- Positions follow Lark's `propagate_positions`: a node spans its first to
  its last child, counting the text of inlined wrappers (the parentheses
  around `(a)`), and a node that matched nothing has no position.

The tree is made of `Node` (data, children, start, end) and `Tok` (type,
value, start, end); offsets are into the whole text, whatever slice of it
was parsed.

`Tables.parse` raises `Reject` on anything it does not accept or does not
handle; the caller then runs Lark itself, whose exception the error
reporting reads (and whose tree `from_lark` converts, should Lark accept
what this driver rejected). So errors are exactly Lark's.

Invariant: for every input Lark accepts, `parse` returns `Reject` or the
tree Lark would build (data, children, token types and positions);
`tests/unit/test_parser_lalr.py` compares the two on every program in the
repository and on mutated ones.

Start-up: `Tables.freeze()` turns the tables into plain data (the rules'
shaping functions as one compiled code object, every parser state's lexer
as a regular expression) for `marshal`, and `Tables.thaw(blob)` rebuilds
them without Lark; the parser keeps that blob in a cache file, so a program
that parses does not import Lark at all (`tilec check` starts faster).
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Node", "Reject", "Tables", "Tok", "from_lark"]


class Tok:
    """A token: its terminal name, text and offsets (end exclusive)."""

    __slots__ = ("end", "start", "type", "value")

    def __init__(self, type: str, value: str, start: int, end: int) -> None:
        self.type = type
        self.value = value
        self.start = start
        self.end = end

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Tok({self.type!r}, {self.value!r}, {self.start}, {self.end})"


class Node:
    """A parse-tree node: rule (or alias) name, children, offsets.

    `start`/`end` are None when the node matched no text (`attributes` with
    no attribute). `None` children are `[x]` placeholders that did not match.
    """

    __slots__ = ("children", "data", "end", "start")

    def __init__(self, data: str, children: list[Any], start: int | None,
                 end: int | None) -> None:
        self.data = data
        self.children = children
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Node({self.data!r}, {self.children!r}, {self.start}, {self.end})"


class Reject(Exception):
    """The driver did not accept the input (or met a case it leaves to Lark).
    `at`: for a syntax error, the offset (into the whole text) where Lark's
    error is too: the unexpected token's start, the end of the input for an
    unexpected end, or the first character no terminal matches; None when
    the driver leaves the input to Lark."""

    def __init__(self, at: int | None = None) -> None:
        super().__init__(at)
        self.at = at


# What a reduction does (the first field of a rule's entry).
_UNIT = 0       # `?a: b`: the value and its position stay, only the state changes
_IN_PLACE = 1   # one symbol, not `?rule`: the new value replaces the top of the stack
_GENERAL = 2    # pop the symbols, push the new value
_EXPAND1 = 3    # `?rule`: as _GENERAL, but a single child is passed through

# (kind, size, goto symbol, make(raw, start, end) -> value, or the children for _EXPAND1)
_Rule = tuple[int, int, str, "Callable[[list[Any], int | None, int | None], Any]"]


def _shaper(expansion: Any, keep_all: bool, empty_indices: Any) -> tuple[str, bool]:
    """Source of the children expression for one rule, and whether it is `raw` itself.

    Mirrors `lark.parse_tree_builder.maybe_create_child_filter` (LALR, with
    placeholders): filtered terminals dropped, `_rule` children spliced,
    `None` where an optional part did not match.
    """
    n = len(expansion)
    if empty_indices:
        bits = "".join(str(int(b)) for b in empty_indices)
        nones = [len(ones) for ones in bits.split("0")]
    else:
        nones = [0] * (n + 1)
    parts: list[str] = []
    pending = 0
    kept_all = True
    for i, sym in enumerate(expansion):
        pending += nones[i]
        if keep_all or not (sym.is_term and sym.filter_out):
            parts.extend(["None"] * pending)
            pending = 0
            if not sym.is_term and sym.name.startswith("_"):
                parts.append(f"*raw[{i}]")
                kept_all = False
            else:
                parts.append(f"raw[{i}]")
        else:
            kept_all = False
    pending += nones[n]
    parts.extend(["None"] * pending)
    if pending or any(nones):
        kept_all = False
    if kept_all:
        return "raw", True
    if parts and parts[0] == "*raw[0]":
        # Left recursion (`__x: __x "," y`): grow the child's list in place, as Lark does.
        rest = ", ".join(parts[1:])
        return (f"_extend(raw[0], [{rest}])" if rest else "raw[0]"), False
    return "[" + ", ".join(parts) + "]", False


def _extend(head: list[Any], tail: list[Any]) -> list[Any]:
    head += tail
    return head


def is_lark(x: Any, name: str) -> bool:
    """Whether `x` is an instance of Lark's class `name` (`Token`, `Tree`, `UnexpectedInput`, ..), of whichever
    copy of Lark's modules made it. A class imported where it is tested may be another copy's: a run that
    drops Lark's modules from `sys.modules` (pytester's in-process runs do) leaves the cached parser raising
    and building the old copy's objects while a fresh `import lark` gives new classes (hfix: a syntax error
    was an internal error, uncaught by the fresh `UnexpectedInput`)."""
    return any(c.__name__ == name and c.__module__.split(".")[0] == "lark" for c in type(x).__mro__)


class Tables:
    """Lark's parse table and lexers for one grammar, in the form the loop wants."""

    def __init__(self, lark: Any, keywords: Iterable[str]) -> None:
        frontend = lark.parser
        table = frontend.parser.parser.parse_table
        lexer = frontend.lexer
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)

        rule_index: dict[Any, int] = {}
        self.rules: list[_Rule] = []
        self._makes: list[str] = []  # the source of each rule's `make`, by rule index
        self.rows: dict[int, dict[str, int]] = {}
        for state, actions in table.states.items():
            row: dict[str, int] = {}
            for sym, (action, arg) in actions.items():
                if getattr(action, "name", None) == "Shift":  # (Lark's `Shift`, of the parser's copy: `is_lark`)
                    row[sym] = arg
                    continue
                k = rule_index.get(arg)
                if k is None:
                    k = rule_index[arg] = len(self.rules)
                    self.rules.append(self._rule(arg))
                row[sym] = ~k
            self.rows[state] = row

        root = lexer.root_lexer
        self.ignore = frozenset(root.ignore_types)
        self.master = re.compile(r"\s*(?:" + _one_regex(root) + ")", _flags(root))
        # A keyword is always its keyword token, wherever it stands (the lexer
        # callback `parser._keyword` retypes a NAME so for Lark). Any other
        # string that NAME also matches (`_`) is its own token only where the
        # state accepts it, as Lark's contextual lexer decides.
        self.keywords: dict[str, str] = {k: k.upper() for k in keywords}
        name_re = re.compile(_terminal_regex(root, "NAME"))
        self.folds: dict[str, str] = {}
        for t in lark.terminals:
            value = getattr(t.pattern, "value", "")
            if (is_lark(t.pattern, "PatternStr") and value not in self.keywords
                    and name_re.fullmatch(value)):
                self.folds[value] = t.name
        self._state_lexers: Any = lexer.lexers  # None once thawed
        self._state_res: dict[int, re.Pattern[str]] = {}
        self._patterns: list[tuple[str, int]] = []  # thawed: the states' lexer patterns
        self._state_pattern: dict[int, int] = {}

    def _rule(self, rule: Any) -> _Rule:
        opts = rule.options
        expand1 = bool(opts.expand1) and not rule.alias
        size = len(rule.expansion)
        origin = str(rule.origin.name)  # a Lark `Token` when the tables were built, not loaded
        code, identity = _shaper(rule.expansion, opts.keep_all_tokens, opts.empty_indices)
        if origin.startswith("_"):
            make = code  # `__x_star_n` and `_rule`: a list for the parent to splice
        elif expand1:
            make = code  # the loop decides between the single child and a Node
        else:
            make = f"Node({str(rule.alias or origin)!r}, {code}, start, end)"
        if expand1 and size == 1 and identity:
            kind = _UNIT
        elif expand1:
            kind = _EXPAND1
        elif size == 1:
            kind = _IN_PLACE
        else:
            kind = _GENERAL
        fn = eval(  # generated from the grammar's rules, never from input
            f"lambda raw, start, end: {make}", {"_extend": _extend, "Node": Node})
        self._makes.append(make)
        return (kind, size, origin, fn)

    # ------------------------------------------------------------ cache form
    def freeze(self) -> bytes:
        """The tables as a `marshal` blob (see the module docstring)."""
        assert len(self._makes) == len(self.rules), "only tables built from Lark can be frozen"
        lexers = getattr(self, "_state_lexers", None)
        patterns: list[tuple[str, int]] = []
        index: dict[int, int] = {}
        seen: dict[tuple[str, int], int] = {}
        for state in self.rows:
            if state in self._state_res:
                pat = (self._state_res[state].pattern, self._state_res[state].flags)
            elif lexers is not None:
                pat = (_one_regex(lexers[state]), _flags(lexers[state]))
            else:
                continue
            index[state] = seen.setdefault(pat, len(patterns))
            if index[state] == len(patterns):
                patterns.append(pat)
        source = "RULES = [\n" + "".join(
            f"    lambda raw, start, end: {make},\n" for make in self._makes) + "]\n"
        data = {
            "start_states": self.start_states,
            "end_states": self.end_states,
            "rows": self.rows,
            "rules": [(k, n, origin) for k, n, origin, _ in self.rules],
            "makes": compile(source, "<tilec parser rules>", "exec"),
            "ignore": frozenset(self.ignore),
            "master": (self.master.pattern, self.master.flags),
            "keywords": self.keywords,
            "folds": self.folds,
            "patterns": patterns,
            "state_pattern": index,
        }
        return marshal.dumps(data)

    @classmethod
    def thaw(cls, blob: bytes) -> Tables:
        """Tables from `freeze()`'s blob, without importing Lark."""
        data = marshal.loads(blob)
        self = cls.__new__(cls)
        self.start_states = data["start_states"]
        self.end_states = data["end_states"]
        self.rows = data["rows"]
        namespace: dict[str, Any] = {"_extend": _extend, "Node": Node}
        exec(data["makes"], namespace)  # the code `freeze` compiled from the grammar's rules
        makes = namespace["RULES"]
        self.rules = [(k, n, origin, makes[i]) for i, (k, n, origin) in enumerate(data["rules"])]
        self._makes = []  # a thawed table is not frozen again
        self.ignore = data["ignore"]
        self.master = re.compile(*data["master"])
        self.keywords = data["keywords"]
        self.folds = data["folds"]
        self._state_res = {}
        self._patterns = data["patterns"]
        self._state_pattern = data["state_pattern"]
        self._state_lexers = None
        return self

    def _state_re(self, state: int) -> re.Pattern[str]:
        """The regular expression of Lark's contextual lexer for `state`."""
        pat = self._state_res.get(state)
        if pat is None:
            if self._state_lexers is None:  # thawed: the patterns were saved
                pat = re.compile(*self._patterns[self._state_pattern[state]])
            else:
                lx = self._state_lexers[state]
                pat = re.compile(_one_regex(lx), _flags(lx))
            self._state_res[state] = pat
        return pat

    # ------------------------------------------------------------ the loop
    def parse(self, text: str, start: str, pos: int = 0, endpos: int | None = None) -> Any:
        """Parse `text[pos:endpos]` from the rule `start`; raise `Reject` on failure."""
        if endpos is None:
            endpos = len(text)
        rows = self.rows
        rules = self.rules
        end_state = self.end_states[start]
        stack = [self.start_states[start]]
        values: list[Any] = []
        starts: list[int | None] = []  # where each value's text starts (None: no text)
        ends: list[int | None] = []
        row = rows[stack[-1]]
        for tok in self._tokens(text, pos, endpos, stack):
            typ = tok.type
            # Reduce as long as the table says so, then shift.
            while True:
                act = row.get(typ)
                if act is None:
                    if typ == "$END" and stack[-1] == end_state:
                        return values[-1]
                    raise Reject(tok.start)
                if act >= 0:
                    stack.append(act)
                    values.append(tok)
                    starts.append(tok.start)
                    ends.append(tok.end)
                    row = rows[act]
                    break
                kind, size, origin, make = rules[~act]
                if kind == _UNIT:
                    pass
                elif kind == _IN_PLACE:
                    values[-1] = make([values[-1]], starts[-1], ends[-1])
                else:
                    if size:
                        raw = values[-size:]
                        first, last = starts[-size], ends[-1]
                        if first is None or last is None:
                            first, last = _bounds(starts[-size:], ends[-size:])
                        del values[-size:], starts[-size:], ends[-size:], stack[len(stack) - size + 1:]
                    else:
                        raw = []
                        first = last = None
                        stack.append(-1)  # replaced by the goto below
                    if kind == _GENERAL:
                        value = make(raw, first, last)
                    else:
                        value, first, last = _expand1(make(raw, first, last), origin, first, last)
                    values.append(value)
                    starts.append(first)
                    ends.append(last)
                stack[-1] = act = rows[stack[-2]][origin]
                row = rows[act]
        raise AssertionError("the token stream ends with $END")

    def _tokens(self, text: str, pos: int, endpos: int, stack: list[int]) -> Iterator[Tok]:
        """The tokens of `text[pos:endpos]`, then `$END`, for the parser at `stack`.

        Lexing a token happens when the parser asks for it, after it shifted the
        one before: `stack[-1]` is then the state Lark's contextual lexer keys on.
        """
        rows = self.rows
        ignore = self.ignore
        keywords = self.keywords
        folds = self.folds
        finditer = self.master.finditer
        expect = pos
        matches = finditer(text, pos, endpos)
        while True:
            restart = -1
            for m in matches:
                if m.start() != expect:
                    raise Reject(expect)  # a character no terminal matches
                typ = m.lastgroup
                assert typ is not None
                s, e = m.span(typ)
                expect = e
                if typ in ignore:
                    continue
                value = text[s:e]
                row = rows[stack[-1]]
                if typ == "NAME":
                    kw = keywords.get(value)
                    if kw is not None:
                        typ = kw
                    elif value in folds and folds[value] in row:
                        typ = folds[value]
                if typ not in row:
                    # Lark's contextual lexer tries only this state's terminals.
                    typ, e2 = self._relex(text, s, endpos, stack[-1], row)
                    if e2 != e:
                        expect = e = e2
                        value = text[s:e]
                        restart = e
                yield Tok(typ, value, s, e)
                if restart >= 0:
                    break
            if restart < 0:
                break
            matches = finditer(text, restart, endpos)
        if expect != endpos:
            raise Reject(expect)
        yield Tok("$END", "", expect, expect)

    def _relex(self, text: str, s: int, endpos: int, state: int,
               row: dict[str, int]) -> tuple[str, int]:
        m = self._state_re(state).match(text, s, endpos)
        if m is None or m.lastgroup is None or m.lastgroup in self.ignore:
            raise Reject
        typ = m.lastgroup
        if typ == "NAME":
            value = m.group()
            kw = self.keywords.get(value)
            if kw is not None:
                typ = kw
            elif value in self.folds and self.folds[value] in row:
                typ = self.folds[value]
        return typ, m.end()


def _bounds(starts: list[int | None], ends: list[int | None]) -> tuple[int | None, int | None]:
    """Start of the first and end of the last child that has text (Lark's `_pp_get_meta`)."""
    first = next((x for x in starts if x is not None), None)
    last = next((x for x in reversed(ends) if x is not None), None)
    return first, last


def _expand1(children: list[Any], name: str, first: int | None,
             last: int | None) -> tuple[Any, int | None, int | None]:
    """A `?rule`: its only child passes through, else a Node.

    A passed-through Node keeps its own offsets; the stack position is the
    whole reduction's (Lark's "container"), so `(a) + b` starts at `(`. A
    token keeps its own (Lark tracks containers for trees only).
    """
    if len(children) != 1:
        return Node(name, children, first, last), first, last
    child = children[0]
    if child is None:
        return None, None, None
    if type(child) is Tok:
        return child, child.start, child.end
    return child, first, last


def _one_regex(lexer: Any) -> str:
    mres = lexer.scanner._mres
    if len(mres) != 1:  # Lark splits past 100 terminals; one pattern is what we read
        raise NotImplementedError("the grammar has too many terminals for one regex")
    return str(mres[0].pattern)


def _flags(lexer: Any) -> int:
    return int(lexer.scanner._mres[0].flags)


def _terminal_regex(lexer: Any, name: str) -> str:
    for t in lexer.terminals:
        if t.name == name:
            return str(t.pattern.to_regexp())
    raise KeyError(name)


def from_lark(tree: Any, base: int) -> Any:
    """Lark's tree (positions relative to `base`) as `Node`s and `Tok`s.

    Iterative: a tree as deep as the input nests (before the builder's
    nesting limit applies) must not exhaust Python's stack.
    """
    def leaf(t: Any) -> Any:
        if is_lark(t, "Token"):
            return Tok(t.type, str(t), base + (t.start_pos or 0), base + (t.end_pos or 0))
        return t  # a `None` placeholder

    def node(t: Any) -> Node:
        meta = t.meta
        if getattr(meta, "empty", True):
            start = end = None
        else:
            start, end = base + meta.start_pos, base + meta.end_pos
        return Node(str(t.data), [], start, end)

    if not is_lark(tree, "Tree"):
        return leaf(tree)
    root = node(tree)
    stack: list[tuple[Any, Node]] = [(tree, root)]
    while stack:
        src, dst = stack.pop()
        for c in src.children:
            if is_lark(c, "Tree"):
                child = node(c)
                stack.append((c, child))
                dst.children.append(child)
            else:
                dst.children.append(leaf(c))
    return root
