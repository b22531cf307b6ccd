#!/bin/bash
# hrev16 (hostile review, round 16): the GPU check of what this round ran on
# the interpreter and llsim only. One step, ~20-40 s on a warm H100/H200:
#  1. tests/run/tile_index_overflow.tile on the GPU: constant tile indices
#     whose offset (index * tile) passes i32 read zeros / the padding.
#     Expected: "15726592.0" then "0.0" (the interpreter's and llsim sm_80 /
#     sm_90a's lines; before the fix the offset wrapped and read tile 1:
#     18868224.0 and 2048.0).
#  2. tests/run/untyped_shift_in_wide_context.tile and
#     typed_shift_let_reads_wrapped.tile on the GPU: i64 shifts in kernels and
#     a typed i16 shift's value. Expected: "17179869191 17179869191" and
#     "22530 22529 -22528 22529" (the interpreter's).
# Prints one line a program: its stdout, then OK or DIFFERS.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # (keeps the wheels the preamble put on it)
check() {
    got=$(timeout 60 python3 -m tilelang run --device gpu "$1" 2>&1 | tr '\n' ' ')
    if [ "$got" = "$2 " ]; then echo "$1: $got OK"; else echo "$1: $got DIFFERS (want $2)"; fi
}
check tests/run/tile_index_overflow.tile "15726592.0 0.0"
check tests/run/untyped_shift_in_wide_context.tile "17179869191 17179869191"
check tests/run/typed_shift_let_reads_wrapped.tile "22530 22529 -22528 22529"
