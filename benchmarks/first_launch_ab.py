"""The cold first launch of issue 14 (a 128x256x64 wgmma GEMM, fresh process,
empty compile cache) under several variants, each run REPS times in turn so
that a slow moment of the host hits every variant alike.

Two numbers per run:
- `first`: what `benchmarks/gemm.py --only first` reports (from just before
  `tilelang.compile` to the end of the first `.sync()`; `import tilelang`,
  PyTorch's CUDA start and the input tensors come before it);
- `start`: from the parent's spawn of the process to the same end, so that
  work moved before the first number's start shows up here.

    python benchmarks/first_launch_ab.py [REPS] [label=ROOT[:ENV=V,ENV=V]] ...

With no variant: this checkout as it is. `AB_WARM=0`: no warm-up run first. `IMPORTTIME=DIR` also writes one
`python -X importtime` log per variant; `PROFILE=1` prints one cProfile of
the first call per variant (`DIAG=label,...`: of those variants only).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The child's start, as gemm.py's first-launch mode has it (imports, the
# inputs, the GEMM's config); shared with `first_launch_trace.py`. A
# `str.format` template: {root} is the checkout.
PROLOGUE = """T_START = time.perf_counter()
import torch
sys.path.insert(0, {root!r}); sys.path.insert(0, {root!r} + "/tests/backend")
import tilelang
from gemm_cases import GemmConfig
T_IMPORTED = time.perf_counter()
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
c = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
cfg = GemmConfig(128, 256, 64, warps=8, stages=4)
"""

CODE = "\nimport sys, time\n" + PROLOGUE + """import os
import tilelang.backend as T  # imported before t0 as gemm.py's first mode does
import tilelang.runtime.cuda as C
import tilelang.runtime.cuda_link as CL
stamps = {{}}
def timed(mod, name):
    f = getattr(mod, name)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            stamps[name] = stamps.get(name, 0.0) + time.perf_counter() - t
    setattr(mod, name, w)
timed(T, "llvm_to_ptx")
timed(T, "lower_gpu")
timed(CL, "_nvjitlink_cubin")
t0 = time.perf_counter()
mod = tilelang.compile(cfg.source())
t1 = time.perf_counter()
prof = bool(os.environ.get("AB_PROFILE"))
if prof:
    import cProfile, pstats, io
    pr = cProfile.Profile()
    pr.enable()
mod.gemm[128, 256, 64](tilelang.partition(c, [128, 256]), a, b).sync()
t2 = time.perf_counter()
if prof:
    pr.disable()
ok = bool(torch.allclose(c[:256, :256].float(), (a[:256].float() @ b[:, :256].float()), atol=0.5, rtol=0.02))
print("AB", t2 - t0, t1 - t0, t2 - t1, time.time(), T_IMPORTED - T_START, t0 - T_IMPORTED, ok,
      {{k: round(v, 4) for k, v in stamps.items()}})
if prof:
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("cumulative").print_stats(40)
    print(chr(10).join(l[:160] for l in out.getvalue().splitlines()[:70]))
"""


def run_once(root: Path, env_extra: dict[str, str], profile: bool = False,
             importtime: Path | None = None) -> tuple[dict[str, float] | None, str]:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TILEC_CACHE_DIR=tmp, CUDA_CACHE_DISABLE="1", **env_extra)
        env["PYTHONPATH"] = str(root) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if profile:
            env["AB_PROFILE"] = "1"
        args = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", CODE.format(root=str(root))]
        spawn = time.time()
        r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, cwd=root)
    if importtime:
        importtime.write_text(r.stderr)
    line = next((x for x in r.stdout.splitlines() if x.startswith("AB ")), None)
    if line is None:
        return None, r.stdout[-1500:] + r.stderr[-1500:]
    p = line.split(maxsplit=8)
    out = {"first": float(p[1]), "compile": float(p[2]), "sync": float(p[3]), "start": float(p[4]) - spawn,
           "imports": float(p[5]), "torch_init": float(p[6]), "ok": p[7] == "True"}
    return out, r.stdout if profile else p[8]


def main() -> None:
    argv = sys.argv[1:]
    reps = int(argv.pop(0)) if argv and argv[0].isdigit() else 3
    variants: list[tuple[str, Path, dict[str, str]]] = []
    for spec in argv or [f"this={ROOT}"]:
        label, _, rest = spec.partition("=")
        root, _, envs = rest.partition(":")
        env = dict(kv.split("=", 1) for kv in envs.split(",") if kv)
        variants.append((label, Path(root).resolve(), env))
    for root in {v[1] for v in variants}:  # bytecode compiled, as an installed package has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "tilelang"),
                        str(root / "tests" / "backend" / "gemm_cases.py")], capture_output=True, timeout=120)
    runs: dict[str, list[dict[str, float]]] = {v[0]: [] for v in variants}
    if os.environ.get("AB_WARM", "1") != "0":  # the page cache and the driver warm, for every variant alike
        run_once(variants[0][1], variants[0][2])
    for i in range(reps):
        for label, root, env in variants:
            got, extra = run_once(root, env)
            if got is None:
                print(f"[ab] {label} run {i}: FAILED {extra}")
                continue
            runs[label].append(got)
            print(f"[ab] {label} run {i}: first {got['first']:.3f} s (compile {got['compile']:.3f}, sync "
                  f"{got['sync']:.3f}), from spawn {got['start']:.3f} s, torch+imports {got['imports']:.3f}, "
                  f"tensors {got['torch_init']:.3f}, correct {got['ok']} {extra}")
    for label, _, _ in variants:
        rs = runs[label]
        if rs:
            med = {k: statistics.median(r[k] for r in rs) for k in ("first", "compile", "sync", "start")}
            print(f"[ab] {label}: median first {med['first']:.3f} s (min {min(r['first'] for r in rs):.3f}; compile "
                  f"{med['compile']:.3f}, sync {med['sync']:.3f}), median from spawn {med['start']:.3f} s, n={len(rs)}")
    diag = [v for v in variants if v[0] in os.environ.get("DIAG", v[0])]  # DIAG=label,label: those only
    if os.environ.get("PROFILE"):
        for label, root, env in diag:
            got, text = run_once(root, env, profile=True)
            print(f"[ab] profile of {label}:\n{text[-7000:]}")
    if os.environ.get("IMPORTTIME"):
        d = Path(os.environ["IMPORTTIME"])
        d.mkdir(parents=True, exist_ok=True)
        for label, root, env in diag:
            run_once(root, env, importtime=d / f"importtime_{label}.txt")


if __name__ == "__main__":
    main()
