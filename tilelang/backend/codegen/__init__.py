"""Code generation helpers for GPU IR -> LLVM IR, one module per concern.

- `views.py`: how a distributed layout places a tile's elements on the
  threads, as the code generator needs it (slots per thread, the coordinates
  of each slot, masked lanes, vector chunks, replicas).
- `reduce.py`: reductions (registers, then warp shuffles, then shared memory
  across warps) on blocked layouts; `scan.py` the same for scans.
- The emitter's parts, one mixin class each, stacked as one inheritance
  chain (each calls only the parts below it): `core.py` (`EmitterCore`),
  `arith.py`, `memory.py`, `reductions.py`, `mma.py`, `shapes.py`,
  `control.py`, `debug.py`; `backend/llvm.py`'s `_Emitter` sits on top
  (the entry and the dispatch of every op), with `hopper.HopperOps`.
- `sm80.py`, `smem_copy.py`: the pipelines' ops (cp.async rings and
  ldmatrix + mma.sync; the Hopper producer's register copies).

Free functions here take the emitter as their first argument.
"""
