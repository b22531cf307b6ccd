"""A native launcher for the API's fast path: three driver calls
(`cuLaunchKernel`, `cuStreamSynchronize`, `cuStreamIsCapturing`) from a small
CPython extension, built from the C text below with the machine's C compiler
the first time a process launches on a GPU, cached on disk beside the
compile cache, and loaded by later processes in microseconds.

Why: through cuda.bindings each of these calls costs about a microsecond of
Python-side argument and result handling (enum objects, handle classes);
`.sync()` makes three of them. The extension takes plain integers (the
handles' raw values) and calls the driver's entry points, which it gets as
addresses from libcuda itself (`dlsym`, through ctypes), so it links
against nothing. The launch also writes the call's tensor addresses into
the packed parameter block and checks their 16-byte alignment in C (what
`FastLaunch` did in Python), holding the GIL, so the write and the launch
are one step for other threads.

Nothing here is required: when there is no compiler, no `Python.h`, no
libcuda, or `TILEC_LAUNCH` names another path, `native()` is None and the
launcher uses cuda.bindings as before. The build never runs on the
launching thread: it starts in a daemon thread and the launches before it
is done go through the binding (`native(wait=True)` waits, for benchmarks).

The extension also holds `FastPlan` (its C text in `cuda_native_plan.py`):
the repeated call of one plan on PyTorch tensors, its memo and its launch,
as one C call each, making exactly the Python path's checks.

Invariant: the extension only calls the three entry points with the
arguments it is given; it makes no check of its own (the Python path's
checks, made in C by `FastPlan`, are the same), and an error code comes
back to Python, which words it through the binding's names.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any

from tilelang.runtime.cuda_native_plan import SOURCE as _PLAN_SOURCE

SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, void *, void **, void **);
typedef int (*sync_fn)(void *);
typedef int (*capturing_fn)(void *, int *);

static launch_fn p_launch;
static sync_fn p_sync;
static capturing_fn p_capturing;

static PyObject *set_driver(PyObject *self, PyObject *args) {
    unsigned long long a, b, c;
    if (!PyArg_ParseTuple(args, "KKK", &a, &b, &c)) return NULL;
    p_launch = (launch_fn)(uintptr_t)a;
    p_sync = (sync_fn)(uintptr_t)b;
    p_capturing = (capturing_fn)(uintptr_t)c;
    Py_RETURN_NONE;
}

static int read_u64(PyObject *o, unsigned long long *out) {
    *out = PyLong_AsUnsignedLongLong(o);
    return !(*out == (unsigned long long)-1 && PyErr_Occurred());
}

/* launch(f, gx, gy, gz, threads, smem, params, block, aligned, stream, *ptrs)
   -> CUresult, or -1 when a pointer's 16-byte alignment is not the one the
   variant was compiled for (bit k of `aligned`: pointer k is aligned); then
   nothing was written or launched. The pointers go to `block` (the packed
   parameters point at its elements), then the kernel is launched; the GIL is
   held throughout. */
static PyObject *tile_launch(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    unsigned long long v[10], p;
    uint64_t ptrs[64];
    Py_ssize_t i, nptrs = n - 10;
    if (n < 10 || nptrs > 64 || p_launch == NULL) {
        PyErr_SetString(PyExc_TypeError, "launch: bad arguments or no driver");
        return NULL;
    }
    for (i = 0; i < 10; i++)
        if (!read_u64(args[i], &v[i])) return NULL;
    for (i = 0; i < nptrs; i++) {
        if (!read_u64(args[10 + i], &p)) return NULL;
        if ((unsigned long long)((p & 15) == 0) != ((v[8] >> i) & 1)) return PyLong_FromLong(-1);
        ptrs[i] = p;
    }
    uint64_t *block = (uint64_t *)(uintptr_t)v[7];
    for (i = 0; i < nptrs; i++) block[i] = ptrs[i];
    int err = p_launch((void *)(uintptr_t)v[0], (unsigned)v[1], (unsigned)v[2], (unsigned)v[3],
                       (unsigned)v[4], 1, 1, (unsigned)v[5], (void *)(uintptr_t)v[9],
                       (void **)(uintptr_t)v[6], NULL);
    return PyLong_FromLong(err);
}

static PyObject *stream_sync(PyObject *self, PyObject *arg) {
    unsigned long long s;
    int err;
    if (!read_u64(arg, &s) || p_sync == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "sync: no driver");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    err = p_sync((void *)(uintptr_t)s);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

/* capturing(stream) -> the capture status (0: none), or -CUresult on an error */
static PyObject *stream_capturing(PyObject *self, PyObject *arg) {
    unsigned long long s;
    int status = 0;
    if (!read_u64(arg, &s) || p_capturing == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "capturing: no driver");
        return NULL;
    }
    int err = p_capturing((void *)(uintptr_t)s, &status);
    return PyLong_FromLong(err ? -err : status);
}

static PyMethodDef methods[] = {
    {"set_driver", set_driver, METH_VARARGS, NULL},
    {"launch", (PyCFunction)(void (*)(void))tile_launch, METH_FASTCALL, NULL},
    {"sync", stream_sync, METH_O, NULL},
    {"capturing", stream_capturing, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

PLAN_SOURCE

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "MODNAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_MODNAME(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && add_plan_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
""".replace("PLAN_SOURCE", _PLAN_SOURCE)

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"module": None, "thread": None, "error": None}


def _wanted() -> bool:
    from tilelang.runtime.cuda_driver import launch_mode

    return launch_mode() == "native" and sys.platform == "linux"


def _libcuda() -> Any:
    return ctypes.CDLL("libcuda.so.1")


def _cache_dir() -> Path:
    from tilelang.runtime.cache import default_dir

    return default_dir() / "native"


# the compiler's flags for the extension (part of its cached file's name with the source and Python)
_CFLAGS = ("-O2", "-shared", "-fPIC")


def _name() -> str:
    """The extension's module and file name: a hash of what the built file is a function of, its C source,
    the flags and Python's version, so a changed launcher never loads an older build from the cache."""
    tag = "".join(c if c.isalnum() else "_" for c in sys.implementation.cache_tag or "py")
    digest = hashlib.sha256(f"{SOURCE}{sys.version}{' '.join(_CFLAGS)}".encode()).hexdigest()[:16]
    return f"tile_native_{tag}_{digest}"


def _compiler() -> str | None:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    exe = shutil.which(cc.split()[0]) if cc else None
    return exe or shutil.which("cc") or shutil.which("gcc")


def build(directory: Path | None = None) -> Path:
    """Compile the extension into `directory` (the cache by default); its path.
    Raises OSError/CalledProcessError when it cannot be built."""
    directory = directory or _cache_dir()
    name = _name()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    target = directory / f"{name}{suffix}"
    if target.exists():
        return target
    cc = _compiler()
    include = sysconfig.get_paths().get("include")
    if cc is None or not include or not Path(include, "Python.h").exists():
        raise OSError("no C compiler or no Python.h for the native launcher")
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        src = Path(tmp) / f"{name}.c"
        src.write_text(SOURCE.replace("MODNAME", name))
        out = Path(tmp) / f"{name}{suffix}"
        r = subprocess.run(
            [cc, *_CFLAGS, f"-I{include}", str(src), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if r.returncode != 0:
            raise OSError(f"{cc} failed: {r.stderr.strip()[-500:]}")
        os.replace(out, target)  # atomic: another process may be building it too
    return target


def load(path: Path, lib: Any = None) -> Any:
    """Load a built extension and give it the driver's entry points (`lib`:
    a ctypes library with cuLaunchKernel, cuStreamSynchronize and
    cuStreamIsCapturing; libcuda by default)."""
    name = path.name.split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    lib = lib if lib is not None else _libcuda()
    addr = [
        ctypes.cast(getattr(lib, f), ctypes.c_void_p).value or 0
        for f in ("cuLaunchKernel", "cuStreamSynchronize", "cuStreamIsCapturing")
    ]
    if not all(addr):
        raise OSError("libcuda lacks a driver entry point")
    mod.set_driver(*addr)
    return mod


def _build_and_load() -> None:
    try:
        mod = load(build())
        _STATE["module"] = mod
    except Exception as e:  # no compiler, no headers, no libcuda: the binding stays
        _STATE["error"] = f"{type(e).__name__}: {e}"


def native(wait: bool = False, timeout: float = 120.0) -> Any:
    """The loaded extension, or None (not built yet, not wanted, or not
    buildable; `native_error()` says why). The first call starts the build
    (a daemon thread; a build cached on disk is loaded at once); `wait`
    waits for it."""
    mod = _STATE["module"]
    if mod is not None or not _wanted():
        return mod
    with _LOCK:
        t = _STATE["thread"]
        if t is None and _STATE["error"] is None:
            try:
                _libcuda()
            except OSError as e:  # no driver here: nothing to build for
                _STATE["error"] = f"no libcuda: {e}"
                return None
            try:
                cached = _cache_dir() / f"{_name()}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
            except Exception:
                cached = None
            if cached is not None and cached.exists():
                _build_and_load()  # loading a built one takes microseconds
                return _STATE["module"]
            t = _STATE["thread"] = threading.Thread(
                target=_build_and_load, name="tile-native-build", daemon=True
            )
            t.start()
    if wait and t is not None:
        t.join(timeout)
    return _STATE["module"]


def native_error() -> str | None:
    """Why there is no native launcher (None while it is building or when it is loaded)."""
    error: str | None = _STATE["error"]
    return error
