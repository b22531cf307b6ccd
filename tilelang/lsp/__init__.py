"""The Tile language server (`tilec lsp`).

`analysis.py` answers editor questions (diagnostics, hover, definition,
symbols, completion, signature help) from the compiler's own data: the
driver's diagnostics, the parser's AST and the type checker's `Program`. It
knows nothing of LSP. `server.py` is the pygls server that converts between
LSP and `analysis`.

Architecture invariant: `tilelang/lsp/server.py` is the only module of
tilelang that imports pygls or lsprotocol, and nothing outside `tilelang/lsp/`
imports it except `tilec lsp` (which calls `serve()`).
"""
