"""Tile: a language and toolchain for GPU kernels that cannot race."""

__version__ = "0.1.0"
