"""What the tests of tests/user/programs share: running a program on the
interpreter (or, with `run.make_device` patched, the NVPTX simulator),
comparing two runs' tensors, assembling a program's PTX with ptxas, and
`program_suite`, the four tests every `test_user_programs*.py` module runs
over its own table of NumPy checks."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import clirunner
import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from tilelang.diagnostics.model import Diagnostic, TileError

REPO = Path(__file__).resolve().parents[2]
_MAKE_DEVICE = run.make_device  # (the interpreter's: `program_suite` keeps only its runs)
DIR = Path(__file__).parent / "programs"

#: a program's NumPy check: its tensors (by variable, see `program_tensors`) and what it printed
Check = Callable[[dict[str, np.ndarray], str], None]


def run_program(prog: str | Path) -> tuple[dict[str, np.ndarray], str]:
    """The program's tensors (by variable) and what it printed: `prog` a name in
    programs/ or a path."""
    out = io.StringIO()
    ex = run.execute(str(prog if isinstance(prog, Path) else DIR / f"{prog}.tile"), "cpu", out=out)
    return program_tensors(ex), out.getvalue()


def simulated_program(prog: str | Path, arch: str = "sm_90a") -> dict[str, np.ndarray]:
    """The program's tensors with its launches run by llsim (the NVPTX simulator) for `arch` in place of a
    GPU: `prog` a name in programs/ or a path."""
    backend = str(Path(__file__).resolve().parents[1] / "backend")
    if backend not in sys.path:
        sys.path.insert(0, backend)
    from llsim import sim_runtime_device

    orig = run.make_device
    try:
        run.make_device = lambda choice, out: sim_runtime_device(arch, lambda s: out.write(s + "\n"))
        ex = run.execute(str(prog if isinstance(prog, Path) else DIR / f"{prog}.tile"), "gpu", out=io.StringIO())
        return program_tensors(ex)
    finally:
        run.make_device = orig


def assert_same_tensors(got: dict[str, np.ndarray], want: dict[str, np.ndarray], tol: float) -> None:
    """Integers and bools exactly, floats within `tol` (NaN where NaN)."""
    for k, w in want.items():
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(got[k], w, err_msg=k)
        else:
            np.testing.assert_allclose(got[k].astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                                       err_msg=k, equal_nan=True)


def tilec(*argv: str) -> subprocess.CompletedProcess[str]:
    """`tilec ARGV...` run in this process (`clirunner.run`): the status,
    output and files of the subprocess without a new interpreter's imports a
    call; an exception escaping the CLI fails the test with its traceback."""
    return clirunner.run(*argv)


def tilec_at_root(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`tilec ARGS` from the checkout's root, as a user types it there: in this
    process (`tilec`) unless it reads `stdin` (the REPL sessions, in a new
    interpreter as a user's)."""
    if stdin is None:
        with contextlib.chdir(REPO):
            return tilec(*args)
    return subprocess.run([sys.executable, "-m", "tilelang", *args], cwd=REPO, input=stdin, capture_output=True,
                          text=True, timeout=300)


def emit_ptx(name: str, arch: str, out: Path) -> subprocess.CompletedProcess[str]:
    """`tilec emit --stage ptx` of the program into `out` (one file a kernel), in this process (`tilec`)."""
    return tilec("emit", str(DIR / f"{name}.tile"), "--stage", "ptx", "--arch", arch, "-o", str(out / "k.ptx"))


def assemble_all(out: Path, arch: str, what: object) -> None:
    """Every .ptx file in `out` assembles with ptxas for `arch`."""
    files = sorted(out.glob("*.ptx"))
    assert files, what
    for f in files:
        r = subprocess.run(["ptxas", "-arch", arch, "-o", str(out / "k.o"), str(f)], capture_output=True, text=True)
        assert r.returncode == 0, (what, f.name, r.stderr)


def gpu_tensors_match(src: Path, want: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], str]:
    """Run the program at `src` on the GPU and compare `main`'s tensors with the interpreter's `want`: f64 within
    5e-16 (NaNs equal), every other type bit for bit. Returns the GPU's tensors and what it printed."""
    out = io.StringIO()
    ex = run.execute(str(src), "gpu", out=out)
    assert ex.device.kind == "gpu"
    got = program_tensors(ex)
    for k, w in want.items():
        if w.dtype == np.float64:
            np.testing.assert_allclose(got[k], w, rtol=5e-16, atol=0, equal_nan=True, err_msg=k)
        else:
            np.testing.assert_array_equal(got[k], w, err_msg=k)
    return got, out.getvalue()


def program_tensors(ex: run.Execution) -> dict[str, np.ndarray]:
    """`main`'s tensors by variable; a tuple of tensors (what a host function
    returned) gives `name.0`, `name.1`, ..."""
    out: dict[str, np.ndarray] = {}
    for k, v in ex.main_locals.items():
        for j, t in enumerate(v) if isinstance(v, tuple) else [(None, v)]:
            if hasattr(t, "numpy"):
                out[k if j is None else f"{k}.{j}"] = np.asarray(t.numpy()).copy()
    return out


#: programs whose simulation is `heavy` (TILE_SLOW=1), each with the default-simulated programs that cover it:
#: every arc (line to line) of tilelang/backend its kernels' GPU compile takes, for each arch its test simulates,
#: and every LLVM instruction form (opcode, types, intrinsic; registers and numbers left out) of its kernels is
#: one a covering program's compile takes or has too (measured 2026-12-05 by tests/user/sim_cover.py). Their
#: interpreter runs and PTX stay in the default run; programs under 1.5 s of simulation and those whose point is
#: the values (NaN, infinities, number and math edges) stay whole.
SIM_COVERED: dict[str, tuple[str, ...]] = {
    "r05_persistent_matmul": ("r18_std_attention_odd", "s07_stencil_halo", "p04_walk"),
    "r03_triton_layernorm_bwd": ("p11_std_llm", "z12_asymmetric_u8_quant", "e08_host_modules"),
    "p08_host_loops": ("m10_power_iteration_graph", "e07_generic_saturate_four_types"),
    "r01_triton_softmax": ("r14_argmax_topk", "r19_std_llm_prefill", "p04_walk", "r20_std_nn_odd"),
    "r11_two_pass_reduce": ("r14_argmax_topk", "p11_std_llm", "p01_nan_inf"),
    "r09_batched_transpose": (
        "r18_std_attention_odd", "h01_store_then_load", "a05_maxpool3x3_indices",
    ),
    "h03_stores_in_a_loop": ("r18_std_attention_odd", "s07_stencil_halo", "r19_std_llm_prefill", "h01_store_then_load"),
    "s10_online_softmax": (
        "k04_softmax_axis0_welford", "j02_sliding_window_attention", "h01_store_then_load", "f05_mandelbrot",
    ),
    "p07_std_nn": ("r18_std_attention_odd", "r20_std_nn_odd", "p16_math_edges", "r04_triton_matmul_epilogue"),
    "u01_saxpy_tail": ("r18_std_attention_odd", "h01_store_then_load", "r04_triton_matmul_epilogue"),
    "r02_triton_layernorm": ("n10_moe_top2_router", "t02_rmsnorm_backward", "r14_argmax_topk"),
    "u04_axes": ("p11_std_llm", "l03_topk_ties", "e07_generic_saturate_four_types"),
    "s02_column_argmax_walk": ("p11_std_llm", "l03_topk_ties", "e07_generic_saturate_four_types"),
    "r15_add_rmsnorm": ("n10_moe_top2_router", "r19_std_llm_prefill", "r20_std_nn_odd"),
    # (2026-12-06, hci: sim_cover.py over every test_user_programs module; m10_power_iteration_graph, covered
    # too, stays: the only default simulation of a `graph { }` replayed on the simulated device)
    "g03_life_torus": (
        "o10_masked_mean_pool_cosine", "f05_mandelbrot", "x07_conv_transpose1d_stride2", "s09_histogram_atomics",
        "r18_std_attention_odd", "g13_cummax_cummin", "g10_bilinear_upsample", "o11_bucketize_coo_spmm",
        "f06_u8_image", "j06_int_div_runtime",
    ),
    "a10_csr_spmm_host_built": ("p11_std_llm", "a07_int64_bool_reductions"),
    "g02_dft_matmul": (
        "o10_masked_mean_pool_cosine", "r16_rotary", "a02_scaled_mm_rowwise_bf16", "m05_nbody_leapfrog",
        "e08_host_modules", "r18_std_attention_odd",
    ),
    # (the same over the simulations' own costs alone, -n 0: tests/user/sim_cover.py; seconds alone)
    "x10_clip_contrastive_loss": (  # 3.1 s
        "z11_t5_relative_bias_attention", "k04_softmax_axis0_welford", "h01_store_then_load",
        "n07_mamba_decode_step", "e08_host_modules", "f09_splitk_atomic_ragged", "j02_sliding_window_attention",
    ),
    "a01_gqa_attention_backward_dq": (  # 2.9 s
        "a13_gqa_attention_backward_dkdv", "x09_int4_group_quant_pack", "j02_sliding_window_attention",
        "x07_conv_transpose1d_stride2",
    ),
    "m04_sinkhorn": (  # 2.8 s
        "r18_std_attention_odd", "h04_atomic_extremes_nan_signed_zero", "g05_f64_trsm", "w01_bool_reductions",
        "a09_amp_adamw_skip_step", "f05_mandelbrot",
    ),
    "t01_rope_backward": (  # 2.7 s
        "r18_std_attention_odd", "m05_nbody_leapfrog", "p11_std_llm", "a07_int64_bool_reductions",
    ),
    "f04_stream_compaction": (  # 2.7 s
        "n10_moe_top2_router", "r18_std_attention_odd", "w01_bool_reductions", "m05_nbody_leapfrog",
        "f08_odd_tiles_scans", "f05_mandelbrot",
    ),
    "f11_merge_sort_passes": (  # 2.0 s
        "r18_std_attention_odd", "f01_bitonic_argsort", "l01_three_phase_scan", "e07_generic_saturate_four_types",
    ),
    "a04_batched_inverse_gauss_jordan": (  # 1.9 s
        "r18_std_attention_odd", "g05_f64_trsm", "a05_maxpool3x3_indices", "l03_topk_ties",
    ),
    "x04_batched_tridiagonal": ("m05_nbody_leapfrog", "r18_std_attention_odd", "t15_batched_expm"),  # 1.8 s
    "m06_select_kth_bisect": (  # 1.6 s
        "m05_nbody_leapfrog", "i14_isqrt_newton_generic", "r18_std_attention_odd", "k03_segmented_identities",
        "l03_topk_ties", "a07_int64_bool_reductions", "f06_u8_image", "o11_bucketize_coo_spmm",
    ),
    "o02_rmsnorm_matmul": (  # 1.5 s
        "r18_std_attention_odd", "m05_nbody_leapfrog", "e08_host_modules", "f12_joint_histogram_queue",
        "j11_int8_gemm_tensor_core_shapes",
    ),
    "t05_ell_spmv": (
        "r18_std_attention_odd", "m05_nbody_leapfrog", "m02_edit_distance_rows", "f12_joint_histogram_queue",
    ),  # 1.5 s
    "m03_selective_scan": (  # 1.5 s
        "r18_std_attention_odd", "y11_chebyshev_clenshaw", "p11_std_llm", "n07_mamba_decode_step",
    ),
    # (2026-12-07 17:16 session, hci5: sim_cover.py over every module again, `MIN_COST` 0.15 s of process CPU
    # (-n 0, this session's run; the lead's call): the programs below 1.5 s it left whole; CPU-s alone)
    "k08_host_shrinking_launches": (  # 1.05 s
        "r18_std_attention_odd", "r19_std_llm_prefill", "f05_mandelbrot", "f06_u8_image",
    ),
    "r06_grouped_gemm": ("r04_triton_matmul_epilogue", "o12_swiglu_bf16"),  # 0.46 s
    "y02_welford_merge": (  # 0.34 s
        "p11_std_llm", "z13_safeguarded_newton_cubic", "r14_argmax_topk", "k04_softmax_axis0_welford",
        "g10_bilinear_upsample", "a02_scaled_mm_rowwise_bf16",
    ),
    "m09_batched_qr_mgs": (  # 0.33 s
        "r18_std_attention_odd", "g05_f64_trsm", "l01_three_phase_scan", "i14_isqrt_newton_generic",
        "m02_edit_distance_rows",
    ),
    "k10_packed_shift_gemv": (  # 0.42 s
        "x09_int4_group_quant_pack", "r18_std_attention_odd", "s04_int_types_generic", "h01_store_then_load",
        "k05_gemm_k_tail", "x08_haar_wavelet_2d",
    ),
    "k02_half_bf16_edges": (  # 0.29 s
        "r18_std_attention_odd", "l03_topk_ties", "e07_generic_saturate_four_types", "a09_amp_adamw_skip_step",
    ),
    "y04_beam_search_step": (  # 0.24 s
        "r18_std_attention_odd", "n10_moe_top2_router", "z11_t5_relative_bias_attention", "x08_haar_wavelet_2d",
        "a07_int64_bool_reductions", "a02_scaled_mm_rowwise_bf16",
    ),
    "j08_transpose_pad_masked_fill": (  # 0.23 s
        "n07_mamba_decode_step", "o05_cross_attention_padding", "o10_masked_mean_pool_cosine", "f05_mandelbrot",
        "f02_softmax_backward",
    ),
    "r12_histogram_onehot": (  # 0.25 s
        "o11_bucketize_coo_spmm", "x13_float_bit_tricks", "x09_int4_group_quant_pack", "f05_mandelbrot",
        "t02_rmsnorm_backward",
    ),
    "k06_stencil3d_7point": (  # 0.23 s
        "s07_stencil_halo", "r18_std_attention_odd", "a05_maxpool3x3_indices", "f05_mandelbrot",
    ),
    "y03_gated_rmsnorm": (
        "r18_std_attention_odd", "r19_std_llm_prefill", "x08_haar_wavelet_2d", "e08_host_modules",
    ),  # 0.18 s
    "p15_walk_edges": (  # 0.19 s
        "p04_walk", "h01_store_then_load", "k03_segmented_identities", "r18_std_attention_odd",
        "k09_narrow_scans_products", "r22_collatz_loops",
    ),
    "z10_gelu_backward_shapes": (  # 0.67 s
        "r18_std_attention_odd", "r20_std_nn_odd", "e07_generic_saturate_four_types",
    ),
    "j03_grouped_gemm_moe": (  # 0.30 s
        "r18_std_attention_odd", "r17_int8_gemm", "f12_joint_histogram_queue", "a09_amp_adamw_skip_step",
        "a02_scaled_mm_rowwise_bf16",
    ),
    "g12_embedding_grad": (  # 0.19 s
        "o11_bucketize_coo_spmm", "p11_std_llm", "f05_mandelbrot", "f12_joint_histogram_queue",
        "h01_store_then_load",
    ),
    "z14_hamming_knn_popcount": (  # 0.65 s
        "r18_std_attention_odd", "k01_unsigned_past_signed", "m01_bellman_ford", "m05_nbody_leapfrog",
        "a02_scaled_mm_rowwise_bf16",
    ),
    "y09_gumbel_max_sampling": (  # 0.61 s
        "p11_std_llm", "f07_bit_tricks", "g06_llm_block_api", "a02_scaled_mm_rowwise_bf16", "l01_three_phase_scan",
        "r07_dropout_hash",
    ),
    "m07_pixel_shuffle": ("x08_haar_wavelet_2d", "j02_sliding_window_attention", "l01_three_phase_scan"),  # 0.15 s
    "j05_embedding_bag": ("x09_int4_group_quant_pack", "p11_std_llm", "w01_bool_reductions"),  # 0.15 s
    "l06_bits_hashes_saturation": (  # 0.33 s
        "r18_std_attention_odd", "i14_isqrt_newton_generic", "f07_bit_tricks", "s04_int_types_generic",
        "f08_odd_tiles_scans", "k01_unsigned_past_signed", "r08_masked_tail", "j02_sliding_window_attention",
        "u15_number_edges", "f10_splitmix64", "g07_int8_quantise_rows", "y06_bf16_round_by_bits",
    ),
    # (2026-12-07 20:07 session, hci6: sim_cover.py over every module again, costs from a cold `-n 2` run's
    # per-test CPU under a load of 7-10, ~2x a quiet run's (`benchmarks/suite_cpu.py`): the programs it names at
    # 0.3 s or more of that, less those whose PTX tests are not default (PTX_COVERED's z12, z01, t07, z08, t08;
    # i02's and e08's modules' `heavy_ptx`: the simulation is their kernels' one default GPU compile) and those
    # whose point is values (n12's overflow skip, a11's and q09's compensated sums)
    "z18_odd_shape_tile_algebra": (  # 0.8 s
        "u16_odd_shapes", "r18_std_attention_odd", "l01_three_phase_scan", "f08_odd_tiles_scans",
        "e07_generic_saturate_four_types", "f12_joint_histogram_queue", "g05_f64_trsm", "r22_collatz_loops",
    ),
    "z03_gae_reverse_scan": (  # 0.5 s
        "m05_nbody_leapfrog", "h01_store_then_load", "r18_std_attention_odd", "x13_float_bit_tricks",
    ),
    "f03_int4_gemv": (  # 0.4 s
        "x09_int4_group_quant_pack", "r18_std_attention_odd", "m01_bellman_ford", "a02_scaled_mm_rowwise_bf16",
        "a09_amp_adamw_skip_step",
    ),
    "v09_fused_add_rmsnorm_bf16_wide": (  # 0.3 s
        "t02_rmsnorm_backward", "r19_std_llm_prefill", "m05_nbody_leapfrog", "r18_std_attention_odd",
        "a07_int64_bool_reductions",
    ),
    # (2026-12-07 23:05 session, htier2: sim_cover.py's weighted cover over every module, costs from this
    # session's quiet run of main 8a91e0b4 (/work/coord/base): the fewest seconds of default simulation that still
    # take every arc and form the default and the covered programs take; the value programs and those whose PTX
    # tests are not default stay; n03_group_norm_fwd_bwd and r10_bmm_bf16 left this table: they alone take arcs of
    # codegen/reduce.py and of pipeline_helps.py / pipeline_sm80.py, which the code gained since their covers were
    # measured, so they are simulated by default again)
    "p09_std_attention": ("r18_std_attention_odd",),  # 3.4 s
    "g01_pooling": (  # 1.9 s
        "r18_std_attention_odd", "x06_adaptive_avg_pool_uneven", "x08_haar_wavelet_2d", "s07_stencil_halo",
        "g10_bilinear_upsample", "e08_host_modules", "j10_int8_conv2d_requant",
    ),
    "r23_splitk_last_block": (  # 1.5 s
        "r19_std_llm_prefill", "k05_gemm_k_tail", "r18_std_attention_odd", "p11_std_llm",
        "a13_gqa_attention_backward_dkdv",
    ),
    "g08_viterbi": (  # 1.3 s
        "r18_std_attention_odd", "p11_std_llm", "f01_bitonic_argsort", "j10_int8_conv2d_requant",
        "y11_chebyshev_clenshaw", "h01_store_then_load", "e07_generic_saturate_four_types", "f05_mandelbrot",
    ),
    "g04_batchnorm_chan": (  # 1.0 s
        "m05_nbody_leapfrog", "g05_f64_trsm", "n10_moe_top2_router", "a02_scaled_mm_rowwise_bf16",
    ),
    "o07_segment_reduce_sorted": (  # 1.0 s
        "n10_moe_top2_router", "m08_q15_fir", "h04_atomic_extremes_nan_signed_zero", "a07_int64_bool_reductions",
        "p04_walk", "f12_joint_histogram_queue",
    ),
    "k07_batched_cholesky_f64": (  # 0.9 s
        "r18_std_attention_odd", "q15_gauss_legendre_f64", "j04_rope_offset_interleaved", "m05_nbody_leapfrog",
        "t15_batched_expm", "i14_isqrt_newton_generic", "g05_f64_trsm",
    ),
    "g11_causal_conv1d_generic": (  # 0.7 s
        "r18_std_attention_odd", "r19_std_llm_prefill", "h01_store_then_load", "a09_amp_adamw_skip_step",
        "f06_u8_image",
    ),
    "o09_groupnorm_nhwc": ("r18_std_attention_odd", "t08_focal_bce_logits", "e08_host_modules"),  # 0.6 s
    "s06_norms_odd_widths": (  # 0.6 s
        "r18_std_attention_odd", "j09_log_softmax_xent_grad", "m05_nbody_leapfrog", "f02_softmax_backward",
        "s07_stencil_halo", "a02_scaled_mm_rowwise_bf16",
    ),
    "p05_atomics_last": (  # 0.5 s
        "r18_std_attention_odd", "f05_mandelbrot", "h04_atomic_extremes_nan_signed_zero", "f09_splitk_atomic_ragged",
        "g13_cummax_cummin", "h01_store_then_load", "f12_joint_histogram_queue",
    ),
    "g09_logcumsumexp": (  # 0.3 s
        "h01_store_then_load", "z11_t5_relative_bias_attention", "k04_softmax_axis0_welford",
        "j02_sliding_window_attention", "l01_three_phase_scan",
    ),
    "p12_shapes": (  # 0.2 s
        "u16_odd_shapes", "x09_int4_group_quant_pack", "p10_mixed_shifts", "f08_odd_tiles_scans", "f06_u8_image",
        "e07_generic_saturate_four_types", "u15_number_edges",
    ),
    "p02_mixed_precision": (  # 0.2 s
        "g13_cummax_cummin", "r18_std_attention_odd", "f06_u8_image", "a09_amp_adamw_skip_step",
        "g07_int8_quantise_rows", "s04_int_types_generic",
    ),
    "s03_scans": (  # 0.2 s
        "m02_edit_distance_rows", "p11_std_llm", "l01_three_phase_scan", "u15_number_edges", "g05_f64_trsm",
        "f08_odd_tiles_scans", "a02_scaled_mm_rowwise_bf16", "h01_store_then_load", "j06_int_div_runtime",
    ),
    "v36_checked_gather_index_add": (  # 0.2 s
        "o11_bucketize_coo_spmm", "w06_u64_hash_partitioning", "k03_segmented_identities", "f05_mandelbrot",
        "r18_std_attention_odd",
    ),
}
assert not {c for cs in SIM_COVERED.values() for c in cs} & set(SIM_COVERED)  # a covering program is simulated


#: programs whose default PTX tests (`test_the_ptx_assembles`) are `heavy` (TILE_SLOW=1), each with the programs
#: whose default PTX tests cover it: every arc (line to line) of tilelang/backend its tests' emissions take, every
#: LLVM instruction form each hands to NVPTX and every PTX form it gets back (by arch), and every PTX form its
#: tests assemble (by ptxas's arch) is one the covering programs' default tests take or have too (registers,
#: labels and numbers left out; measured 2026-12-07 by tests/user/ptx_cover.py). Each is simulated in the default
#: run, so its kernels' lowering and LLVM emission stay in a default test of its own; only NVPTX and ptxas are
#: left to the cover. A fresh CI runner compiles every kernel of the default run (an empty compile cache):
#: these repeated the others' paths at ~0.1-0.3 s of LLVM -> PTX and ptxas a test. Programs a test's
#: `ptx_refused` names keep their tests.
PTX_COVERED: dict[str, tuple[str, ...]] = {
    # (hci5, 2026-12-07 17:16 session: the 14 programs here whose simulation went to `SIM_COVERED` left this table,
    # so that each keeps a default test of its own kernels' GPU compile: their PTX tests, ~2.6 CPU-s cold)
    "y11_chebyshev_clenshaw": (  # 0.44 s
        "o03_rope_kv_cache_attention", "x01_nms_boxes", "a05_maxpool3x3_indices", "x09_int4_group_quant_pack",
        "x14_quaternion_slerp", "x04_batched_tridiagonal",
    ),
    "x05_morton_codes": (  # 0.40 s
        "x09_int4_group_quant_pack", "s03_scans", "r18_std_attention_odd", "k01_unsigned_past_signed",
        "a01_gqa_attention_backward_dq", "p10_mixed_shifts", "x13_float_bit_tricks", "f10_splitmix64",
        "f07_bit_tricks",
    ),
    "z12_asymmetric_u8_quant": (  # 0.29 s
        "r18_std_attention_odd", "g07_int8_quantise_rows", "x01_nms_boxes", "x14_quaternion_slerp",
        "p02_mixed_precision",
    ),
    "r16_rotary": (  # 0.26 s
        "j04_rope_offset_interleaved", "g06_llm_block_api", "y05_hog_cells", "t01_rope_backward",
        "z13_safeguarded_newton_cubic", "j10_int8_conv2d_requant",
    ),
    "s08_gather_scatter": ("x11_gat_edge_softmax", "s03_scans", "c04_radix_pass", "j10_int8_conv2d_requant"),  # 0.26 s
    "r21_odd_shape_ops": (  # 0.25 s
        "r18_std_attention_odd", "z18_odd_shape_tile_algebra", "a07_int64_bool_reductions",
        "k03_segmented_identities", "t10_batched_lu_pivoting",
    ),
    "x08_haar_wavelet_2d": (  # 0.25 s
        "r18_std_attention_odd", "x09_int4_group_quant_pack", "o06_stockham_fft", "a03_gaussian_blur_separable",
        "o10_masked_mean_pool_cosine", "k10_packed_shift_gemv", "y04_beam_search_step",
    ),
    "f02_softmax_backward": (  # 0.20 s
        "o03_rope_kv_cache_attention", "g05_f64_trsm", "y04_beam_search_step", "b04_ragged_softmax", "g08_viterbi",
    ),
    "z08_multiclass_hinge": (  # 0.16 s
        "x11_gat_edge_softmax", "p11_std_llm", "p12_shapes", "r20_std_nn_odd", "m01_bellman_ford",
    ),
    "z16_ragged_mean_pool_early_exit": (  # 0.16 s
        "r03_triton_layernorm_bwd", "p11_std_llm", "a12_alibi_softcap_attention", "p15_walk_edges",
        "m06_select_kth_bisect",
    ),
    "z19_host_functions_power_method": (  # 0.14 s
        "z05_gmm_estep_mstep", "x01_nms_boxes", "j01_int_f64_products", "o01_fused_mlp_gelu",
    ),
    "t15_batched_expm": (  # 0.14 s
        "k07_batched_cholesky_f64", "m08_q15_fir", "g05_f64_trsm", "c06_scalar_params_every_type", "g08_viterbi",
        "k10_packed_shift_gemv", "c02_bmm_bias_gelu_bf16", "j04_rope_offset_interleaved", "y07_lorenz_rk4_f64",
        "a04_batched_inverse_gauss_jordan",
    ),
    "w01_bool_reductions": (  # 0.14 s
        "x02_histogram_equalization_u8", "a06_top_p_bisection", "m06_select_kth_bisect", "k03_segmented_identities",
        "a08_conjugate_gradient_poisson", "b09_kmeans_step", "r14_argmax_topk", "a01_gqa_attention_backward_dq",
        "f05_mandelbrot",
    ),
    "t07_rigid_transforms": (  # 0.14 s
        "x11_gat_edge_softmax", "r18_std_attention_odd", "g10_bilinear_upsample", "a03_gaussian_blur_separable",
    ),
    "t02_rmsnorm_backward": (  # 0.13 s
        "m05_nbody_leapfrog", "x02_histogram_equalization_u8", "o03_rope_kv_cache_attention",
    ),
    "z06_kronecker_generic": (  # 0.13 s
        "p11_std_llm", "w02_std_attention_shapes", "z18_odd_shape_tile_algebra", "f03_int4_gemv",
    ),
    "s01_grid3d_last_block": ("r18_std_attention_odd", "g04_batchnorm_chan", "r24_device_print"),  # 0.13 s
    "a11_kahan_sum": ("u10_flash", "p11_std_llm"),  # 0.12 s
    "z01_bsr_spmm": ("o04_moe_topk_routing", "o03_rope_kv_cache_attention", "a05_maxpool3x3_indices"),  # 0.12 s
    "t08_focal_bce_logits": (  # 0.10 s
        "x11_gat_edge_softmax", "o13_logreg_sgd_graph", "r14_argmax_topk", "f05_mandelbrot",
        "a09_amp_adamw_skip_step",
    ),
    "m10_power_iteration_graph": (  # 0.10 s
        "x02_histogram_equalization_u8", "p11_std_llm", "b09_kmeans_step", "x01_nms_boxes", "a09_amp_adamw_skip_step",
    ),
    "r13_carry_scan": (  # 0.09 s
        "t12_integral_image_queries", "k07_batched_cholesky_f64", "h01_store_then_load", "x13_float_bit_tricks",
    ),
    "r08_masked_tail": ("k01_unsigned_past_signed", "a01_gqa_attention_backward_dq"),  # 0.05 s
}
assert not {c for cs in PTX_COVERED.values() for c in cs} & set(PTX_COVERED)  # a covering program is assembled


#: programs whose sm_80 PTX is not their sm_90a PTX but for the `.target` line (their own instructions on
#: Hopper, or refused on sm_80); for the others the sm_90a test checks that it is, and ptxas for sm_80 is `heavy`
# (u07_gemm, r04_triton_matmul_epilogue, r06_grouped_gemm and b08_bf16_mlp_epilogues left it on 2026-12-06:
# their 32-row GEMM tiles, which the Hopper pipeline refuses, take sm_80's cp.async ring on sm_90a too,
# `pipeline_sm80.fallback_enabled`, where they had run mma.sync with no pipeline; b08 came back the same day:
# its 32-row tiles are padded onto the Hopper pipeline, hcliff2's `TILEC_GEMM_PAD`, its epilogue loading per
# column, not per row)
ARCH_SPECIFIC_PTX = {"u13_generic", "p02_mixed_precision", "p09_std_attention", "p13_cluster",
                     "p16_math_edges", "r18_std_attention_odd",
                     "w02_std_attention_shapes", "k02_half_bf16_edges", "b08_bf16_mlp_epilogues",
                     "o01_fused_mlp_gelu", "o12_swiglu_bf16", "a02_scaled_mm_rowwise_bf16",
                     "a12_alibi_softcap_attention",
                     "y06_bf16_round_by_bits",  # (its bf16 code differs per arch: seen at landing L3)
                     "e07_generic_saturate_four_types"}  # (its bf16 instance, round 22)


#: plain programs (on both archs, their sm_80 PTX sm_90a's) whose sm_80 PTX ptxas still assembles by default, so
#: the default run keeps assembling user programs' sm_80 output (the lead's condition for the LLVM-text check
#: below): a GEMM without wgmma, reductions, atomics, `last_block`, f64
SM80_PTX_DEFAULT = {"u07_gemm", "r11_two_pass_reduce", "p05_atomics_last", "r23_splitk_last_block",
                    "k07_batched_cholesky_f64"}


def _llvm_texts(name: str, arch: str, seen_ir: tuple[Any, Any] | None = None) -> list[tuple[str, int]]:
    """What `tilec emit --stage ptx --arch ARCH` hands NVPTX for each kernel instance of the program: the LLVM
    text and its IR level (`compile_kernel`'s front half; with the target, all the PTX's cache key holds).
    `seen_ir`: the `ir` stage's kernels and context of an emission of the program for another arch (only the
    `gpu` and `ptx` stages read `Options.arch`), lowered from there instead of compiling the program again."""
    import dataclasses

    from tilelang.backend import _target, ir_level
    from tilelang.backend.llvm import emit_llvm_text
    from tilelang.diagnostics.model import DiagnosticSink

    if seen_ir is None:
        result = driver.compile(DIR / f"{name}.tile", "gpu", options=driver.Options(arch=arch))
        assert result.ok, (name, arch, [str(d) for d in result.diagnostics])
        kernels = result.output
    else:
        ir_kernels, ctx = seen_ir
        ctx = driver.Context(dataclasses.replace(ctx.options, arch=arch), ctx.sources, DiagnosticSink(), ctx.source)
        kernels = driver.STAGES["gpu"].run(ir_kernels, ctx)
        assert not ctx.sink.has_errors, (name, arch, [str(d) for d in ctx.sink.diagnostics])
    tgt = _target(arch)
    out = []
    for gk in kernels:
        text, _ = emit_llvm_text(gk, gk.facts, tgt.pdl_mode, tgt.trace, tgt.tma_prefetch,
                                 tgt.trace_mark if tgt.trace else "", tgt.l2_evict, tgt.ldg_early)
        out.append((text, ir_level(gk, tgt)))
    return out


def _emit_ptx_seen(name: str, arch: str, out: Path
                   ) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, int]], tuple[Any, Any] | None]:
    """`emit_ptx`, the LLVM text and IR level of each PTX it compiled or found in the cache (as `_llvm_texts`
    gives them: what `compile_kernel` keys the PTX by, `runtime/cache.make_key`), and its `ir` stage's output
    and context (for `_llvm_texts`' `seen_ir`)."""
    import dataclasses

    from tilelang.runtime import cache

    seen: list[tuple[str, int]] = []
    seen_ir: list[tuple[Any, Any]] = []
    make_key = cache.make_key
    ir_stage = driver.STAGES["ir"]

    def noting(kind: str, *parts: str, **kw: Any) -> str:
        if kind == "ptx":  # ("ptx", the target's key, "ir-O<level>", the LLVM text, ...)
            seen.append((parts[2], int(parts[1].removeprefix("ir-O"))))
        return make_key(kind, *parts, **kw)

    def lowering(checked: Any, ctx: Any) -> Any:
        kernels = ir_stage.run(checked, ctx)
        seen_ir.append((kernels, ctx))
        return kernels

    cache.make_key = noting
    driver.STAGES["ir"] = dataclasses.replace(ir_stage, run=lowering)
    try:
        return emit_ptx(name, arch, out), seen, (seen_ir[-1] if seen_ir else None)
    finally:
        cache.make_key = make_key
        driver.STAGES["ir"] = ir_stage


def _ptx_texts(out: Path, arch: str) -> list[str]:
    """The .ptx files in `out`, their `.target ARCH` line made arch-neutral."""
    return [f.read_text(encoding="utf-8").replace(f".target {arch}", ".target ?", 1) for f in sorted(out.glob("*.ptx"))]


def program_suite(pattern: str | tuple[str, ...], checks: Mapping[str, Check], simulated: Iterable[tuple[str, str]],
                  sim_tol: Mapping[str, float] | None = None, ptx: Iterable[tuple[str, str]] = (),
                  ptx_refused: Mapping[tuple[str, str], str] | None = None,
                  heavy: Iterable[str] = (), heavy_ptx: Iterable[str] = ()) -> tuple[Callable[..., None], ...]:
    """The four tests of a table of programs (`DIR/pattern`, one NumPy check
    each), for a module to bind to its own names:

    - every program matching `pattern` (or one of a tuple of patterns) has a check;
    - the interpreter's run passes its check;
    - each (program, arch) of `simulated` runs whole in the NVPTX simulator
      (its kernels' prints going where the program's own go), leaves the
      interpreter's tensors (floats within `sim_tol[name]`, default 1e-5) and
      passes the check (`heavy` for the programs of `SIM_COVERED` and those of `heavy`, simulations of
      many seconds whose module has a smaller default test of the same path);
    - each (program, arch) of `ptx` emits PTX that ptxas assembles, or, listed
      in `ptx_refused`, is refused with that text (a cluster on sm_80); where
      a program is on both archs, its sm_90a test checks that its sm_80 LLVM
      text (and IR level) is the same, or for the programs of
      `ARCH_SPECIFIC_PTX` that their sm_80 PTX is not; the sm_80 test of any
      other checks that its PTX is sm_90a's and is `heavy` (but for
      `SM80_PTX_DEFAULT`), as are both runs of the programs of
      `heavy_ptx` (a module's default cost: ~3 s of emission a program) and
      the tests of the programs of `PTX_COVERED` (other programs' default
      tests cover theirs)."""
    from llsim import sim_runtime_device  # tests/backend, on the path of the modules that use this

    tol = dict(sim_tol or {})
    refused = dict(ptx_refused or {})

    def test_every_program_has_a_check() -> None:
        patterns = (pattern,) if isinstance(pattern, str) else pattern  # (several: round 1's h01-h03, round 28's h04-)
        assert sorted({p.stem for pat in patterns for p in DIR.glob(pat)}) == sorted(checks)

    # the interpreter's run of a program that is also simulated by default, kept from its interpreter test for
    # its simulation test's `want` (the same run: nothing patched, the same TILEC_ switches) when xdist gives
    # both to one process, as it mostly does (a module's tests run together); taken once, copied both ways
    interpreted: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[dict[str, np.ndarray], str]] = {}

    def _switches() -> tuple[tuple[str, str], ...]:
        return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TILEC_")))

    @pytest.mark.parametrize("name", sorted(checks))
    def test_the_interpreter_gives_the_independent_answer(name: str) -> None:
        tensors, out = run_program(name)
        if name in archs and name not in slow and run.make_device is _MAKE_DEVICE:
            interpreted[name, _switches()] = ({k: v.copy() for k, v in tensors.items()}, out)
        checks[name](tensors, out)

    # a program's architectures in one test, one after the other: launches
    # whose LLVM is the same for both (most programs') are then `llsim.MEMO`
    # hits in the same process, wherever xdist sends the test
    archs: dict[str, list[str]] = {}
    for name, arch in simulated:
        archs.setdefault(name, []).append(arch)

    slow = set(SIM_COVERED) | set(heavy)

    @pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.heavy) if n in slow else n for n in archs])
    def test_the_simulated_gpu_gives_the_same_tensors(name: str, monkeypatch: Any) -> None:
        kept = interpreted.pop((name, _switches()), None) if run.make_device is _MAKE_DEVICE else None
        want, _ = kept if kept is not None else run_program(name)
        for arch in archs[name]:
            monkeypatch.setattr(run, "make_device",
                                lambda choice, out, arch=arch: sim_runtime_device(arch, lambda s: out.write(s + "\n")))
            got, out = run_program(name)
            try:
                assert sorted(got) == sorted(want)
                assert_same_tensors(got, want, tol.get(name, 1e-5))
                checks[name](got, out)
            except AssertionError as e:
                raise AssertionError(f"{name} on {arch}: {e}") from e

    ptx = list(ptx)
    twins = {n for n, a in ptx if a == "sm_80" and (n, "sm_90a") in ptx}
    slow_ptx = set(heavy_ptx)

    @pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
    @pytest.mark.parametrize(("name", "arch"), [
        pytest.param(n, a, marks=pytest.mark.heavy)
        if n in slow_ptx or (a == "sm_80" and n in twins - ARCH_SPECIFIC_PTX - SM80_PTX_DEFAULT)
        or (n in PTX_COVERED and (n, a) not in refused)
        else (n, a) for n, a in ptx])
    def test_the_ptx_assembles(name: str, arch: str, tmp_path: Path) -> None:
        for a in ("sm_80", "sm_90a"):
            (tmp_path / a).mkdir()
        r, seen, seen_ir = _emit_ptx_seen(name, arch, tmp_path / arch)
        if (name, arch) in refused:
            assert r.returncode == 1 and refused[name, arch] in r.stderr, (name, r.stderr)
            return
        assert r.returncode == 0, (name, r.stderr)
        if name in twins and (arch == "sm_90a") == (name in ARCH_SPECIFIC_PTX):
            # the other arch's PTX: an ARCH_SPECIFIC_PTX program's sm_90a test, any other's sm_80 test
            other = "sm_80" if arch == "sm_90a" else "sm_90a"
            r2 = emit_ptx(name, other, tmp_path / other)
            same = r2.returncode == 0 and _ptx_texts(tmp_path / other, other) == _ptx_texts(tmp_path / arch, arch)
            assert same == (name not in ARCH_SPECIFIC_PTX), (  # (a new program: list it there if it differs)
                name, "sm_80's PTX is sm_90a's" if same else "sm_80's PTX differs: add it to ARCH_SPECIFIC_PTX")
        if arch == "sm_90a" and name in twins - ARCH_SPECIFIC_PTX:  # so NVPTX alone could make their PTX differ
            assert seen and _llvm_texts(name, "sm_80", seen_ir) == seen, (name, "sm_80's LLVM text differs")
        assemble_all(tmp_path / arch, arch, name)

    return (test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
            test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles)


def both_archs(names: Iterable[str]) -> list[tuple[str, str]]:
    """(name, arch) for each name on sm_80 and sm_90a."""
    return [(n, a) for n in names for a in ("sm_80", "sm_90a")]


def first_error(path: Path) -> Diagnostic:
    """The first error `tilec check` reports (`driver.check` is what it runs),
    in-process: a subprocess each would be most of a wrong/ module's time."""
    errs = [d for d in driver.check(path).diagnostics if d.severity.value == "error"]
    assert errs, f"{path.name}: no error"
    return errs[0]


def apply_fixes(path: Path, edits: Iterable[tuple[str, str]]) -> str:
    """`path`'s text with each (old, new) edit a help line proposes applied;
    each `old` must be in the text."""
    src = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in src, (path.name, old)
        src = src.replace(old, new)
    return src


def fixed_program(path: Path, edits: Iterable[tuple[str, str]], tmp_path: Path) -> Path:
    """`apply_fixes(path, edits)` written to a file of `path`'s name in `tmp_path`."""
    f = tmp_path / path.name
    f.write_text(apply_fixes(path, edits), encoding="utf-8")
    return f


def assert_help_leads_to_a_working_program(path: Path, hint: str, edits: Iterable[tuple[str, str]],
                                           tmp_path: Path) -> None:
    """The first error's help says `hint`, and `path` with the help's `edits`
    applied checks clean under `-D warnings`."""
    d = first_error(path)
    assert any(hint in h for h in d.help), (path.name, d.help)
    result = driver.check(fixed_program(path, edits, tmp_path), deny_warnings=True)
    assert not result.diagnostics, (path.name, [f"{x.code}: {x.message}" for x in result.diagnostics])


def run_time_fix(path: Path, code: str, hint: str, edits: Iterable[tuple[str, str]], tmp_path: Path) -> Path:
    """`path` passes the checker and fails when it runs with error `code`,
    a span and a help that says `hint`; the program with the help's `edits`
    applied (written to `tmp_path`), for the caller to run."""
    assert not [d for d in driver.check(path).diagnostics if d.severity.value == "error"]  # the checker passes it
    with pytest.raises(TileError) as info:
        run.execute(str(path), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert d.code == code and d.primary_span is not None, (d.code, d.message)
    assert any(hint in h for h in d.help), d.help
    return fixed_program(path, edits, tmp_path)


def wrong_suite(pattern: str, fixes: Mapping[str, tuple[str, Iterable[tuple[str, str]]]],
                checks: Mapping[str, Check]) -> tuple[Callable[..., None], ...]:
    """The three tests of a round's wrong programs (`DIR.parent / "wrong" / pattern`), for a module to bind to
    its own names, as `program_suite`'s:

    - every wrong program matching `pattern` has a fix (`fixes`: a phrase of the first error's help and the
      help's (old, new) edits);
    - the first error's help says its phrase, the program with the edits applied checks clean under
      `-D warnings`, and its run passes `checks[name]` (NumPy's answer);
    - the editor (the language server) shows the same first error."""
    wrong = DIR.parent / "wrong"

    def test_every_mistake_has_a_fix() -> None:
        assert sorted(p.stem for p in wrong.glob(pattern)) == sorted(fixes)

    @pytest.mark.parametrize("name", sorted(fixes))
    def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
        hint, edits = fixes[name]
        assert_help_leads_to_a_working_program(wrong / f"{name}.tile", hint, edits, tmp_path)
        tensors, printed = run_program(fixed_program(wrong / f"{name}.tile", edits, tmp_path))
        checks[name](tensors, printed)

    @pytest.mark.parametrize("name", sorted(fixes))
    def test_the_editor_shows_the_same_first_error(name: str) -> None:
        assert_the_editor_shows_the_first_error(wrong / f"{name}.tile")

    return (test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
            test_the_editor_shows_the_same_first_error)


def assert_the_editor_shows_the_first_error(path: Path) -> None:
    """The language server's analysis of `path` (what an editor shows) has no
    internal error, and its first error is `tilec check`'s: the same code at
    the same place, with the same help."""
    from tilelang.lsp import analysis  # (0.4 s of imports the other user tests need not pay)

    want = first_error(path)
    an = analysis.analyze(path.read_text(encoding="utf-8"), str(path))
    assert an.internal_error is None
    errs = [d for d in an.diagnostics if d.severity.value == "error"]
    assert errs and errs[0].code == want.code, (path.name, [d.code for d in errs])
    assert want.primary_span is not None and errs[0].primary_span.start == want.primary_span.start, path.name
    assert errs[0].help == want.help, path.name
