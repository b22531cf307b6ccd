#!/usr/bin/env bash
# hrev17 (hostile review, round 17): the run-time tile index guard on a GPU. One step, <= ~120 s warm.
#  1. tests/run/tile_index_runtime_overflow.tile on the GPU, with the guard (default) and without it
#     (TILEC_INDEX_GUARD=0, the lowering as before hrev17). Expected: "157265920.0 0 114 497.0 1.0" (the
#     interpreter's and llsim sm_80 / sm_90a's lines) and, without the guard, "174531070.0 66 114 497.0 497.0"
#     (the index times the tile wrapped in i32 and read tile 1 / tiles 0-2 / a group's tile 0: what every engine
#     did before). (Call 17 ran the first three lines' version: OK both ways, ON/OFF 0.9994.)
#  2. The cost, where the guard changed tuned kernels' PTX: 49 of benchmarks/ptx_sha.py's 126 (the decode
#     attention's split kernels: their key loop starts at a share of a run-time length; the LLM engine's GEMVs,
#     RoPE/KV-append, sampling and combine kernels: indices from `layer`, `pos` and other scalar parameters).
#     Each changed index costs one compare and one select on a scalar (`setp` + `selp`), once a load, in
#     memory-bound kernels; the 77 others (prefill attention, every GEMM/grid/`for`-over-num_tiles index)
#     are byte-identical. decode_ab.py, Qwen3-4B at 1,024 positions, two processes: guard OFF then ON (the
#     default), each the default plan twice (in-process spread). Expected: ON within the OFF run's
#     spread, |ratio - 1| <= 1 % (the guard adds ~2 scalar instructions a decode kernel's block), the same
#     tokens in both (it changes no value below 2^31). A loss above ~1.5 % in both rows: tell hrev17's
#     successor which kernel (STEP=attn times the decode attention alone).
# Prints step 1's two lines (OK / DIFFERS), then the decode_ab rows of each process and the ratio ON/OFF.
# usage on the device machine, from the checkout's root:  bash benchmarks/hrev17_device.sh
# (2026-12-06 14:55: `TILEC_INDEX_GUARD=0`, the unguarded lowering, was removed after call 17's A/B
# - the program's unguarded line and decode 4B ON/OFF 0.9994 are in RESULTS.md - so this script now runs
# step 1's guarded check only.)
set -uo pipefail
. benchmarks/device_env.sh hrev17
check() {  # want env...
    local want=$1; shift
    got=$(env "$@" timeout 60 python3 -m tilelang run --device gpu tests/run/tile_index_runtime_overflow.tile 2>&1 \
          | grep -v "^warning\|^ \|^[0-9]* |\|^\.\.\.\|^$\|warnings emitted" | tr '\n' ' ')
    if [ "$got" = "$want " ]; then echo "guard ${*:-on}: $got OK"; else echo "guard ${*:-on}: $got DIFFERS (want $want)"; fi
}
check "157265920.0 0 114 497.0 1.0"
pack
