"""Issue 17 probe: does a persistent layer kernel pay against one launch a GEMV?

A probe, not a product. `layer_barrier.cu` holds one Qwen3-4B decoder layer at
batch 1 (bf16 weights, f32 sums; QKV 6144x2560, a stand-in for the attention
that copies q into O's input, O 2560x4096, gate/up 2x9728x2560 with silu(g) u,
down 2560x9728) written once as phase code, and the kernels that put the
phases together in four ways:

  (a) a launch a phase (5 a layer), PDL off or on (`griddepcontrol.wait`
      first, `launch_dependents` after the loop, as the engine does);
  (b) one cooperative persistent launch, phases separated by a grid barrier
      (an atomic arrive with release, acquire polling), one launch a layer or
      one for the whole step;
  (c) as (b), each warp loading its first weights of the next phase into
      registers before it waits at the barrier: issued before the block's
      arrival (c) or between its arrival and its wait (c2);
  (d) the barrier alone (n barriers in one launch) at 1, 2, 3 blocks an SM,
      and the empty launch in a graph, PDL off and on.

Every form uses the same grid (SMs x k blocks of 256 threads, each warp a
contiguous share of the phase's units) and the same inner loop, so only the
boundaries differ. The step (36 layers, their own weights: 7.3 GB, none of it
in L2 from the layer before) is one CUDA graph, timed by replays; every form's
residual after the step is checked against form (a)'s, and form (a)'s against
a PyTorch f32 reference (one layer and the whole step).

It needs a GPU (sm_90a), PyTorch and the kernel image: built here by nvcc
(`--build` alone compiles and prints ptxas's registers and spills, no GPU), or
given by `--cubin` (built where nvcc is: the device machine may have none).

    python benchmarks/probes/layer_barrier.py --build --cubin /tmp/lb.cubin
    python benchmarks/probes/layer_barrier.py --cubin /tmp/lb.cubin --out /tmp/lb.json
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE / "layer_barrier.cu"
HID, QKV_N, QN, FF, LAYERS = 2560, 6144, 4096, 9728, 36
THREADS = 256
KERNELS = (
    "mega",
    "mega_pre",
    "mega_pre_af",
    "k_qkv",
    "k_att",
    "k_o",
    "k_gu",
    "k_down",
    "k_bar",
    "k_empty",
)
PHASES = ("k_qkv", "k_att", "k_o", "k_gu", "k_down")
NVCC_FLAGS = ["-cubin", "-arch=sm_90a", "-O3", "-std=c++17"]
# weight bytes a layer of each GEMV reads
BYTES = {
    "k_qkv": QKV_N * HID * 2,
    "k_o": HID * QN * 2,
    "k_gu": 2 * FF * HID * 2,
    "k_down": HID * FF * 2,
}
ATT_BLOCKS = 16  # the stand-in's grid in form (a): 4,096 elements


def source_hash() -> str:
    return hashlib.sha256(SRC.read_bytes() + " ".join(NVCC_FLAGS).encode()).hexdigest()[:12]


def build(out: Path, nvcc: str | None = None) -> dict[str, dict[str, int]]:
    """Compile layer_barrier.cu to `out` (sm_90a cubin); returns ptxas's
    report per kernel: registers, spill stores and loads (bytes)."""
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError(
            "nvcc not found: build the cubin where the CUDA toolkit is and pass --cubin"
        )
    r = subprocess.run([nvcc, *NVCC_FLAGS, "-Xptxas", "-v", "-o", str(out), str(SRC)], capture_output=True,
                       text=True)  # fmt: skip
    if r.returncode:
        raise RuntimeError(f"nvcc failed ({r.returncode}):\n{r.stderr}")
    return ptxas_report(r.stderr)


def ptxas_report(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    name = ""
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = m.group(1)
            out[name] = {}
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and name:
            out[name]["spill_stores"], out[name]["spill_loads"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            out[name]["registers"] = int(m.group(1))
    return out


# --- the driver API through ctypes (libcuda; PyTorch owns the context) ---

COOPERATIVE, PDL = 2, 6  # CUlaunchAttributeID
NUM_REGS, LOCAL_BYTES = 4, 3  # CUfunction_attribute


class Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint), ("pad", ctypes.c_ubyte * 4), ("value", ctypes.c_int),
                ("rest", ctypes.c_ubyte * 60)]  # fmt: skip


class Cfg(ctypes.Structure):
    _fields_ = [("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint), ("bx", ctypes.c_uint),
                ("by", ctypes.c_uint), ("bz", ctypes.c_uint), ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(Attr)), ("nattrs", ctypes.c_uint)]  # fmt: skip


class Driver:
    def __init__(self, image: bytes, stream: Callable[[], int]) -> None:
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.cu.cuLaunchKernelEx.argtypes = [ctypes.POINTER(Cfg), ctypes.c_void_p,
                                             ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]  # fmt: skip
        self.stream = stream
        ctx = ctypes.c_void_p()
        self.check(self.cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise RuntimeError(
                "no current CUDA context (PyTorch makes one on its first allocation)"
            )
        self._image = ctypes.create_string_buffer(image, len(image))
        self.mod = ctypes.c_void_p()
        self.check(
            self.cu.cuModuleLoadData(ctypes.byref(self.mod), self._image), "cuModuleLoadData"
        )
        self.fn: dict[str, ctypes.c_void_p] = {}
        for k in KERNELS:
            f = ctypes.c_void_p()
            self.check(
                self.cu.cuModuleGetFunction(ctypes.byref(f), self.mod, k.encode()), f"get {k}"
            )
            self.fn[k] = f
        self.args: tuple = ()

    def check(self, code: int, what: str) -> None:
        if code:
            s = ctypes.c_char_p()
            self.cu.cuGetErrorName(code, ctypes.byref(s))
            raise RuntimeError(f"{what}: CUDA error {code} {s.value.decode() if s.value else ''}")

    def attr(self, k: str, a: int) -> int:
        v = ctypes.c_int()
        self.check(self.cu.cuFuncGetAttribute(ctypes.byref(v), a, self.fn[k]), "cuFuncGetAttribute")
        return v.value

    def occupancy(self, k: str) -> int:
        v = ctypes.c_int()
        self.check(self.cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(v), self.fn[k], THREADS,
                                                                         ctypes.c_size_t(0)), "occupancy")  # fmt: skip
        return v.value

    def bind(self, wl: int, xr: int, qkv: int, ob: int, h: int, bar: int) -> None:
        self.args = (wl, xr, qkv, ob, h, bar)

    def launch(
        self, k: str, grid: int, l0: int, l1: int = 0, coop: bool = False, pdl: bool = False
    ) -> None:
        wl, xr, qkv, ob, h, bar = self.args
        vals = [ctypes.c_void_p(wl), ctypes.c_int(l0), ctypes.c_int(l1), ctypes.c_void_p(xr), ctypes.c_void_p(qkv),
                ctypes.c_void_p(ob), ctypes.c_void_p(h), ctypes.c_void_p(bar)]  # fmt: skip
        params = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        attrs = (Attr * 2)()
        n = 0
        for on, aid in ((coop, COOPERATIVE), (pdl, PDL)):
            if on:
                attrs[n].id, attrs[n].value = aid, 1
                n += 1
        cfg = Cfg(grid, 1, 1, THREADS, 1, 1, 0, ctypes.c_void_p(self.stream()),
                  ctypes.cast(attrs, ctypes.POINTER(Attr)) if n else None, n)  # fmt: skip
        self.check(
            self.cu.cuLaunchKernelEx(ctypes.byref(cfg), self.fn[k], params, None), f"launch {k}"
        )


# --- what both probes' measurements share (PyTorch imported by the caller) ---


def random_layers(gen: Any, dev: str) -> list[tuple[Any, Any, Any, Any]]:
    """The 36 layers' weights, each its own (7.3 GB): (Wqkv, Wo, Wgu, Wd), bf16,
    scaled by 1 / sqrt(K); rows of Wgu alternate gate, up."""
    import torch

    def mat(n: int, k: int) -> Any:
        return (torch.randn(n, k, device=dev, generator=gen) * k**-0.5).to(torch.bfloat16)

    return [(mat(QKV_N, HID), mat(HID, QN), mat(2 * FF, HID), mat(HID, FF)) for _ in range(LAYERS)]


def reference(W: list[tuple[Any, Any, Any, Any]], x0: Any, layers: int) -> Any:
    """The residual after `layers` layers, in PyTorch f32 (bf16 where the kernels round)."""
    import torch

    x = x0.clone()
    for wq, wo, wg, wd in W[:layers]:
        xn = x * torch.rsqrt(x.pow(2).mean() + 1e-6)
        q = wq.float() @ xn
        x = x + wo.float() @ q[:QN].bfloat16().float()
        xn = x * torch.rsqrt(x.pow(2).mean() + 1e-6)
        gu = wg.float() @ xn
        g, u = gu[0::2], gu[1::2]
        x = x + wd.float() @ (g * torch.sigmoid(g) * u).bfloat16().float()
    return x


def rel(x: Any, want: Any) -> float:
    return float((x - want).abs().max() / want.abs().max())


def graph(fn: Callable[[], None]) -> Callable[[], None]:
    """`fn`'s launches captured (after one eager run) as a CUDA graph; its replay."""
    import torch

    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g.replay


def time_us(replay: Callable[[], None], reps: int) -> float:
    """Microseconds a replay, `reps` replays between two events (after one)."""
    import torch

    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    replay()
    s.record()
    for _ in range(reps):
        replay()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1e3 / reps


# --- the measurement ---


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cubin", default="", help="the kernel image (built with --build where nvcc is)"
    )
    ap.add_argument(
        "--build", action="store_true", help="compile to --cubin, print ptxas's report, stop"
    )
    ap.add_argument("--out", default="", help="write the results as JSON here")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10, help="graph replays a sample")
    ap.add_argument("--samples", type=int, default=5, help="samples a form a round")
    ap.add_argument("--ks", default="1,2", help="blocks an SM for forms a-c")
    a = ap.parse_args(argv)
    res: dict[str, Any] = {"source": source_hash()}
    if a.build:
        out = Path(a.cubin or f"/tmp/layer_barrier_{source_hash()}.cubin")
        report = build(out)
        print(json.dumps(report, indent=1))
        print(f"built {out}")
        return 0
    import torch

    def save() -> None:
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))

    if not torch.cuda.is_available():
        print("no GPU: nothing to measure (use --build to compile alone)")
        return 1
    image = Path(a.cubin).read_bytes() if a.cubin else Path(_built()).read_bytes()
    dev = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    res["card"] = props.name
    drv = Driver(image, lambda: torch.cuda.current_stream().cuda_stream)
    res["kernels"] = {k: {"regs": drv.attr(k, NUM_REGS), "local": drv.attr(k, LOCAL_BYTES),
                          "blocks_an_sm": drv.occupancy(k)} for k in KERNELS}  # fmt: skip
    print(f"{props.name}, {sms} SMs; kernels: {res['kernels']}", flush=True)

    gen = torch.Generator(device=dev).manual_seed(17)

    W = random_layers(gen, dev)
    wl = torch.tensor([w.data_ptr() for ws in W for w in ws], dtype=torch.int64, device=dev)
    xr0 = torch.randn(HID, device=dev, generator=gen)
    xr = torch.empty(HID, device=dev)
    qkv = torch.empty(QKV_N, device=dev)
    ob = torch.empty(QN, device=dev, dtype=torch.bfloat16)
    h = torch.empty(FF, device=dev, dtype=torch.bfloat16)
    bar = torch.zeros(4, device=dev, dtype=torch.int32)
    drv.bind(
        wl.data_ptr(), xr.data_ptr(), qkv.data_ptr(), ob.data_ptr(), h.data_ptr(), bar.data_ptr()
    )

    def reset() -> None:  # a kernel, so that a PDL launch after it has a kernel before it
        torch.add(xr0, 0.0, out=xr)

    # --- the forms: each a function that runs the step (or `layers` layers) from the reset
    def form_a(k: int, pdl: bool, layers: int = LAYERS) -> Callable[[], None]:
        def run() -> None:
            reset()
            for i in range(layers):
                for p in PHASES:
                    drv.launch(p, ATT_BLOCKS if p == "k_att" else sms * k, i, pdl=pdl)

        return run

    def form_bc(
        name: str, k: int, per_layer: bool, coop: bool, layers: int = LAYERS
    ) -> Callable[[], None]:
        def run() -> None:
            reset()
            if per_layer:
                for i in range(layers):
                    drv.launch(name, sms * k, i, i + 1, coop=coop)
            else:
                drv.launch(name, sms * k, 0, layers, coop=coop)

        return run

    # --- correctness, one layer, eager: (a) against PyTorch, (b) (c) against (a)
    checks: dict[str, float] = {}
    res["checks"] = checks
    ks = [int(k) for k in a.ks.split(",")]
    want1 = reference(W, xr0, 1)
    form_a(ks[-1], False, 1)()
    torch.cuda.synchronize()
    a1 = xr.clone()
    checks["a 1 layer vs torch"] = rel(a1, want1)
    for name in ("mega", "mega_pre", "mega_pre_af"):
        try:
            form_bc(name, ks[-1], False, True, 1)()
            torch.cuda.synchronize()
            checks[f"{name} 1 layer vs a"] = rel(xr, a1)
        except Exception as e:  # recorded; the rest runs
            checks[f"{name} 1 layer"] = repr(e)  # type: ignore[assignment]
    print(f"checks: {checks}", flush=True)
    save()

    # --- (d) first: the barrier alone and the empty launch
    d: dict[str, Any] = {}
    res["d"] = d
    for k in (1, 2, 3):
        if drv.occupancy("k_bar") < k:
            continue
        for coop in (True, False):
            try:
                t = {}
                for n in (0, 1000):
                    rep = graph(
                        lambda n=n, k=k, coop=coop: drv.launch("k_bar", sms * k, n, coop=coop)
                    )
                    t[n] = statistics.median(time_us(rep, 20) for _ in range(5))
                d[f"barrier k={k} ({sms * k} blocks) coop={coop}, us"] = (t[1000] - t[0]) / 1000
                d[f"barrier kernel n=0 k={k} coop={coop}, us"] = t[0]
                break
            except Exception as e:  # recorded; then without the cooperative attribute
                d[f"barrier k={k} coop={coop}"] = repr(e)
    for pdl in (False, True):
        for k in (1, 2):
            rep = graph(
                lambda k=k, pdl=pdl: [
                    drv.launch("k_empty", sms * k, 0, pdl=pdl) for _ in range(180)
                ]
            )
            d[f"empty launch k={k} pdl={pdl}, us"] = (
                statistics.median(time_us(rep, 10) for _ in range(5)) / 180
            )
    print(f"d: {d}", flush=True)
    save()

    # --- the GEMVs alone (form a's kernels, 36 layers' weights in a graph), and cuBLAS
    alone: dict[str, Any] = {}
    res["gemv_alone"] = alone
    k2 = ks[-1]
    for p in ("k_qkv", "k_o", "k_gu", "k_down"):
        for pdl in (False, True):
            rep = graph(
                lambda p=p, pdl=pdl: [drv.launch(p, sms * k2, i, pdl=pdl) for i in range(LAYERS)]
            )
            us = statistics.median(time_us(rep, 5) for _ in range(5)) / LAYERS
            alone[f"{p} k={k2} pdl={pdl}"] = [round(us, 2), round(BYTES[p] / us / 1e6, 3)]
    xb = torch.randn(HID, device=dev).bfloat16()
    gu_out = torch.empty(2 * FF, device=dev, dtype=torch.bfloat16)
    rep = graph(lambda: [torch.mv(W[i][2], xb, out=gu_out) for i in range(LAYERS)])
    us = statistics.median(time_us(rep, 5) for _ in range(5)) / LAYERS
    alone["cuBLAS torch.mv gate/up"] = [round(us, 2), round(BYTES["k_gu"] / us / 1e6, 3)]
    bufs = [torch.empty(1 << 29, device=dev) for _ in range(2)]
    rep = graph(lambda: bufs[1].copy_(bufs[0]))
    us = statistics.median(time_us(rep, 5) for _ in range(5))
    alone["copy 2 GiB read + 2 GiB write, TB/s"] = round(2 * bufs[0].numel() * 4 / us / 1e6, 3)
    bufs.clear()
    print(f"gemv alone (us a launch, TB/s): {alone}", flush=True)
    save()

    # --- the step, each form, rounds interleaved
    forms: dict[str, Callable[[], None]] = {}
    plain: dict[str, Callable[[], None]] = {}
    for k in ks:
        forms[f"a k={k}"] = form_a(k, False)
        forms[f"a+PDL k={k}"] = form_a(k, True)
        for name, tag in (("mega", "b"), ("mega_pre", "c"), ("mega_pre_af", "c2")):
            if drv.occupancy(name) < k:
                continue
            for per_layer, what in ((True, "layer"), (False, "step")):
                forms[f"{tag} {what} k={k}"] = form_bc(name, k, per_layer, True)
                plain[f"{tag} {what} k={k}"] = form_bc(name, k, per_layer, False)
    replays: dict[str, Callable[[], None]] = {}
    outs: dict[str, Any] = {}
    errors: dict[str, str] = {}
    res["errors"] = errors
    for f, fn in forms.items():
        try:
            replays[f] = graph(fn)
        except Exception as e:  # recorded; a cooperative launch the capture refuses goes plain
            errors[f] = repr(e)
            print(f"{f}: {e!r}", flush=True)
            if f not in plain:
                continue
            try:  # every block is resident anyway: grid <= blocks an SM x SMs, nothing else runs
                replays[f] = graph(plain[f])
                errors[f] += " -> launched without the cooperative attribute"
            except Exception as e2:
                errors[f] += f" -> plain: {e2!r}"
                continue
        replays[f]()
        torch.cuda.synchronize()
        outs[f] = xr.clone()
    base = f"a k={ks[-1]}"
    if base in outs:
        checks["a step vs torch"] = rel(outs[base], reference(W, xr0, LAYERS))
        for f, x in outs.items():
            checks[f"{f} step vs {base}"] = rel(x, outs[base])
    print(f"checks: {checks}", flush=True)
    save()
    samples: dict[str, list[float]] = {f: [] for f in replays}
    t0 = time.perf_counter()
    for r in range(a.rounds):
        order = list(replays) if r % 2 == 0 else list(reversed(replays))
        for f in order:
            for _ in range(a.samples):
                samples[f].append(time_us(replays[f], a.reps))
    step = {f: {"us_step": round(statistics.median(v), 1), "us_layer": round(statistics.median(v) / LAYERS, 3),
                "spread": round((max(v) - min(v)) / statistics.median(v), 4)} for f, v in samples.items()}  # fmt: skip
    res["step"] = step
    res["timing_s"] = round(time.perf_counter() - t0, 1)
    save()
    print(
        "\n| form | us a step | us a layer | spread | vs a+PDL |\n| --- | --- | --- | --- | --- |"
    )
    for f, v in step.items():
        ref = step.get(f"a+PDL k={f.split('k=')[1]}")
        dv = f"{v['us_layer'] - ref['us_layer']:+.2f}" if ref else ""
        print(f"| {f} | {v['us_step']} | {v['us_layer']} | {v['spread']:.2%} | {dv} |")
    print(f"\nerrors: {errors}\nchecks: {json.dumps(checks)}")
    return 0


def _built() -> str:
    out = Path(f"/tmp/layer_barrier_{source_hash()}.cubin")
    if not out.exists():
        build(out)
    return str(out)


if __name__ == "__main__":
    sys.exit(main())
