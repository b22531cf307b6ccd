"""`tilec repl`: an interactive Tile session.

Two layers, so the core is testable without a terminal:

- `ReplSession.feed(text) -> ReplOutput` holds the session and calls the
  driver and the host evaluator; `ReplSession.completions(text)` is the
  completion logic.
- `main()` wires prompt_toolkit to it (multi-line input, history, Tile syntax
  highlighting, completion, meta-commands); when stdin is not a terminal it
  reads the input and feeds it entry by entry, so `tilec repl < script` works.

How a session runs. An entry holds items (`fn`, `kernel fn`, `const`, `use`)
and host statements, optionally ending in an expression whose value is shown.

- Checking: the session is one synthesised program: every accepted item, then
  a `fn main()` holding every accepted statement in order. Each entry is
  checked as part of that whole program, so the type and ownership checkers
  see everything, exactly as in a file: a `.launch()` in one entry keeps its
  borrows until `.wait()` in a later one. The only error tolerated is the
  ownership checker's "handle dropped at the end of `main`" (E0308 pointing at
  the synthesised closing brace): that handle is simply still in flight,
  unless a `let` of its name hid it (nothing could wait for it after that entry).
- Running: only the new entry's statements run, in the host evaluator
  (`HostEvaluator.run_statements`), against `env`, the values of the
  variables bound so far. One device and one `Runtime` live for the whole
  session, so tensors stay in device memory and compiled kernels are reused.
- Failure: an entry that does not parse or check is dropped whole: nothing
  ran. An entry that fails at run time is dropped too and its bindings are
  rolled back (the names mean what they meant before the entry, so the
  checker's view and the values never disagree); what it already did stays
  done: lines it printed, tensor elements a kernel or `store` wrote.
- Redefinition: an item with the name of an earlier one (or a `use` of one
  item by that name) replaces it for later entries. The earlier statements
  keep meaning what they meant when they ran: the old item stays in the
  program under a hidden name (`sq__1`), and the earlier statements (and the
  old item's references to itself) are rewritten to that name; operations,
  handles and graphs already made keep naming the old kernel, and compiled
  kernels are dropped. Other earlier items refer to the name, so they see the
  new item (as in Python); if they no longer check, the entry is rejected. A
  replaced `use` is dropped (earlier statements then see the new item).
- Cost: checking grows with the session (about 1 ms per earlier statement);
  running does not.

Diagnostics point into the entry that caused them: each entry is registered in
the display `SourceMap` as `<repl-N>`, and spans into the synthesised program
are mapped back to it.

Invariants: prompt_toolkit is imported only by `main()`; rich only to colour
a shown value when colour is on; the core imports the driver and the host
runtime lazily, per entry. The session never raises on user input: a crash
inside tilec is reported as an internal error and the session goes on.

The parts: `session.py` (`ReplSession.feed`), `core.py` (the session's state,
entries, redefinition, devices), `synth.py` (the synthesised program, spans
mapped back), `values.py` (shown values), `commands.py` (`:commands`),
`complete.py` (completion), `terminal.py` (`main`, prompt_toolkit).
"""

from __future__ import annotations

from tilelang.repl.commands import HELP
from tilelang.repl.core import ReplOutput
from tilelang.repl.session import ReplSession
from tilelang.repl.terminal import main

__all__ = ["HELP", "ReplOutput", "ReplSession", "main"]
