"""A timeline of issue 14's cold first launch (the 128x256x64 wgmma GEMM of
`benchmarks/gemm.py --only first`, fresh process, empty caches), for finding
where the time goes that no stage accounts for.

The child process runs gemm.py's first-launch code with two recorders:
- wrappers around the stages and the CUDA steps (compile, Tile IR lowering,
  GPU IR, LLVM text, LLVM -> PTX, PTX -> cubin/module load, context and
  device creation, TMA descriptors, the launch, the toolchain threads):
  exact begin/end times, by thread;
- a sampler thread that reads every thread's Python stack every ~0.5 ms
  (`sys._current_frames`) and merges equal consecutive samples into
  segments: what the main thread is doing between the stages, and what the
  background threads do meanwhile. Its resolution is the interpreter's
  switch interval (set to 0.5 ms here), so a trace run is a little slower
  than an untraced one: compare stages within a trace, totals with
  `first_launch_ab.py`.

    python benchmarks/first_launch_trace.py [label=ROOT[:ENV=V,ENV=V]] ...
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from first_launch_ab import PROLOGUE  # the child's start, shared

ROOT = Path(__file__).resolve().parents[1]

CODE = "\nimport sys, time, threading\n" + PROLOGUE + r"""import importlib
EV = []  # (t, thread, "+"/"-", name)
def wrap(modname, attr, label=None):
    try:
        owner = importlib.import_module(modname)
        for part in attr.split(".")[:-1]:
            owner = getattr(owner, part)
        name = attr.split(".")[-1]
        f = owner.__dict__[name]
    except Exception:
        return
    raw = f.__func__ if isinstance(f, staticmethod) else f
    tag = label or attr
    def w(*a, **k):
        th = threading.current_thread().name
        EV.append((time.perf_counter(), th, "+", tag))
        try:
            return raw(*a, **k)
        finally:
            EV.append((time.perf_counter(), th, "-", tag))
    setattr(owner, name, staticmethod(w) if isinstance(f, staticmethod) else w)
for m, a_ in [("tilelang.backend", "lower_gpu"), ("tilelang.backend", "emit_llvm_text"),
              ("tilelang.backend", "llvm_to_ptx"), ("tilelang.backend", "compile_kernel"),
              ("tilelang.runtime.launch", "_default_lower"),
              ("tilelang.runtime.cuda", "Module.from_ptx"), ("tilelang.runtime.cuda", "Context.__init__"),
              ("tilelang.runtime.cuda", "CudaDevice.__init__"), ("tilelang.runtime.cuda", "tensor_map"),
              ("tilelang.runtime.cuda", "Module.function"), ("tilelang.runtime.cuda", "Function.launch"),
              ("tilelang.runtime.cuda", "Context.synchronize"), ("tilelang.runtime.cuda_link", "_warm_driver_jit"),
              ("tilelang.runtime.cuda_link", "_prewarm_target"),
              ("tilelang.runtime.cuda_link", "_load_nvjitlink"), ("tilelang.runtime.cuda_link", "_nvjitlink_cubin")]:
    wrap(m, a_)
SAMPLES = []  # (t, thread name, label)
DONE = []
def label(f):
    inner = None
    ours = None
    depth = 0
    while f is not None and depth < 60:
        fn = f.f_code.co_filename
        here = fn.rsplit("/", 2)
        lab = "/".join(here[-2:]) + ":" + f.f_code.co_name
        if inner is None:
            inner = lab
        if ours is None and "/tilelang/" in fn:
            ours = lab
        f = f.f_back
        depth += 1
    return inner if ours is None or ours == inner else ours + " > " + inner
def sampler():
    me = threading.get_ident()
    while not DONE:
        names = {{t.ident: t.name for t in threading.enumerate()}}
        now = time.perf_counter()
        for tid, fr in sys._current_frames().items():
            if tid != me:
                SAMPLES.append((now, names.get(tid, str(tid)), label(fr)))
        time.sleep(0.0005)
PTX = []
import tilelang.backend as _B
_l2p = _B.llvm_to_ptx
def _keep(*a, **k):
    out = _l2p(*a, **k)
    PTX.append(("ptx", out))
    return out
_B.llvm_to_ptx = _keep
sys.setswitchinterval(0.0005)
threading.Thread(target=sampler, daemon=True, name="sampler").start()
t0 = time.perf_counter()
EV.append((t0, "MainThread", "+", "tilelang.compile"))
mod = tilelang.compile(cfg.source())
t1 = time.perf_counter()
EV.append((t1, "MainThread", "-", "tilelang.compile"))
mod.gemm[128, 256, 64](tilelang.partition(c, [128, 256]), a, b).sync()
t2 = time.perf_counter()
EV.append((t2, "MainThread", "-", "first sync"))
time.sleep(0.05)  # background threads finish their step
DONE.append(1)
import tilelang.runtime.cuda as C
from tilelang.runtime import cuda_link
ctx = C.context()
d = ctx.d
for what, ptx in PTX[:1]:
    tj = time.perf_counter()
    err, h = d.cuModuleLoadDataEx(ptx.encode() + b"\0", 0, [], [])
    print(f"JIT again (the same PTX, warm driver JIT): {{time.perf_counter() - tj:.4f}} s ({{err}})")
print("JIT warm-up:", getattr(cuda_link, "JIT_WARMUP", "n/a"))
print(f"TRACE first {{t2 - t0:.4f}} compile {{t1 - t0:.4f}} sync {{t2 - t1:.4f}} "
      f"(imports {{T_IMPORTED - T_START:.3f}}, torch start + tensors {{t0 - T_IMPORTED:.3f}} before t0)")
for t, th, sign, name in sorted(EV):
    print(f"EV {{(t - t0) * 1e3:8.1f}} ms  {{th[:18]:18}} {{sign}} {{name}}")
segs = {{}}
for t, th, lab in SAMPLES:
    cur = segs.setdefault(th, [])
    if cur and cur[-1][2] == lab and t - cur[-1][1] < 0.004:
        cur[-1][1] = t
    else:
        cur.append([t, t, lab])
for th, cur in segs.items():
    for s, e, lab in cur:
        if e >= t0 - 0.05 and s <= t2 + 0.05 and (e - s >= 0.0015 or th == "MainThread"):
            print(f"SEG {{(s - t0) * 1e3:8.1f}} {{(e - t0) * 1e3:8.1f}} ms  {{th[:18]:18}} {{lab[:150]}}")
"""


def main() -> None:
    specs = sys.argv[1:] or [f"this={ROOT}"]
    for spec in specs:
        lab, _, rest = spec.partition("=")
        root_s, _, envs = rest.partition(":")
        root = Path(root_s).resolve()
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "tilelang"),
                        str(root / "tests" / "backend" / "gemm_cases.py")], capture_output=True, timeout=120)
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, TILEC_CACHE_DIR=tmp, CUDA_CACHE_DISABLE="1",
                       **dict(kv.split("=", 1) for kv in envs.split(",") if kv))
            env["PYTHONPATH"] = str(root) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            r = subprocess.run([sys.executable, "-c", CODE.format(root=str(root))], env=env, capture_output=True,
                               text=True, timeout=120, cwd=root)
        print(f"=== trace {lab} ({root}{', ' + envs if envs else ''})")
        print(r.stdout[-60000:] if r.returncode == 0 else r.stdout[-3000:] + r.stderr[-3000:])


if __name__ == "__main__":
    main()
