"""Editor questions answered from the compiler's data, with no LSP in sight.

`analyze(text, name)` runs the same driver as `tilec check` (parse, names,
types, ownership: whatever stages exist) and keeps what an editor needs: the
diagnostics, the AST of the root file and the type checker's `Program`. The
query functions (`hover`, `definition`, `document_symbols`, `completions`,
`signature_help`) take an `Analysis` and a character offset into its text and
return plain dataclasses that `server.py` converts to LSP.

Invariants:
- Nothing here raises on any input: a document that does not parse or a
  crash inside the compiler still gives an
  `Analysis` (with `internal_error` set for the crash); the queries return
  `None` / `[]` where they have nothing to say.
- Offsets and spans are character offsets (the compiler's `Span` contract);
  conversion to LSP's UTF-16 positions happens only in `server.py`.
- Semantic answers come from `Program` (types, symbols) when the type checker
  ran; where it did not (a syntax error), the answers
  fall back to a purely syntactic scope walk over the AST, so names,
  definitions and completion keep working while the user types.
- Walking the AST is generic (over dataclass fields) rather than a `match`
  over node kinds: finding "the node under the cursor" must keep working for
  node kinds added later; the meaning of a node is then read with `match`.

The parts: `document.py` (`analyze`, `Analysis`, the syntactic scope walk),
`hover.py`, `navigation.py` (definition, references, rename, symbols,
links), `tokens.py` (semantic tokens, inlay hints), `completion.py`
(completion, signature help), `fixes.py` (quick fixes). This module is their
one import for `server.py` and the tests.
"""

from __future__ import annotations

from tilelang.lsp.completion import Completion, SignatureInfo, completions, signature_help
from tilelang.lsp.document import (
    Analysis,
    Binding,
    analyze,
    children,
    enclosing_fn,
    fn_header,
    item_bindings,
    path_at,
    resolve_name,
    visible_bindings,
)
from tilelang.lsp.fixes import QuickFix, quick_fixes
from tilelang.lsp.hover import HoverInfo, hover
from tilelang.lsp.navigation import (
    DocSymbol,
    definition,
    document_links,
    document_symbols,
    references,
    rename_spans,
    workspace_items,
)
from tilelang.lsp.tokens import (
    TOKEN_MODIFIERS,
    TOKEN_TYPES,
    InlayHint,
    SemanticToken,
    inlay_hints,
    semantic_tokens,
)

__all__ = ["TOKEN_MODIFIERS", "TOKEN_TYPES", "Analysis", "Binding", "Completion", "DocSymbol", "HoverInfo", "InlayHint", "QuickFix", "SemanticToken", "SignatureInfo", "analyze", "children", "completions", "definition", "document_links", "document_symbols", "enclosing_fn", "fn_header", "hover", "inlay_hints", "item_bindings", "path_at", "quick_fixes", "references", "rename_spans", "resolve_name", "semantic_tokens", "signature_help", "visible_bindings", "workspace_items"]
