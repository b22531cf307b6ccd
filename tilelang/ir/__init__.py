"""Tile IR: the SSA IR of one specialised kernel (`nodes`), its builder,
printer, verifier and the lowering from the checked AST."""
