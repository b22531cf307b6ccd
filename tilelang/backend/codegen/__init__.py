"""Code generation helpers for GPU IR -> LLVM IR, one module per concern.

- `views.py`: how a distributed layout places a tile's elements on the
  threads, as the code generator needs it (slots per thread, the coordinates
  of each slot, masked lanes, vector chunks, replicas).
- `reduce.py`: reductions (registers, then warp shuffles, then shared memory
  across warps) on blocked layouts.

They emit through the `_Emitter` of `backend/llvm.py` (its `emit`,
`entry_emit`, `barrier`, shared-memory helpers), which dispatches the ops.
"""
