"""Syntax: the parser for `.tile` text, the surface AST, and its printers.

Entry points: `tilelang.syntax.parser.parse` (and `parse_repl`, `parse_expr`,
`is_incomplete`), `tilelang.syntax.printer.format_ast`. Nothing is imported
here, so `import tilelang.syntax.ast` does not load Lark.
"""
