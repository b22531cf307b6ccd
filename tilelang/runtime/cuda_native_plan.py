"""The C text of the native launcher's per-plan part (`FastPlan`), compiled
into the same extension as `cuda_native.py`'s driver calls.

A `FastPlan` is made by the Python API for one plan (`api/operation.py`,
`_make_fast`) once the native launcher is loaded, and takes over the two
steps of a repeated call on PyTorch tensors that used to be generated
Python (`fastpath.memo_for`'s memo and `_make_fast`'s one-function launch):

- `memo(args)`: the call's `Operation` when its arguments have the plan's
  key (partition type and tile, numbers' Python types, PyTorch's
  `TensorGuards` over the tensors), and its arrays do not overlap where one
  is written; None otherwise (the Python key path then runs and words any
  error). A plan with numbers hands the checked arrays to `finish`, the
  Python check of the numbers.
- `launch(op)` / `sync(op)`: the checks of `Operation._begin` in its order
  (no profiler active; the tensors still have the guarded type, dtype,
  device, shape and strides, and the addresses the operation was made
  with; the caller's current stream, read through PyTorch; registered
  among the launches in flight, and the only one), then `cuLaunchKernel`
  through the driver's function pointer on the plan's own parameter block,
  the launch counters, autograd's version bump of the written tensors, and
  a `Handle` (or the wait, for `sync`). Anything unusual returns
  None/False before anything ran, and the Python path runs and reports.

Invariant: this code makes no check of its own and drops none: each test
is the Python path's, on the same objects; the objects it makes
(`Operation`, `Handle`) are the Python classes, filled through their
`__slots__` descriptors, checked to be plain object slots when the plan is
made.
"""

SOURCE = r"""
#include <structmember.h>

#define FP_MAX 64
#define FP_MAX_PAIRS 256
#define OP_SLOTS 9
#define H_SLOTS 7

static const char *op_slot_names[OP_SLOTS] = {"_plan", "_ptrs", "_objs", "_scalars", "_host_list",
                                              "_region_list", "_wrapped", "_args", "_runs"};
static const char *h_slot_names[H_SLOTS] = {"operation", "_token", "_stream", "_writeback",
                                            "_raw", "_end", "done"};

typedef struct {
    PyObject_HEAD
    /* the classes and the slots of their objects this plan reads and makes */
    PyObject *op_type, *handle_type, *part_type;
    Py_ssize_t op_off[OP_SLOTS], h_off[H_SLOTS], part_array_off, part_tile_off;
    /* the memo */
    int memo_ready;
    Py_ssize_t nargs, narr;
    char kind[FP_MAX];              /* per argument: 'm' partition, 'r' array, 's' number */
    PyObject *cst[FP_MAX];          /* 'm': the tile; 's': the number's Python type */
    unsigned long long size[FP_MAX];/* per array slot: its bytes */
    int npairs;
    unsigned char pa[FP_MAX_PAIRS], pb[FP_MAX_PAIRS];
    PyObject *plan, *stats, *finish, *guard, *dptr;
    /* the launch */
    int launch_ready, guarded;
    PyObject *hook_dict, *stream_of, *foreign_stream, *pending, *tokens, *dev, *rt, *bump, *end;
    PyObject *last_stream;
    unsigned long long last_raw;
    int nwritten;
    unsigned char written[FP_MAX];
    int nblock;
    unsigned char bmap[FP_MAX];     /* block element k <- the operation's address bmap[k] */
    int nnum;                       /* the kernel's numbers: */
    void *num_cell[FP_MAX];         /*   the cell in the plan's own parameters, */
    unsigned char num_code[FP_MAX]; /*   its kind (`cuda_fast.NATIVE_SCALARS`), */
    unsigned char num_slot[FP_MAX]; /*   the operation's number it takes */
    void *f;
    unsigned gx, gy, gz, threads, smem;
    void **params;
    uint64_t *block;
    unsigned long long mask;
} FastPlan;

static PyObject *s_ACTIVE, *s_hits, *s_launches, *s_one;
static PyTypeObject FastPlanType;

static int slot_offset(PyObject *type, const char *name, Py_ssize_t *out) {
    PyObject *d = PyObject_GetAttrString(type, name);
    if (d == NULL) return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "`%s` is not an object slot", name);
        return -1;
    }
    *out = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    return 0;
}

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static void put(PyObject *o, Py_ssize_t off, PyObject *v) { /* steals v */
    PyObject *old = SLOT(o, off);
    SLOT(o, off) = v;
    Py_XDECREF(old);
}

static int fp_traverse(FastPlan *s, visitproc visit, void *arg) {
    Py_VISIT(s->op_type); Py_VISIT(s->handle_type); Py_VISIT(s->part_type);
    for (Py_ssize_t i = 0; i < FP_MAX; i++) Py_VISIT(s->cst[i]);
    Py_VISIT(s->plan); Py_VISIT(s->stats); Py_VISIT(s->finish); Py_VISIT(s->guard);
    Py_VISIT(s->dptr); Py_VISIT(s->hook_dict); Py_VISIT(s->stream_of);
    Py_VISIT(s->foreign_stream); Py_VISIT(s->pending); Py_VISIT(s->tokens); Py_VISIT(s->dev);
    Py_VISIT(s->rt); Py_VISIT(s->bump); Py_VISIT(s->end); Py_VISIT(s->last_stream);
    return 0;
}

static int fp_clear(FastPlan *s) {
    s->memo_ready = s->launch_ready = 0;
    Py_CLEAR(s->op_type); Py_CLEAR(s->handle_type); Py_CLEAR(s->part_type);
    for (Py_ssize_t i = 0; i < FP_MAX; i++) Py_CLEAR(s->cst[i]);
    Py_CLEAR(s->plan); Py_CLEAR(s->stats); Py_CLEAR(s->finish); Py_CLEAR(s->guard);
    Py_CLEAR(s->dptr); Py_CLEAR(s->hook_dict); Py_CLEAR(s->stream_of);
    Py_CLEAR(s->foreign_stream); Py_CLEAR(s->pending); Py_CLEAR(s->tokens); Py_CLEAR(s->dev);
    Py_CLEAR(s->rt); Py_CLEAR(s->bump); Py_CLEAR(s->end); Py_CLEAR(s->last_stream);
    return 0;
}

static void fp_dealloc(FastPlan *s) {
    PyObject_GC_UnTrack(s);
    fp_clear(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* FastPlan(Operation, Handle, Partition, plan, guard, data_ptr) */
static int fp_init(FastPlan *s, PyObject *args, PyObject *kw) {
    PyObject *op_type, *handle_type, *part_type, *plan, *guard, *dptr;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO", &PyType_Type, &op_type, &PyType_Type, &handle_type,
                          &PyType_Type, &part_type, &plan, &guard, &dptr))
        return -1;
    for (int i = 0; i < OP_SLOTS; i++)
        if (slot_offset(op_type, op_slot_names[i], &s->op_off[i]) < 0) return -1;
    for (int i = 0; i < H_SLOTS; i++)
        if (slot_offset(handle_type, h_slot_names[i], &s->h_off[i]) < 0) return -1;
    if (slot_offset(part_type, "array", &s->part_array_off) < 0 ||
        slot_offset(part_type, "tile", &s->part_tile_off) < 0)
        return -1;
    Py_INCREF(op_type); Py_XSETREF(s->op_type, op_type);
    Py_INCREF(handle_type); Py_XSETREF(s->handle_type, handle_type);
    Py_INCREF(part_type); Py_XSETREF(s->part_type, part_type);
    Py_INCREF(plan); Py_XSETREF(s->plan, plan);
    Py_INCREF(guard); Py_XSETREF(s->guard, guard);
    Py_INCREF(dptr); Py_XSETREF(s->dptr, dptr);
    return 0;
}

/* set_memo(kinds: str, consts: tuple (per argument: tile, type or None), sizes: tuple,
            pairs: tuple of (a, b), stats: dict, finish: callable or None) */
static PyObject *fp_set_memo(FastPlan *s, PyObject *args) {
    const char *kinds;
    Py_ssize_t nk;
    PyObject *consts, *sizes, *pairs, *stats, *finish;
    if (!PyArg_ParseTuple(args, "s#O!O!O!O!O", &kinds, &nk, &PyTuple_Type, &consts, &PyTuple_Type,
                          &sizes, &PyTuple_Type, &pairs, &PyDict_Type, &stats, &finish))
        return NULL;
    Py_ssize_t narr = PyTuple_GET_SIZE(sizes);
    if (nk > FP_MAX || PyTuple_GET_SIZE(consts) != nk || narr > FP_MAX ||
        PyTuple_GET_SIZE(pairs) > FP_MAX_PAIRS) {
        PyErr_SetString(PyExc_ValueError, "set_memo: too many arguments or pairs");
        return NULL;
    }
    s->memo_ready = 0;
    Py_ssize_t seen = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        char k = kinds[i];
        if (k != 'm' && k != 'r' && k != 's') {
            PyErr_SetString(PyExc_ValueError, "set_memo: a kind is m, r or s");
            return NULL;
        }
        if (k != 's') seen++;
        s->kind[i] = k;
        PyObject *c = PyTuple_GET_ITEM(consts, i);
        Py_INCREF(c);
        Py_XSETREF(s->cst[i], c);
    }
    if (seen != narr) {
        PyErr_SetString(PyExc_ValueError, "set_memo: one size per array");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < narr; k++) {
        s->size[k] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(sizes, k));
        if (PyErr_Occurred()) return NULL;
    }
    s->npairs = (int)PyTuple_GET_SIZE(pairs);
    for (int p = 0; p < s->npairs; p++) {
        int a, b;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(pairs, p), "ii", &a, &b)) return NULL;
        if (a < 0 || b < 0 || a >= narr || b >= narr) {
            PyErr_SetString(PyExc_ValueError, "set_memo: a pair names no array");
            return NULL;
        }
        s->pa[p] = (unsigned char)a;
        s->pb[p] = (unsigned char)b;
    }
    s->nargs = nk;
    s->narr = narr;
    Py_INCREF(stats); Py_XSETREF(s->stats, stats);
    if (finish == Py_None) finish = NULL;
    Py_XINCREF(finish); Py_XSETREF(s->finish, finish);
    s->memo_ready = 1;
    Py_RETURN_NONE;
}

/* set_launch(hook_dict, stream_of, foreign_stream, pending, tokens, dev, rt, bump or None,
              written: tuple, end, fixed: (f, gx, gy, gz, threads, smem, params, block, mask),
              bmap: tuple, guarded: bool, numbers: tuple of (cell address, kind code, slot)) */
static PyObject *fp_set_launch(FastPlan *s, PyObject *args) {
    PyObject *hook_dict, *stream_of, *foreign_stream, *pending, *tokens, *dev, *rt, *bump, *written,
        *end, *bmap, *numbers;
    unsigned long long f, params, block, mask;
    unsigned gx, gy, gz, threads, smem;
    int guarded;
    if (!PyArg_ParseTuple(args, "O!OOO!OOOOO!O(KIIIIIKKK)O!pO!", &PyDict_Type, &hook_dict,
                          &stream_of, &foreign_stream, &PyDict_Type, &pending, &tokens, &dev, &rt,
                          &bump, &PyTuple_Type, &written, &end, &f, &gx, &gy, &gz, &threads,
                          &smem, &params, &block, &mask, &PyTuple_Type, &bmap, &guarded,
                          &PyTuple_Type, &numbers))
        return NULL;
    if (PyTuple_GET_SIZE(numbers) > FP_MAX) {
        PyErr_SetString(PyExc_ValueError, "set_launch: too many numbers");
        return NULL;
    }
    if (!s->memo_ready || PyTuple_GET_SIZE(written) > s->narr || PyTuple_GET_SIZE(bmap) > FP_MAX ||
        Py_TYPE(tokens)->tp_iternext == NULL || p_launch == NULL) {
        PyErr_SetString(PyExc_ValueError, "set_launch: no memo, bad sizes or no driver");
        return NULL;
    }
    s->launch_ready = 0;
    s->nwritten = (int)PyTuple_GET_SIZE(written);
    for (int i = 0; i < s->nwritten; i++) {
        long w = PyLong_AsLong(PyTuple_GET_ITEM(written, i));
        if (w < 0 || w >= s->narr) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "set_launch: written slot");
            return NULL;
        }
        s->written[i] = (unsigned char)w;
    }
    s->nblock = (int)PyTuple_GET_SIZE(bmap);
    for (int k = 0; k < s->nblock; k++) {
        long m = PyLong_AsLong(PyTuple_GET_ITEM(bmap, k));
        if (m < 0 || m >= s->narr) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "set_launch: block map");
            return NULL;
        }
        s->bmap[k] = (unsigned char)m;
    }
    s->nnum = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(numbers); i++) {
        unsigned long long cell;
        int code, slot;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(numbers, i), "Kii", &cell, &code, &slot)) return NULL;
        if (cell == 0 || code < 1 || code > 11 || slot < 0 || slot >= FP_MAX) {
            PyErr_SetString(PyExc_ValueError, "set_launch: a number's cell, kind or slot");
            return NULL;
        }
        s->num_cell[i] = (void *)(uintptr_t)cell;
        s->num_code[i] = (unsigned char)code;
        s->num_slot[i] = (unsigned char)slot;
    }
    s->nnum = (int)PyTuple_GET_SIZE(numbers);
    if (bump == Py_None) bump = NULL;
#define KEEP(field, v) do { Py_XINCREF(v); Py_XSETREF(s->field, v); } while (0)
    KEEP(hook_dict, hook_dict); KEEP(stream_of, stream_of); KEEP(foreign_stream, foreign_stream);
    KEEP(pending, pending); KEEP(tokens, tokens); KEEP(dev, dev); KEEP(rt, rt); KEEP(bump, bump);
    KEEP(end, end);
#undef KEEP
    Py_CLEAR(s->last_stream);
    s->f = (void *)(uintptr_t)f;
    s->gx = gx; s->gy = gy; s->gz = gz; s->threads = threads; s->smem = smem;
    s->params = (void **)(uintptr_t)params;
    s->block = (uint64_t *)(uintptr_t)block;
    s->mask = mask;
    s->guarded = guarded;
    s->launch_ready = 1;
    Py_RETURN_NONE;
}

/* guard(*arrays), then each address: compared with `ptrs[k]` when `ptrs` is given (1 the
   same, 0 not), else read into `out` (new references) and `vals`; -1 an exception */
static int check_arrays(FastPlan *s, PyObject *const *arr, Py_ssize_t n, PyObject *const *ptrs,
                        PyObject **out, unsigned long long *vals) {
    PyObject *r = PyObject_Vectorcall(s->guard, arr, n, NULL);
    if (r == NULL) return -1;
    int ok = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (ok <= 0) return ok;
    Py_ssize_t k;
    for (k = 0; k < n; k++) {
        PyObject *p = PyObject_Vectorcall(s->dptr, &arr[k], 1, NULL);
        if (p == NULL) break;
        if (ptrs != NULL) {
            int same = PyObject_RichCompareBool(p, ptrs[k], Py_EQ);
            Py_DECREF(p);
            if (same <= 0) return same;
            continue;
        }
        out[k] = p;
        vals[k] = PyLong_AsUnsignedLongLong(p);
        if (vals[k] == (unsigned long long)-1 && PyErr_Occurred()) {
            k++;
            break;
        }
    }
    if (k == n) return 1;
    if (ptrs == NULL)
        for (Py_ssize_t j = 0; j < k; j++) Py_DECREF(out[j]);
    return -1;
}

static PyObject *new_op(FastPlan *s, PyObject *ptrs, PyObject *objs) { /* steals both */
    PyTypeObject *tp = (PyTypeObject *)s->op_type;
    PyObject *scalars = PyList_New(0);
    PyObject *op = scalars ? tp->tp_alloc(tp, 0) : NULL;
    if (op == NULL) {
        Py_XDECREF(scalars); Py_DECREF(ptrs); Py_DECREF(objs);
        return NULL;
    }
    Py_INCREF(s->plan);
    put(op, s->op_off[0], s->plan);
    put(op, s->op_off[1], ptrs);
    put(op, s->op_off[2], objs);
    put(op, s->op_off[3], scalars);
    for (int i = 4; i < 8; i++) { Py_INCREF(Py_None); put(op, s->op_off[i], Py_None); }
    put(op, s->op_off[8], PyLong_FromLong(0));
    return op;
}

/* The memo over the call's positional arguments `argv` (`args`: the same as a tuple,
   or NULL: made when `finish` needs it) */
static PyObject *memo_impl(FastPlan *s, PyObject *const *argv, Py_ssize_t n, PyObject *args) {
    PyObject *arr[FP_MAX], *got[FP_MAX];
    unsigned long long pv[FP_MAX];
    Py_ssize_t na = 0;
    if (!s->memo_ready || n != s->nargs) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < s->nargs; i++) {
        PyObject *a = argv[i];
        if (s->kind[i] == 's') {
            if ((PyObject *)Py_TYPE(a) != s->cst[i]) Py_RETURN_NONE;
        } else if (s->kind[i] == 'm') {
            if ((PyObject *)Py_TYPE(a) != s->part_type) Py_RETURN_NONE;
            PyObject *tile = SLOT(a, s->part_tile_off), *array = SLOT(a, s->part_array_off);
            if (tile == NULL || array == NULL) Py_RETURN_NONE;
            int eq = PyObject_RichCompareBool(tile, s->cst[i], Py_EQ);
            if (eq < 0) return NULL;
            if (!eq) Py_RETURN_NONE;
            arr[na++] = array;
        } else {
            arr[na++] = a;
        }
    }
    int ok = check_arrays(s, arr, na, NULL, got, pv);
    if (ok <= 0) {
        if (ok < 0) return NULL;
        Py_RETURN_NONE;
    }
    for (int p = 0; p < s->npairs; p++) {
        int a = s->pa[p], b = s->pb[p];
        if (pv[a] < pv[b] + s->size[b] && pv[b] < pv[a] + s->size[a]) {
            for (Py_ssize_t k = 0; k < na; k++) Py_DECREF(got[k]);
            Py_RETURN_NONE; /* two arrays share memory, one written: the key path words it */
        }
    }
    PyObject *ptrs = PyList_New(na), *objs = PyList_New(na);
    if (ptrs == NULL || objs == NULL) {
        Py_XDECREF(ptrs); Py_XDECREF(objs);
        for (Py_ssize_t k = 0; k < na; k++) Py_DECREF(got[k]);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < na; k++) {
        PyList_SET_ITEM(ptrs, k, got[k]);
        Py_INCREF(arr[k]);
        PyList_SET_ITEM(objs, k, arr[k]);
    }
    if (s->finish != NULL) {
        PyObject *t = args;
        if (t == NULL) {
            t = PyTuple_New(n);
            if (t == NULL) { Py_DECREF(ptrs); Py_DECREF(objs); return NULL; }
            for (Py_ssize_t i = 0; i < n; i++) { Py_INCREF(argv[i]); PyTuple_SET_ITEM(t, i, argv[i]); }
        } else {
            Py_INCREF(t);
        }
        PyObject *r = PyObject_CallFunctionObjArgs(s->finish, t, ptrs, objs, NULL);
        Py_DECREF(t); Py_DECREF(ptrs); Py_DECREF(objs);
        return r;
    }
    PyObject *hits = PyDict_GetItemWithError(s->stats, s_hits);
    if (hits != NULL) {
        PyObject *more = PyNumber_Add(hits, s_one);
        if (more == NULL || PyDict_SetItem(s->stats, s_hits, more) < 0) {
            Py_XDECREF(more); Py_DECREF(ptrs); Py_DECREF(objs);
            return NULL;
        }
        Py_DECREF(more);
    } else if (PyErr_Occurred()) {
        Py_DECREF(ptrs); Py_DECREF(objs);
        return NULL;
    }
    return new_op(s, ptrs, objs);
}

static PyObject *fp_memo(FastPlan *s, PyObject *args) {
    if (!PyTuple_CheckExact(args)) Py_RETURN_NONE;
    return memo_impl(s, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), args);
}

static int bump_attr(PyObject *o) {
    PyObject *v = PyObject_GetAttr(o, s_launches);
    if (v == NULL) return -1;
    PyObject *w = PyNumber_Add(v, s_one);
    Py_DECREF(v);
    if (w == NULL) return -1;
    int r = PyObject_SetAttr(o, s_launches, w);
    Py_DECREF(w);
    return r;
}

/* A number of the operation as the kernel's parameter takes it, as `_scalar_bits` and the
   ctypes cells of the Python path make it: integers wrapped to their width (`int(value)`),
   floats rounded from a double (`float(value)`), booleans 0/1 (truth). 0 or -1 (an
   exception: the caller clears it and leaves the launch to the Python path). */
typedef union { uint64_t u; double d; } number;

static int read_number(PyObject *v, int code, number *out) {
    if (code == 9) {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        out->u = (uint64_t)t;
        return 0;
    }
    if (code >= 10) {
        out->d = PyFloat_AsDouble(v);
        return out->d == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *n = PyNumber_Long(v);
    if (n == NULL) return -1;
    out->u = PyLong_AsUnsignedLongLongMask(n);
    Py_DECREF(n);
    return out->u == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

static void write_number(void *cell, int code, number v) {
    switch (code) {
    case 1: case 5: case 9: *(uint8_t *)cell = (uint8_t)v.u; break;
    case 2: case 6: *(uint16_t *)cell = (uint16_t)v.u; break;
    case 3: case 7: *(uint32_t *)cell = (uint32_t)v.u; break;
    case 4: case 8: *(uint64_t *)cell = v.u; break;
    case 10: *(float *)cell = (float)v.d; break;
    case 11: *(double *)cell = v.d; break;
    }
}

/* The launch of `op` as `Operation._begin` makes it, over `arr`/`pp` (its arrays and their
   addresses, held for the call: the Python calls below cannot change what was checked):
   1 launched (token, raw and stream set, new references), 0 nothing ran (the Python path
   takes over), -1 an exception. */
static int start_held(FastPlan *s, PyObject *op, PyObject *const *arr, PyObject *const *pp,
                      PyObject *const *nums, PyObject **token_out, PyObject **raw_out,
                      PyObject **stream_out) {
    if (s->guarded) { /* moved or reshaped: the Python path's `_check_memory` words it */
        int ok = check_arrays(s, arr, s->narr, pp, NULL, NULL);
        if (ok <= 0) return ok;
    }
    number nv[FP_MAX];
    for (int i = 0; i < s->nnum; i++) {
        if (read_number(nums[s->num_slot[i]], s->num_code[i], &nv[i]) < 0) {
            PyErr_Clear(); /* the Python path converts it, or says why not */
            return 0;
        }
    }
    PyObject *raw = PyObject_Vectorcall(s->stream_of, NULL, 0, NULL);
    if (raw == NULL) return -1;
    unsigned long long rv = PyLong_AsUnsignedLongLong(raw);
    if (PyErr_Occurred()) { Py_DECREF(raw); return -1; }
    if (s->last_stream == NULL || rv != s->last_raw) {
        PyObject *st = PyObject_Vectorcall(s->foreign_stream, &raw, 1, NULL);
        if (st == NULL) { Py_DECREF(raw); return -1; }
        PyObject *old = s->last_stream; /* both fields set before anything may run */
        s->last_stream = st;
        s->last_raw = rv;
        Py_XDECREF(old);
    }
    PyObject *stream = s->last_stream;
    Py_INCREF(stream);
    PyObject *token = Py_TYPE(s->tokens)->tp_iternext(s->tokens);
    if (token == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "no launch token");
        goto fail;
    }
    if (PyDict_SetItem(s->pending, token, op) < 0) goto fail;
    if (PyDict_GET_SIZE(s->pending) != 1) goto refused; /* others in flight: the Python path */
    uint64_t vals[FP_MAX];
    for (int k = 0; k < s->nblock; k++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(pp[s->bmap[k]]);
        if (PyErr_Occurred()) goto unregister;
        if ((unsigned long long)((v & 15) == 0) != ((s->mask >> k) & 1)) goto refused;
        vals[k] = v;
    }
    for (int k = 0; k < s->nblock; k++) s->block[k] = vals[k];
    for (int i = 0; i < s->nnum; i++) write_number(s->num_cell[i], s->num_code[i], nv[i]);
    if (p_launch(s->f, s->gx, s->gy, s->gz, s->threads, 1, 1, s->smem, (void *)(uintptr_t)rv,
                 s->params, NULL) != 0)
        goto refused; /* nothing launched: the Python path retries and reports */
    if (bump_attr(s->dev) < 0 || bump_attr(s->rt) < 0) goto unregister;
    if (s->bump != NULL) { /* autograd bookkeeping must never fail a launch */
        PyObject *t = PyTuple_New(s->nwritten);
        if (t == NULL) goto launched_error; /* launched and registered, as Python leaves it */
        for (int i = 0; i < s->nwritten; i++) {
            PyObject *o = arr[s->written[i]];
            Py_INCREF(o);
            PyTuple_SET_ITEM(t, i, o);
        }
        PyObject *r = PyObject_CallOneArg(s->bump, t);
        Py_DECREF(t);
        if (r == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) goto launched_error;
            PyErr_Clear();
        }
        Py_XDECREF(r);
    }
    *token_out = token;
    *raw_out = raw;
    *stream_out = stream;
    return 1;
launched_error:
    Py_DECREF(token); Py_DECREF(raw); Py_DECREF(stream);
    return -1;
refused:
    if (PyDict_DelItem(s->pending, token) < 0) goto fail;
    Py_DECREF(token); Py_DECREF(raw); Py_DECREF(stream);
    return 0;
unregister: {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (PyDict_DelItem(s->pending, token) < 0) PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}
fail:
    Py_XDECREF(token); Py_DECREF(raw); Py_DECREF(stream);
    return -1;
}

static int start(FastPlan *s, PyObject *op, PyObject **token_out, PyObject **raw_out,
                 PyObject **stream_out) {
    if (!s->launch_ready || (PyObject *)Py_TYPE(op) != s->op_type) return 0;
    PyObject *active = PyDict_GetItemWithError(s->hook_dict, s_ACTIVE);
    if (active == NULL) return PyErr_Occurred() ? -1 : 0;
    if (active != Py_None) return 0; /* a profiler times it: the Python path */
    PyObject *objs = SLOT(op, s->op_off[2]), *ptrs = SLOT(op, s->op_off[1]);
    if (objs == NULL || ptrs == NULL || !PyList_CheckExact(objs) || !PyList_CheckExact(ptrs) ||
        PyList_GET_SIZE(objs) != s->narr || PyList_GET_SIZE(ptrs) != s->narr)
        return 0;
    PyObject *scal = SLOT(op, s->op_off[3]), *nums[FP_MAX];
    Py_ssize_t nn = 0;
    if (s->nnum > 0) {
        if (scal == NULL || !PyList_CheckExact(scal)) return 0;
        nn = PyList_GET_SIZE(scal);
        for (int i = 0; i < s->nnum; i++)
            if (s->num_slot[i] >= nn) return 0;
        if (nn > FP_MAX) return 0;
    }
    PyObject *arr[FP_MAX], *pp[FP_MAX];
    Py_ssize_t n = s->narr;
    for (Py_ssize_t k = 0; k < n; k++) {
        arr[k] = PyList_GET_ITEM(objs, k);
        pp[k] = PyList_GET_ITEM(ptrs, k);
        Py_INCREF(arr[k]);
        Py_INCREF(pp[k]);
    }
    for (Py_ssize_t k = 0; k < nn; k++) {
        nums[k] = PyList_GET_ITEM(scal, k);
        Py_INCREF(nums[k]);
    }
    int r = start_held(s, op, arr, pp, nums, token_out, raw_out, stream_out);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_DECREF(arr[k]);
        Py_DECREF(pp[k]);
    }
    for (Py_ssize_t k = 0; k < nn; k++) Py_DECREF(nums[k]);
    return r;
}

static PyObject *fp_launch(FastPlan *s, PyObject *op) {
    PyObject *token, *raw, *stream;
    int r = start(s, op, &token, &raw, &stream);
    if (r <= 0) {
        if (r < 0) return NULL;
        Py_RETURN_NONE;
    }
    PyTypeObject *tp = (PyTypeObject *)s->handle_type;
    PyObject *h = tp->tp_alloc(tp, 0);
    if (h == NULL) { /* launched: end its registration as a failed start does */
        PyDict_DelItem(s->pending, token);
        Py_DECREF(token); Py_DECREF(raw); Py_DECREF(stream);
        return NULL;
    }
    Py_INCREF(op); put(h, s->h_off[0], op);
    put(h, s->h_off[1], token);
    put(h, s->h_off[2], stream);
    put(h, s->h_off[3], PyTuple_New(0));
    put(h, s->h_off[4], raw);
    Py_INCREF(s->end); put(h, s->h_off[5], s->end);
    Py_INCREF(Py_False); put(h, s->h_off[6], Py_False);
    return h;
}

static PyObject *fp_sync(FastPlan *s, PyObject *op) {
    PyObject *token, *raw, *stream;
    int r = start(s, op, &token, &raw, &stream);
    if (r <= 0) {
        if (r < 0) return NULL;
        Py_RETURN_FALSE;
    }
    PyObject *res = PyObject_CallFunctionObjArgs(s->end, token, stream, raw, NULL);
    Py_DECREF(token); Py_DECREF(raw); Py_DECREF(stream);
    if (res == NULL) return NULL;
    Py_DECREF(res);
    Py_RETURN_TRUE;
}


/* ---- `Kernel.__call__` and `Operation.launch` as C methods (`install_methods`) ----
   Each takes its C path when the kernel's memo / the plan's launch is a FastPlan's and
   nothing unusual is going on; everything else calls the Python method it replaces,
   which then does all of its work (so a refusal costs a second look, never a check). */
static PyObject *g_kernel_call_py, *g_launch_py, *g_engines_dict;
static Py_ssize_t g_runs_off = -1, g_plan_off = -1;
static PyObject *s_tune, *s_memo, *s_fast_launch, *s_RECORDING;


static FastPlan *fastplan_of(PyObject *bound, PyCFunction which) {
    if (!PyCFunction_Check(bound) || PyCFunction_GET_FUNCTION(bound) != which) return NULL;
    PyObject *self = PyCFunction_GET_SELF(bound);
    return self != NULL && Py_IS_TYPE(self, &FastPlanType) ? (FastPlan *)self : NULL;
}

static PyObject *kernel_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
        PyObject *tune = PyObject_GetAttr(self, s_tune);
        if (tune == NULL) return NULL;
        int plain = tune == Py_None;
        Py_DECREF(tune);
        PyObject *memo = plain ? PyObject_GetAttr(self, s_memo) : NULL;
        if (plain && memo == NULL) return NULL;
        if (memo != NULL && memo != Py_None) {
            FastPlan *fp = fastplan_of(memo, (PyCFunction)fp_memo);
            PyObject *op;
            if (fp != NULL) {
                op = memo_impl(fp, args, nargs, NULL);
            } else {
                PyObject *t = PyTuple_New(nargs);
                if (t == NULL) { Py_DECREF(memo); return NULL; }
                for (Py_ssize_t i = 0; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SET_ITEM(t, i, args[i]); }
                op = PyObject_CallOneArg(memo, t);
                Py_DECREF(t);
            }
            Py_DECREF(memo);
            if (op == NULL || op != Py_None) return op;
            Py_DECREF(op);
        } else {
            Py_XDECREF(memo);
        }
    }
    /* the Python method: `__call__(self, *args, **kwargs)` */
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames), total = 1 + nargs + nkw;
    PyObject *small[16], **stack = total <= 16 ? small : PyMem_Malloc(total * sizeof(PyObject *));
    if (stack == NULL) return PyErr_NoMemory();
    stack[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++) stack[1 + i] = args[i];
    PyObject *r = PyObject_Vectorcall(g_kernel_call_py, stack, 1 + nargs, kwnames);
    if (stack != small) PyMem_Free(stack);
    return r;
}

static PyObject *op_launch(PyObject *self, PyObject *unused) {
    PyObject *rec = PyDict_GetItemWithError(g_engines_dict, s_RECORDING);
    if (rec == NULL && PyErr_Occurred()) return NULL;
    PyObject *plan = SLOT(self, g_plan_off), *runs = SLOT(self, g_runs_off);
    if (rec == Py_None && plan != NULL && runs != NULL) {
        PyObject *fast = PyObject_GetAttr(plan, s_fast_launch);
        if (fast == NULL) return NULL;
        FastPlan *fp = fastplan_of(fast, (PyCFunction)fp_launch);
        if (fp != NULL) {
            Py_INCREF(fp);
            Py_DECREF(fast);
            PyObject *more = PyNumber_Add(runs, s_one); /* tried, at least: no "never run" warning */
            if (more == NULL) { Py_DECREF(fp); return NULL; }
            PyObject *h = fp_launch(fp, self);
            Py_DECREF(fp);
            if (h == NULL || h != Py_None) {
                put(self, g_runs_off, more);
                return h;
            }
            Py_DECREF(more);
            Py_DECREF(h); /* refused before anything ran: the Python method does it all */
        } else {
            Py_DECREF(fast);
        }
    }
    return PyObject_CallOneArg(g_launch_py, self);
}

/* `Operation.__del__` / `Handle.__del__`: nothing to say for an operation that ran and a
   handle that was waited for (every one on the fast path); otherwise the Python method
   (its warning, and the wait of a dropped handle) */
static PyObject *g_op_del_py, *g_handle_del_py;
static Py_ssize_t g_done_off = -1;

static PyObject *op_del(PyObject *self, PyObject *unused) {
    PyObject *runs = SLOT(self, g_runs_off);
    if (runs == NULL || (PyLong_CheckExact(runs) && PyObject_IsTrue(runs) == 1)) Py_RETURN_NONE;
    return PyObject_CallOneArg(g_op_del_py, self);
}

static PyObject *handle_del(PyObject *self, PyObject *unused) {
    PyObject *done = SLOT(self, g_done_off);
    if (done == NULL || done == Py_True) Py_RETURN_NONE;
    return PyObject_CallOneArg(g_handle_del_py, self);
}

static PyMethodDef op_del_def = {"__del__", (PyCFunction)op_del, METH_NOARGS, NULL};
static PyMethodDef handle_del_def = {"__del__", (PyCFunction)handle_del, METH_NOARGS, NULL};

static PyMethodDef kernel_call_def = {"__call__", (PyCFunction)(void (*)(void))kernel_call,
                                      METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef op_launch_def = {"launch", (PyCFunction)op_launch, METH_NOARGS, NULL};

/* install_methods(Kernel, Kernel.__call__, Operation, Operation.launch, engines.__dict__,
                   Operation.__del__, Handle, Handle.__del__)
   -> method descriptors (`__call__`, `launch`, `Operation.__del__`, `Handle.__del__`)
   for the caller to set */
static PyObject *install_methods(PyObject *module, PyObject *args) {
    PyObject *kernel_type, *call_py, *op_type, *launch_py, *engines_dict, *op_del_py, *handle_type,
        *handle_del_py;
    if (!PyArg_ParseTuple(args, "O!OO!OO!OO!O", &PyType_Type, &kernel_type, &call_py, &PyType_Type,
                          &op_type, &launch_py, &PyDict_Type, &engines_dict, &op_del_py,
                          &PyType_Type, &handle_type, &handle_del_py))
        return NULL;
    if (slot_offset(op_type, "_runs", &g_runs_off) < 0 || slot_offset(op_type, "_plan", &g_plan_off) < 0 ||
        slot_offset(handle_type, "done", &g_done_off) < 0)
        return NULL;
    PyObject *d[4] = {
        PyDescr_NewMethod((PyTypeObject *)kernel_type, &kernel_call_def),
        PyDescr_NewMethod((PyTypeObject *)op_type, &op_launch_def),
        PyDescr_NewMethod((PyTypeObject *)op_type, &op_del_def),
        PyDescr_NewMethod((PyTypeObject *)handle_type, &handle_del_def),
    };
    if (!d[0] || !d[1] || !d[2] || !d[3]) {
        for (int i = 0; i < 4; i++) Py_XDECREF(d[i]);
        return NULL;
    }
    Py_INCREF(call_py); Py_XSETREF(g_kernel_call_py, call_py);
    Py_INCREF(launch_py); Py_XSETREF(g_launch_py, launch_py);
    Py_INCREF(engines_dict); Py_XSETREF(g_engines_dict, engines_dict);
    Py_INCREF(op_del_py); Py_XSETREF(g_op_del_py, op_del_py);
    Py_INCREF(handle_del_py); Py_XSETREF(g_handle_del_py, handle_del_py);
    PyObject *r = PyTuple_Pack(4, d[0], d[1], d[2], d[3]);
    for (int i = 0; i < 4; i++) Py_DECREF(d[i]);
    return r;
}

static PyMethodDef plan_module_methods[] = {
    {"install_methods", install_methods, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef fp_methods[] = {
    {"set_memo", (PyCFunction)fp_set_memo, METH_VARARGS, NULL},
    {"set_launch", (PyCFunction)fp_set_launch, METH_VARARGS, NULL},
    {"memo", (PyCFunction)fp_memo, METH_O, NULL},
    {"launch", (PyCFunction)fp_launch, METH_O, NULL},
    {"sync", (PyCFunction)fp_sync, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FastPlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tile_native.FastPlan",
    .tp_basicsize = sizeof(FastPlan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)fp_init,
    .tp_dealloc = (destructor)fp_dealloc,
    .tp_traverse = (traverseproc)fp_traverse,
    .tp_clear = (inquiry)fp_clear,
    .tp_methods = fp_methods,
};

static int add_plan_type(PyObject *m) {
    s_ACTIVE = PyUnicode_InternFromString("ACTIVE");
    s_hits = PyUnicode_InternFromString("hits");
    s_launches = PyUnicode_InternFromString("launches");
    s_one = PyLong_FromLong(1);
    s_tune = PyUnicode_InternFromString("_tune");
    s_memo = PyUnicode_InternFromString("_memo");
    s_fast_launch = PyUnicode_InternFromString("fast_launch");
    s_RECORDING = PyUnicode_InternFromString("RECORDING");
    if (!s_tune || !s_memo || !s_fast_launch || !s_RECORDING || PyModule_AddFunctions(m, plan_module_methods) < 0)
        return -1;
    if (!s_one || !s_ACTIVE || !s_hits || !s_launches || PyType_Ready(&FastPlanType) < 0) return -1;
    Py_INCREF(&FastPlanType);
    if (PyModule_AddObject(m, "FastPlan", (PyObject *)&FastPlanType) < 0) {
        Py_DECREF(&FastPlanType);
        return -1;
    }
    return 0;
}
"""
