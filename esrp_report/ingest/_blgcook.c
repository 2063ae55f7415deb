/*
 * Binary perfmon log (.blg) sample rows: gather raw values and cook them in one pass.
 *
 * cook(matrix, rows, stride, slot_pos, slot_width, prev_row, kind, n_slot, d_slot, b_slot, f_slot,
 *      out_col, prev_ok, out, width, raw_slots, raw_out, last_row)
 *
 *   matrix      bytes-like, rows x stride: stacked sample records (one per row)
 *   slot_pos    int64[S]: byte offset of each raw value in a row; slot_width int64[S]: 4 or 8
 *               (a DWORD is unsigned, a 64-bit value signed, as PDH_RAW_COUNTER holds them),
 *               or 0: a constant whose value is slot_pos (the raw-counter layout's time bases)
 *   prev_row    int64[S]: the raw values of the sample before the first row
 *   kind ...    int64[C] each: formula code, slot of N, of D (-1 none), of B (-1 none), of F
 *               (-1 none, -2 = 10,000,000), output column
 *   prev_ok     uint8[C]: the column had a value in the sample before the first row
 *   out         float64 rows x width (written for the C columns only; NaN = no value)
 *   raw_slots   int64[K]: slots copied to raw_out (int64 rows x K)
 *   last_row    int64[S]: receives the raw values of the last row
 *
 * The arithmetic is the published formulas exactly as esrp_report.ingest.perfmon.counter_types.cook_deltas
 * evaluates them (same operations in the same order, so the same doubles), including its edge
 * rules: no value for a raw or time that went backwards or a time that did not move; 0 for an
 * average whose base did not move. Every offset, slot and column is checked against its buffer
 * before the loop: the input is untrusted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum {
    K_RAW = 0, K_FRACTION, K_ELAPSED, K_RATE, K_TIMER, K_TIMER_INV, K_QUEUE, K_AVERAGE_TIMER,
    K_AVERAGE, K_SAMPLE_FRACTION, K_DELTA, K_MULTI_TIMER, K_COUNT
};

typedef struct {
    Py_buffer view;
    int held;
} buf_t;

static int get(PyObject *obj, buf_t *b, int writable, Py_ssize_t itemsize, Py_ssize_t count, const char *name) {
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) return -1;
    b->held = 1;
    if (b->view.len != itemsize * count) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd", name, b->view.len, itemsize * count);
        return -1;
    }
    return 0;
}

static void release(buf_t *bufs, int n) {
    for (int i = 0; i < n; i++)
        if (bufs[i].held) PyBuffer_Release(&bufs[i].view);
}

static inline int64_t sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

static inline double cook_one(int kind, int64_t n1, int64_t n0, int64_t d1, int64_t d0, int64_t b1, double f) {
    double dnf, out;
    int64_t dn, dd;
    switch (kind) {
    case K_RAW:
        return (double)n1;
    case K_FRACTION:
        return d1 == 0 ? 0.0 : (double)n1 / (double)d1 * 100.0;
    case K_ELAPSED:
        return f > 0 ? (double)sub(d1, n1) / f : NAN;
    case K_DELTA:
        dn = sub(n1, n0);
        return dn >= 0 ? (double)dn : NAN;
    default:
        break;
    }
    dn = sub(n1, n0);
    dd = sub(d1, d0);
    dnf = (double)dn;
    switch (kind) {
    case K_AVERAGE_TIMER:
    case K_AVERAGE:
    case K_SAMPLE_FRACTION:
        if (kind == K_AVERAGE_TIMER) out = dnf / f / (double)dd;
        else if (kind == K_SAMPLE_FRACTION) out = dnf / (double)dd * 100.0;
        else out = dnf / (double)dd;
        if (dd == 0) out = 0.0; /* no operations in the interval: shown as 0 */
        if (dd < 0 || dn < 0) out = NAN;
        return out;
    case K_RATE:
        out = dnf / ((double)dd / f);
        break;
    case K_TIMER:
        out = dnf / (double)dd * 100.0;
        break;
    case K_TIMER_INV:
        out = 100.0 * (1.0 - dnf / (double)dd);
        break;
    case K_QUEUE:
        out = dnf / (double)dd;
        break;
    case K_MULTI_TIMER:
        out = b1 > 0 ? dnf / (double)dd * 100.0 / (double)b1 : NAN;
        break;
    default:
        return NAN;
    }
    if (dd <= 0 || dn < 0) out = NAN;
    return out;
}

static PyObject *cook(PyObject *self, PyObject *args) {
    PyObject *o[18];
    Py_ssize_t rows, stride, width;
    if (!PyArg_ParseTuple(args, "OnnOOOOOOOOOOOnOOO", &o[0], &rows, &stride, &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &width, &o[12], &o[13], &o[14]))
        return NULL;
    buf_t b[15];
    memset(b, 0, sizeof b);
    if (rows < 0 || stride < 0 || width < 0 || (stride && rows > PY_SSIZE_T_MAX / stride) ||
        (width && rows > PY_SSIZE_T_MAX / 8 / width)) {
        PyErr_SetString(PyExc_ValueError, "sizes out of range");
        return NULL;
    }
    if (PyObject_GetBuffer(o[1], &b[1].view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    b[1].held = 1;
    Py_ssize_t S = b[1].view.len / 8, C = 0, K = 0;
    int fail = get(o[0], &b[0], 0, 1, rows * stride, "matrix") || get(o[2], &b[2], 0, 8, S, "slot_width") ||
               get(o[3], &b[3], 0, 8, S, "prev_row");
    if (!fail) {
        if (PyObject_GetBuffer(o[4], &b[4].view, PyBUF_C_CONTIGUOUS) < 0) fail = 1;
        else {
            b[4].held = 1;
            C = b[4].view.len / 8;
        }
    }
    fail = fail || get(o[4], &b[5], 0, 8, C, "kind") || get(o[5], &b[6], 0, 8, C, "n_slot") ||
           get(o[6], &b[7], 0, 8, C, "d_slot") || get(o[7], &b[8], 0, 8, C, "b_slot") ||
           get(o[8], &b[9], 0, 8, C, "f_slot") || get(o[9], &b[10], 0, 8, C, "out_col") ||
           get(o[10], &b[11], 0, 1, C, "prev_ok") || get(o[11], &b[12], 1, 8, rows * width, "out");
    if (!fail) {
        if (PyObject_GetBuffer(o[12], &b[13].view, PyBUF_C_CONTIGUOUS) < 0) fail = 1;
        else {
            b[13].held = 1;
            K = b[13].view.len / 8;
        }
    }
    if (!fail && K && rows > PY_SSIZE_T_MAX / 8 / K) {
        PyErr_SetString(PyExc_ValueError, "raw_out: sizes out of range");
        fail = 1;
    }
    fail = fail || get(o[13], &b[14], 1, 8, rows * K, "raw_out");
    buf_t last = {0};
    fail = fail || get(o[14], &last, 1, 8, S, "last_row");
    if (fail) {
        release(b, 15);
        if (last.held) PyBuffer_Release(&last.view);
        return NULL;
    }
    const uint8_t *matrix = b[0].view.buf;
    const int64_t *pos = b[1].view.buf, *wid = b[2].view.buf, *prev_row = b[3].view.buf;
    const int64_t *kind = b[5].view.buf, *ns = b[6].view.buf, *ds = b[7].view.buf, *bs = b[8].view.buf,
                  *fs = b[9].view.buf, *oc = b[10].view.buf, *rs = b[13].view.buf;
    const uint8_t *ok = b[11].view.buf;
    double *out = b[12].view.buf;
    int64_t *raw_out = b[14].view.buf, *last_row = last.view.buf;
    const char *bad = NULL;
    Py_ssize_t at = 0;
    for (Py_ssize_t s = 0; s < S && !bad; s++)
        if (wid[s] != 0 && ((wid[s] != 4 && wid[s] != 8) || pos[s] < 0 || pos[s] > stride - wid[s]))
            bad = "slot outside the row", at = s;
    for (Py_ssize_t c = 0; c < C && !bad; c++)
        if (kind[c] < 0 || kind[c] >= K_COUNT || ns[c] < 0 || ns[c] >= S || ds[c] < -1 || ds[c] >= S ||
            bs[c] < -1 || bs[c] >= S || fs[c] < -2 || fs[c] >= S || oc[c] < 0 || oc[c] >= width)
            bad = "column plan outside its slots or the output", at = c;
    for (Py_ssize_t k = 0; k < K && !bad; k++)
        if (rs[k] < 0 || rs[k] >= S) bad = "raw slot outside the slots", at = k;
    int64_t *cur = NULL, *prev = NULL;
    Py_ssize_t *wide = NULL, *narrow = NULL, S8 = 0, S4 = 0;
    int constants = 0;
    if (!bad) {
        cur = PyMem_Malloc(sizeof(int64_t) * (size_t)(S ? S : 1));
        prev = PyMem_Malloc(sizeof(int64_t) * (size_t)(S ? S : 1));
        /* Slots by width: two loops without a branch per value. */
        wide = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(S ? S : 1));
        narrow = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(S ? S : 1));
        if (cur && prev && wide && narrow)
            for (Py_ssize_t s = 0; s < S; s++) {
                if (wid[s] == 8) wide[S8++] = s;
                else if (wid[s] == 4) narrow[S4++] = s;
                else constants = 1;
            }
        if (!cur || !prev || !wide || !narrow) {
            PyMem_Free(cur);
            PyMem_Free(prev);
            PyMem_Free(wide);
            PyMem_Free(narrow);
            release(b, 15);
            PyBuffer_Release(&last.view);
            return PyErr_NoMemory();
        }
    }
    if (bad) {
        release(b, 15);
        PyBuffer_Release(&last.view);
        PyErr_Format(PyExc_ValueError, "%s (index %zd)", bad, at);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    memcpy(prev, prev_row, sizeof(int64_t) * (size_t)S);
    if (constants) /* never read from a row: the same value in both buffers, whichever is current */
        for (Py_ssize_t s = 0; s < S; s++)
            if (wid[s] == 0) cur[s] = prev[s] = pos[s];
    for (Py_ssize_t r = 0; r < rows; r++) {
        const uint8_t *row = matrix + r * stride;
        for (Py_ssize_t i = 0; i < S8; i++) {
            int64_t v;
            memcpy(&v, row + pos[wide[i]], 8);
            cur[wide[i]] = v;
        }
        for (Py_ssize_t i = 0; i < S4; i++) {
            uint32_t v;
            memcpy(&v, row + pos[narrow[i]], 4);
            cur[narrow[i]] = (int64_t)v;
        }
        double *line = out + r * width;
        /* Columns come grouped by formula: one loop per run of a formula, no switch per cell. */
        for (Py_ssize_t lo = 0; lo < C;) {
            int k = (int)kind[lo];
            Py_ssize_t hi = lo + 1;
            while (hi < C && kind[hi] == k) hi++;
            switch (k) {
            case K_RATE:
            case K_TIMER:
            case K_QUEUE: {
                /* The divisor (dD / F for a rate, dD otherwise) is the same for every column on
                   one clock: computed once per clock. The operations are Windows' own (docs/blg.md:
                   they give the CSV twin of a real log bit for bit): dN / (dD / F), dN / dD * 100. */
                int64_t last_d = -3, last_f = -3;
                double divisor = 0.0;
                int bad_time = 1;
                for (Py_ssize_t c = lo; c < hi; c++) {
                    if (ds[c] != last_d || fs[c] != last_f) {
                        last_d = ds[c];
                        last_f = fs[c];
                        int64_t dd = ds[c] >= 0 ? sub(cur[ds[c]], prev[ds[c]]) : 0;
                        double f = fs[c] >= 0 ? (double)cur[fs[c]] : (fs[c] == -2 ? 10000000.0 : 0.0);
                        divisor = k == K_RATE ? (double)dd / f : (double)dd;
                        bad_time = dd <= 0;
                    }
                    int64_t dn = sub(cur[ns[c]], prev[ns[c]]);
                    double v = (double)dn / divisor;
                    if (k == K_TIMER) v *= 100.0;
                    line[oc[c]] = (bad_time || dn < 0) ? NAN : v;
                }
                break;
            }
            case K_RAW:
                for (Py_ssize_t c = lo; c < hi; c++) line[oc[c]] = (double)cur[ns[c]];
                break;
            case K_FRACTION:
                for (Py_ssize_t c = lo; c < hi; c++) {
                    int64_t d1 = ds[c] >= 0 ? cur[ds[c]] : 0;
                    line[oc[c]] = d1 == 0 ? 0.0 : (double)cur[ns[c]] / (double)d1 * 100.0;
                }
                break;
            case K_AVERAGE:
                for (Py_ssize_t c = lo; c < hi; c++) {
                    int64_t dn = sub(cur[ns[c]], prev[ns[c]]);
                    int64_t dd = ds[c] >= 0 ? sub(cur[ds[c]], prev[ds[c]]) : 0;
                    double v = (double)dn / (double)dd;
                    if (dd == 0) v = 0.0; /* no operations in the interval: shown as 0 */
                    line[oc[c]] = (dd < 0 || dn < 0) ? NAN : v;
                }
                break;
            default:
                for (Py_ssize_t c = lo; c < hi; c++) {
                    int64_t d1 = 0, d0 = 0, b1 = 0;
                    double f = 0.0;
                    if (ds[c] >= 0) {
                        d1 = cur[ds[c]];
                        d0 = prev[ds[c]];
                    }
                    if (bs[c] >= 0) b1 = cur[bs[c]];
                    if (fs[c] >= 0) f = (double)cur[fs[c]];
                    else if (fs[c] == -2) f = 10000000.0;
                    line[oc[c]] = cook_one(k, cur[ns[c]], prev[ns[c]], d1, d0, b1, f);
                }
            }
            lo = hi;
        }
        if (r == 0) /* a two-sample value needs the column in the sample before */
            for (Py_ssize_t c = 0; c < C; c++)
                if (!ok[c] && kind[c] != K_RAW && kind[c] != K_FRACTION && kind[c] != K_ELAPSED) line[oc[c]] = NAN;
        int64_t *raw_line = raw_out + r * K;
        for (Py_ssize_t k = 0; k < K; k++) raw_line[k] = cur[rs[k]];
        int64_t *swap = prev;
        prev = cur;
        cur = swap;
    }
    memcpy(last_row, rows ? prev : prev_row, sizeof(int64_t) * (size_t)S);
    Py_END_ALLOW_THREADS
    PyMem_Free(cur);
    PyMem_Free(prev);
    PyMem_Free(wide);
    PyMem_Free(narrow);
    release(b, 15);
    PyBuffer_Release(&last.view);
    Py_RETURN_NONE;
}

/* stack(records, length, stride, out): each record (a list of bytes-like fragments) copied into
   one row of out (rows x stride bytes), at most length bytes, the rest of the row zeroed. */
static PyObject *stack(PyObject *self, PyObject *args) {
    PyObject *records, *target;
    Py_ssize_t length, stride;
    if (!PyArg_ParseTuple(args, "O!nnO", &PyList_Type, &records, &length, &stride, &target)) return NULL;
    Py_ssize_t rows = PyList_GET_SIZE(records);
    if (length < 0 || stride < length || (stride && rows > PY_SSIZE_T_MAX / stride)) {
        PyErr_SetString(PyExc_ValueError, "stack: length outside the row");
        return NULL;
    }
    buf_t out = {0};
    if (get(target, &out, 1, 1, rows * stride, "stack output") < 0) {
        if (out.held) PyBuffer_Release(&out.view);
        return NULL;
    }
    uint8_t *dst = out.view.buf;
    for (Py_ssize_t i = 0; i < rows; i++) {
        PyObject *parts = PyList_GET_ITEM(records, i);
        if (!PyList_Check(parts)) {
            PyBuffer_Release(&out.view);
            PyErr_SetString(PyExc_TypeError, "stack: each record must be a list of fragments");
            return NULL;
        }
        Py_ssize_t pos = i * stride, end = pos + length;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(parts) && pos < end; j++) {
            Py_buffer part;
            if (PyObject_GetBuffer(PyList_GET_ITEM(parts, j), &part, PyBUF_SIMPLE) < 0) {
                PyBuffer_Release(&out.view);
                return NULL;
            }
            Py_ssize_t take = part.len < end - pos ? part.len : end - pos;
            memcpy(dst + pos, part.buf, (size_t)take);
            pos += take;
            PyBuffer_Release(&part);
        }
        memset(dst + pos, 0, (size_t)(i * stride + stride - pos)); /* a short record: padded, then rejected */
    }
    PyBuffer_Release(&out.view);
    Py_RETURN_NONE;
}

/* same(matrix, rows, stride, words, template, masks, out): out[r] = 1 when every structure word of
   row r (8-byte word index words[w], bytes selected by masks[w]) equals template[w]. */
static PyObject *same(PyObject *self, PyObject *args) {
    PyObject *o[5];
    Py_ssize_t rows, stride;
    if (!PyArg_ParseTuple(args, "OnnOOOO", &o[0], &rows, &stride, &o[1], &o[2], &o[3], &o[4])) return NULL;
    if (rows < 0 || stride < 0 || stride % 8 || (stride && rows > PY_SSIZE_T_MAX / stride)) {
        PyErr_SetString(PyExc_ValueError, "same: sizes out of range");
        return NULL;
    }
    buf_t b[5];
    memset(b, 0, sizeof b);
    Py_ssize_t W = 0;
    int fail = get(o[0], &b[0], 0, 1, rows * stride, "matrix");
    if (!fail) {
        if (PyObject_GetBuffer(o[1], &b[1].view, PyBUF_C_CONTIGUOUS) < 0) fail = 1;
        else {
            b[1].held = 1;
            W = b[1].view.len / 8;
        }
    }
    fail = fail || get(o[1], &b[2], 0, 8, W, "words") || get(o[2], &b[3], 0, 8, W, "template") ||
           get(o[3], &b[4], 0, 8, W, "masks");
    buf_t res = {0};
    fail = fail || get(o[4], &res, 1, 1, rows, "same output");
    const int64_t *words = fail ? NULL : b[2].view.buf;
    for (Py_ssize_t w = 0; w < W && !fail; w++)
        if (words[w] < 0 || words[w] >= stride / 8) {
            PyErr_Format(PyExc_ValueError, "same: structure word %zd outside the row", w);
            fail = 1;
        }
    if (fail) {
        release(b, 5);
        if (res.held) PyBuffer_Release(&res.view);
        return NULL;
    }
    const uint8_t *m = b[0].view.buf;
    const uint64_t *t = b[3].view.buf, *mask = b[4].view.buf;
    uint8_t *ok = res.view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++) {
        const uint8_t *row = m + r * stride;
        uint8_t equal = 1;
        for (Py_ssize_t w = 0; w < W; w++) {
            uint64_t v;
            memcpy(&v, row + 8 * words[w], 8);
            if ((v ^ t[w]) & mask[w]) {
                equal = 0;
                break;
            }
        }
        ok[r] = equal;
    }
    Py_END_ALLOW_THREADS
    release(b, 5);
    PyBuffer_Release(&res.view);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"cook", cook, METH_VARARGS, "Gather and cook stacked .blg sample rows (see the module comment)."},
    {"stack", stack, METH_VARARGS, "Copy records' fragments into rows of a byte matrix."},
    {"same", same, METH_VARARGS, "Which rows have a layout's structure bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blgcook", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__blgcook(void) { return PyModule_Create(&module); }
