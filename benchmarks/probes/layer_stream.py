"""Issue 17 probe, form (e): a weight stream through shared memory that does not drain at kernel boundaries.

A probe, not a product (CUDA C in `layer_barrier.cu`, the same cubin as the
forms a-d; `layer_barrier.py --build --cubin X` builds it). One Qwen3-4B layer
at batch 1 as in `layer_barrier.py`, 5 launches a layer in one CUDA graph:

  (e)   e_qkv, e_att, e_o, e_gu, e_down: each GEMV one block an SM (<= 96 KB
        of shared memory and <= 82 registers x 256 threads: two fit an SM),
        PDL trigger at entry, its rows streamed through a ring of
        cp.async.bulk stages (~80 KB) whose first stages are issued before
        `griddepcontrol.wait`; the attention stand-in (128 blocks) reads its
        32 KB of the layer's KV in 4 dependent rounds and waits out `--att-ns`
        after its PDL wait, trigger at entry;
  (a5)  layer_barrier's form (a) kernels (264 blocks, K split for O and down)
        with the same attention stand-in (trigger at exit), PDL off and on.

It measures the 36-layer step a form (median us a layer), each form-e GEMV
alone (36 launches chained, PDL on and off: TB/s), and one replay of form e
with `%globaltimer` stamps a block (entry, after the wait, exit, SM): do the
next kernel's blocks enter before the current one ends, on the same SMs, and
how soon after its end does the next one's wait return. Every form's residual
is checked against (a5)'s, and (a5)'s against PyTorch's f32 reference.

    python benchmarks/probes/layer_stream.py --cubin /tmp/lb.cubin --out /tmp/ls.json
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layer_barrier import (
    BYTES,
    FF,
    HID,
    LAYERS,
    QKV_N,
    QN,
    THREADS,
    Attr,
    Cfg,
    Driver,
    graph,
    random_layers,
    reference,
    rel,
    time_us,
)

# form e's GEMVs: e the first (bulk, ~20 KB stages), s smaller stages, p cp.async, w a row a warp,
# x as w with x in registers (down: a row split across the warps), y as x with deeper rings
# z: rings of 10 small stages (down 5), each row split across the warps, O's and down's input from global
FAMILIES = {f: (f"{f}_qkv", f"{f}_o", f"{f}_gu", f"{f}_down") for f in "espwxyz"}
DIAG = ("nc_e_gu", "nc_s_gu", "nc_p_gu", "nc_w_gu")  # the rings not consumed: their rate alone
# e_smem's order in layer_barrier.cu
E_GEMV = tuple(k for f in "espw" for k in FAMILIES[f]) + DIAG + FAMILIES["x"] + FAMILIES["y"]
E_GEMV += FAMILIES["z"] + ("nc_x_down", "nc_z_down")
FAMILIES["m"] = ("z_qkv", "z_o", "x_gu", "z_down")  # a mix: x's gate/up, z's others
# the families this call measures (s, p: call 2; e, w, y: calls 2 and 3, x's or slower)
MEASURED = "xzm"
E_CHAIN = ("e_qkv", "e_att", "e_o", "e_gu", "e_down")
A5_CHAIN = ("k_qkv", "a_att5", "k_o", "k_gu", "k_down")
E_BYTES = {k: BYTES["k_" + k.rsplit("_", 1)[1]] for k in E_GEMV}
ATT_BLOCKS, ATT_THREADS, KV_LAYER, STAMP_STRIDE = 128, 128, 128 * 32768, 256
PDL, MAX_DYN_SMEM, CARVEOUT = 6, 8, 9


class EArgs(ctypes.Structure):
    _fields_ = [("wl", ctypes.c_void_p), ("layer", ctypes.c_int), ("xr", ctypes.c_void_p),
                ("qkv", ctypes.c_void_p), ("ob", ctypes.c_void_p), ("h", ctypes.c_void_p), ("kv", ctypes.c_void_p),
                ("stamps", ctypes.c_void_p), ("slot", ctypes.c_int), ("att_ns", ctypes.c_int)]  # fmt: skip


class EDriver(Driver):
    """layer_barrier's driver plus the form-e kernels (one struct parameter, dynamic shared memory)."""

    def __init__(self, image: bytes, stream: Callable[[], int]) -> None:
        super().__init__(image, stream)
        for k in (*E_GEMV, "e_att", "a_att5"):
            f = ctypes.c_void_p()
            self.check(
                self.cu.cuModuleGetFunction(ctypes.byref(f), self.mod, k.encode()), f"get {k}"
            )
            self.fn[k] = f
        dptr, size = ctypes.c_uint64(), ctypes.c_size_t()
        self.check(self.cu.cuModuleGetGlobal_v2(ctypes.byref(dptr), ctypes.byref(size), self.mod, b"e_smem"),
                   "get e_smem")  # fmt: skip
        vals = (ctypes.c_int * len(E_GEMV))()
        self.check(self.cu.cuMemcpyDtoH_v2(vals, dptr, size), "read e_smem")
        self.smem = dict(zip(E_GEMV, list(vals), strict=True)) | {"e_att": 0, "a_att5": 0}
        for k in E_GEMV:
            self.check(
                self.cu.cuFuncSetAttribute(self.fn[k], MAX_DYN_SMEM, self.smem[k]), f"smem {k}"
            )
        # every kernel of the chain asks for the whole shared memory: an SM whose L1/shared split
        # differs from a kernel's cannot take its block before it drains
        for k in (*E_GEMV, "e_att"):
            self.check(self.cu.cuFuncSetAttribute(self.fn[k], CARVEOUT, 100), f"carveout {k}")
        self.ea = EArgs()

    def occupancy_e(self, k: str) -> int:
        v = ctypes.c_int()
        threads = THREADS if k in E_GEMV else ATT_THREADS
        self.check(self.cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(v), self.fn[k], threads,
                                                                         ctypes.c_size_t(self.smem[k])), "occ")  # fmt: skip
        return v.value

    def launch_e(self, k: str, grid: int, layer: int, slot: int = 0, pdl: bool = True,
                 stamps: int = 0, att_ns: int = 0) -> None:  # fmt: skip
        a = EArgs.from_buffer_copy(self.ea)
        a.layer, a.slot, a.stamps, a.att_ns = layer, slot, stamps or None, att_ns
        params = (ctypes.c_void_p * 1)(ctypes.addressof(a))
        attrs = (Attr * 1)()
        attrs[0].id, attrs[0].value = PDL, 1
        threads = THREADS if k in E_GEMV else ATT_THREADS
        cfg = Cfg(grid, 1, 1, threads, 1, 1, self.smem[k], ctypes.c_void_p(self.stream()),
                  ctypes.cast(attrs, ctypes.POINTER(Attr)) if pdl else None, 1 if pdl else 0)  # fmt: skip
        self.check(
            self.cu.cuLaunchKernelEx(ctypes.byref(cfg), self.fn[k], params, None), f"launch {k}"
        )


def timeline(
    st: Any, names: tuple[str, ...], grids: dict[str, int], layers: range
) -> dict[str, Any]:
    """Per kernel of the chain (medians over `layers`), times in us against the previous launch's last block
    end: its first and last block entry, its first wait return, its last block end (= what it adds to the
    step), its tail (first to last block end), and on how many SMs its block entered before the previous
    kernel's block on that SM ended."""
    n = len(names)
    rows: dict[str, dict[str, list[float]]] = {k: {} for k in names}
    for layer in layers:
        for p, k in enumerate(names):
            i = layer * n + p
            cur, prev = st[i][: grids[k]], st[i - 1][: grids[names[p - 1]]]
            pend = float(prev[:, 2].max())

            def us(v: float, pend: float = pend) -> float:
                return (v - pend) / 1e3

            sm_prev_end = {int(s): float(e) for s, e in zip(prev[:, 3], prev[:, 2], strict=True)}
            early_sms = sum(1 for s, e in zip(cur[:, 3], cur[:, 0], strict=True)
                            if int(s) in sm_prev_end and e < sm_prev_end[int(s)])  # fmt: skip
            r = rows[k]
            for key, v in (("entry first", us(cur[:, 0].min())), ("entry last", us(cur[:, 0].max())),
                           ("wait first", us(cur[:, 1].min())), ("wait median", us(float(cur[:, 1].median()))),
                           ("end first", us(cur[:, 2].min())), ("adds", us(cur[:, 2].max())),
                           ("tail", (cur[:, 2].max() - cur[:, 2].min()) / 1e3),
                           ("blocks in before prev end", float((cur[:, 0] < pend).sum())),
                           ("SMs in before prev's block there ended", float(early_sms))):  # fmt: skip
                r.setdefault(key, []).append(float(v))
    return {
        k: {key: round(statistics.median(v), 3) for key, v in r.items()} for k, r in rows.items()
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument(
        "--att-ns", type=int, default=4500, help="the attention stand-in's time after its wait"
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--samples", type=int, default=5)
    a = ap.parse_args(argv)
    import torch

    res: dict[str, Any] = {"att_ns": a.att_ns}

    def save() -> None:
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))

    dev = "cuda"
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    res["card"] = props.name
    drv = EDriver(Path(a.cubin).read_bytes(), lambda: torch.cuda.current_stream().cuda_stream)
    res["e_kernels"] = {k: {"regs": drv.attr(k, 4), "local": drv.attr(k, 3), "smem": drv.smem[k],
                            "blocks_an_sm": drv.occupancy_e(k)} for k in (*E_GEMV, "e_att")}  # fmt: skip
    print(f"{props.name}, {sms} SMs; {res['e_kernels']}", flush=True)

    gen = torch.Generator(device=dev).manual_seed(17)

    W = random_layers(gen, dev)
    wl = torch.tensor([w.data_ptr() for ws in W for w in ws], dtype=torch.int64, device=dev)
    xr0 = torch.randn(HID, device=dev, generator=gen)
    xr = torch.empty(HID, device=dev)
    qkv = torch.empty(QKV_N, device=dev)
    ob = torch.empty(QN, device=dev, dtype=torch.bfloat16)
    h = torch.empty(FF, device=dev, dtype=torch.bfloat16)
    bar = torch.zeros(4, device=dev, dtype=torch.int32)
    kv = torch.randint(
        0, 1 << 30, (LAYERS * KV_LAYER // 4 + 64,), device=dev, dtype=torch.int32, generator=gen
    )
    nl = LAYERS * len(E_CHAIN)
    stamps = torch.zeros(nl * STAMP_STRIDE * 4, device=dev, dtype=torch.int64)
    drv.bind(
        wl.data_ptr(), xr.data_ptr(), qkv.data_ptr(), ob.data_ptr(), h.data_ptr(), bar.data_ptr()
    )
    drv.ea = EArgs(wl.data_ptr(), 0, xr.data_ptr(), qkv.data_ptr(), ob.data_ptr(), h.data_ptr(), kv.data_ptr(),
                   None, 0, a.att_ns)  # fmt: skip

    def reset() -> None:
        torch.add(xr0, 0.0, out=xr)

    def form_a5(pdl: bool, layers: int = LAYERS, old_att: bool = False) -> Callable[[], None]:
        def run() -> None:
            reset()
            for i in range(layers):
                for k in A5_CHAIN:
                    if k == "a_att5" and not old_att:
                        drv.launch_e(k, ATT_BLOCKS, i, pdl=pdl, att_ns=a.att_ns)
                    elif k == "a_att5":
                        drv.launch("k_att", 16, i, pdl=pdl)
                    else:
                        drv.launch(k, sms * 2, i, pdl=pdl)

        return run

    def chain(fam: str) -> tuple[str, ...]:
        q, o, gu, d = FAMILIES[fam]
        return (q, "e_att", o, gu, d)

    def form_e(
        pdl: bool, layers: int = LAYERS, st: int = 0, att_ns: int | None = None, fam: str = "e"
    ) -> Callable[[], None]:
        ns = a.att_ns if att_ns is None else att_ns

        def run() -> None:
            reset()
            for i in range(layers):
                for p, k in enumerate(chain(fam)):
                    grid = ATT_BLOCKS if k == "e_att" else sms
                    drv.launch_e(
                        k, grid, i, slot=i * len(E_CHAIN) + p, pdl=pdl, stamps=st, att_ns=ns
                    )

        return run

    # --- correctness, one layer eager: a5 against PyTorch, e against a5
    checks: dict[str, Any] = {}
    res["checks"] = checks
    form_a5(False, 1)()
    torch.cuda.synchronize()
    a1 = xr.clone()
    checks["a5 1 layer vs torch"] = rel(a1, reference(W, xr0, 1))
    for fam, pdl in (("x", False), *((f, True) for f in MEASURED)):
        for t in (qkv, ob, h):  # poisoned: an output left unwritten shows
            t.fill_(float("nan"))
        form_e(pdl, 1, fam=fam)()
        torch.cuda.synchronize()
        checks[f"{fam} pdl={pdl} 1 layer vs a5"] = rel(xr, a1)
    print(f"checks: {checks}", flush=True)
    save()

    # --- each form-e kernel alone: 36 launches (each layer's weights) in a graph
    alone: dict[str, Any] = {}
    res["alone"] = alone
    runs = [(k, True, 1) for k in dict.fromkeys(k for f in MEASURED for k in FAMILIES[f])]
    runs += [(k, True, 1) for k in ("nc_e_gu", "nc_w_gu", "nc_x_down", "nc_z_down", "e_att")]
    runs += [("x_gu", False, 1), ("z_gu", False, 1), ("z_down", False, 1)]
    for k, pdl, per_sm in runs:
        grid = ATT_BLOCKS if k == "e_att" else sms * per_sm
        rep = graph(lambda k=k, pdl=pdl, grid=grid: [drv.launch_e(k, grid, i, pdl=pdl, att_ns=a.att_ns)
                                                      for i in range(LAYERS)])  # fmt: skip
        us = statistics.median(time_us(rep, 5) for _ in range(5)) / LAYERS
        alone[f"{k} pdl={pdl}" + (f" {per_sm} an SM" if per_sm > 1 else "")] = [
            round(us, 2),
            round(E_BYTES[k] / us / 1e6, 3) if k in E_BYTES else None,
        ]
    for k in ("k_gu", "k_down"):
        rep = graph(lambda k=k: [drv.launch(k, sms * 2, i, pdl=True) for i in range(LAYERS)])
        us = statistics.median(time_us(rep, 5) for _ in range(5)) / LAYERS
        alone[f"{k} (form a) pdl=True"] = [round(us, 2), round(BYTES[k] / us / 1e6, 3)]
    # family b: the fastest alone of x's and z's for each GEMV
    FAMILIES["b"] = tuple(min((f"x_{g}", f"z_{g}"), key=lambda k: alone[f"{k} pdl=True"][0])
                          for g in ("qkv", "o", "gu", "down"))  # fmt: skip
    res["family b"] = FAMILIES["b"]
    print(f"family b: {FAMILIES['b']}")
    print("alone, 36 launches in a graph: kernel | us a launch | TB/s", flush=True)
    for k, v in alone.items():
        print(f"  {k} | {v[0]} | {v[1]}")
    save()

    # --- the timeline: one replay of each family's form e with stamps
    res["timeline"] = {}
    res["raw layer 18"] = {}
    for fam in (*MEASURED, "b"):
        stamps.zero_()
        rep = graph(form_e(True, st=stamps.data_ptr(), fam=fam))
        for _ in range(3):
            rep()
        torch.cuda.synchronize()
        st = stamps.view(nl, STAMP_STRIDE, 4).cpu()
        t0 = int(st[:, :, 0][st[:, :, 0] > 0].min())  # ns since the first entry: exact in a float
        st[:, :, :3] -= t0
        names = chain(fam)
        res["raw layer 18"][fam] = {
            k: st[18 * len(names) + p, : (ATT_BLOCKS if k == "e_att" else sms)].tolist()
            for p, k in enumerate(names)
        }
        grids = {k: ATT_BLOCKS if k == "e_att" else sms for k in names}
        tl = timeline(st, names, grids, range(2, LAYERS))
        res["timeline"][fam] = tl
        print(
            f"timeline {fam} (us, medians over layers 2-35, against the previous launch's last block end):"
        )
        keys = list(next(iter(tl.values())))
        print("| kernel | " + " | ".join(keys) + " |")
        print("| --- " * (len(keys) + 1) + "|")
        for k, r in tl.items():
            print(f"| {k} | " + " | ".join(str(r[c]) for c in keys) + " |", flush=True)
        save()

    # --- the step, each form, rounds interleaved
    forms = {
        "a+PDL k=2 (trivial attention)": form_a5(True, old_att=True),
        "a5 k=2": form_a5(False),
        "a5+PDL k=2": form_a5(True),
        **{f"{fam}": form_e(True, fam=fam) for fam in (*MEASURED, "b")},
        "x no PDL": form_e(False, fam="x"),
        "b no PDL": form_e(False, fam="b"),
        "b att_ns=0": form_e(True, att_ns=0, fam="b"),
    }
    replays: dict[str, Callable[[], None]] = {}
    outs: dict[str, Any] = {}
    for f, fn in forms.items():
        try:
            replays[f] = graph(fn)
        except Exception as e:  # recorded; the rest runs
            res.setdefault("errors", {})[f] = repr(e)
            print(f"{f}: {e!r}", flush=True)
            continue
        replays[f]()
        torch.cuda.synchronize()
        outs[f] = xr.clone()
    base = "a5 k=2"
    checks["a5 step vs torch"] = rel(outs[base], reference(W, xr0, LAYERS))
    for f, x in outs.items():
        checks[f"{f} step vs a5"] = rel(x, outs[base])
    print(f"checks: {checks}", flush=True)
    save()
    samples: dict[str, list[float]] = {f: [] for f in replays}
    t0 = time.perf_counter()
    for r in range(a.rounds):
        for f in list(replays) if r % 2 == 0 else list(reversed(replays)):
            for _ in range(a.samples):
                samples[f].append(time_us(replays[f], a.reps))
    step = {f: {"us_step": round(statistics.median(v), 1), "us_layer": round(statistics.median(v) / LAYERS, 3),
                "spread": round((max(v) - min(v)) / statistics.median(v), 4)} for f, v in samples.items()}  # fmt: skip
    res["step"] = step
    res["timing_s"] = round(time.perf_counter() - t0, 1)
    save()
    ref = step.get("a5+PDL k=2", {}).get("us_layer")
    print(
        "\n| form | us a step | us a layer | spread | vs a5+PDL |\n| --- | --- | --- | --- | --- |"
    )
    for f, v in step.items():
        dv = f"{v['us_layer'] - ref:+.2f}" if ref else ""
        print(f"| {f} | {v['us_step']} | {v['us_layer']} | {v['spread']:.2%} | {dv} |")
    print(
        f"\nerrors: {res.get('errors')}\nchecks: {json.dumps(checks)}\nalone: {json.dumps(alone)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
