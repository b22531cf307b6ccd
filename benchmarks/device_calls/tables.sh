# Sourced by a call script (call27.sh, call29.sh, call32.sh-call34.sh, call38.sh-call40.sh) on an H200: the issues'
# tables, most needed first: prefill (issue 15), decode (issue 15), the engine's 4B at 1,024 (issue 17). Reads W (the
# log folder), t0 and pk (packs the logs into $OUT) from the script; the tables are preamble.sh's functions.
prefill_table; decode_table; engine_table
