"""Intrinsic operations of Tile: the one signature table (`signatures.py`).

The interpreter and the backend key their own implementation tables by the
same operation names; a test checks that none lacks an entry.
"""
