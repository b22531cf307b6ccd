"""Error codes of the `runtime` range (see `codes/__init__.py` for the ranges)."""

from tilelang.diagnostics.codes import define

# Example:
# UNKNOWN_NAME = define("E0101", "unknown-name", "a name that is not defined")

# -- device (F1: the kernel interpreter) -------------------------------------
DEVICE_ASSERT = define(
    "E0700", "device-assert-failed", "a device `assert` inside a kernel failed")
