"""Error codes of the `codegen` range (see `codes/__init__.py` for the ranges)."""

from tilelang.diagnostics.codes import define

# Example:
# UNKNOWN_NAME = define("E0101", "unknown-name", "a name that is not defined")
