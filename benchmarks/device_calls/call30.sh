#!/usr/bin/env bash
# The 21:07 session's third call (lead), on comb2 6fac0653 = landing L2 (main L1 + hattn5's tickets, hrev20's
# fixes, huser19's bit casts / inverse trig / E0803, hcliff6's int8 ring default and shift_dot work). call29.sh's
# steps (its start was refused twice): on an H200 the issues' tables, then the -m gpu suite, hcliff6 (int8 on the
# tensor cores by default: w8a8 >= 0.8x torch._int_mm expected; blur cols back to >= 3.9x), hattn5 (Y and D: the
# D = 64 S = 1,024 last round by tickets, +1..+2.3 % expected), hcliff5 (wgmma arms).
exec bash benchmarks/device_calls/call29.sh
