/*
 * Exact sums of doubles, binned by power of two: the inner loop of metrics.Reduction.add.
 *
 * bin_mantissas(values, rows, width, by_column, high, low)
 *
 *   values  float64 rows x width: one batch of per-sample expressions, in C order, or in
 *           Fortran order (column after column, as Polars hands a frame over) when by_column
 *   high    int64[width * 2100], updated in place: per column and frexp exponent (shifted by
 *           1074), the sum of the upper bits of the integer mantissas (mantissa >> 26)
 *   low     int64[width * 2100], updated in place: the sum of the lower 26 bits
 *
 * Each finite value v is frexp(v) = m * 2**e with 0.5 <= |m| < 1; m * 2**53 is an integer below
 * 2**53 in magnitude, split in two so that neither sum can overflow in any realistic log. A value
 * that is not finite (NaN also stands for "no sample") adds nothing, as 0 does. The NumPy path in
 * metrics.py leaves exactly the same numbers in the bins (the tests compare both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EXPONENTS 2100
#define EXPONENT_SHIFT 1074
#define SPLIT 26

static PyObject *bin_mantissas(PyObject *self, PyObject *args) {
    PyObject *values_obj, *high_obj, *low_obj;
    Py_ssize_t rows, width;
    int by_column;
    if (!PyArg_ParseTuple(args, "OnnpOO", &values_obj, &rows, &width, &by_column, &high_obj, &low_obj))
        return NULL;
    if (rows < 0 || width < 0 || (width > 0 && rows > PY_SSIZE_T_MAX / 8 / width) ||
        (width > PY_SSIZE_T_MAX / 8 / EXPONENTS)) {
        PyErr_SetString(PyExc_ValueError, "bin_mantissas: bad shape");
        return NULL;
    }
    Py_buffer values, high, low;
    if (PyObject_GetBuffer(values_obj, &values, PyBUF_ANY_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(high_obj, &high, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&values);
        return NULL;
    }
    if (PyObject_GetBuffer(low_obj, &low, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&values);
        PyBuffer_Release(&high);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t bins = width * EXPONENTS;
    if (values.len != rows * width * 8 || high.len != bins * 8 || low.len != bins * 8) {
        PyErr_Format(PyExc_ValueError, "bin_mantissas: %zd, %zd and %zd bytes for %zd x %zd values",
                     values.len, high.len, low.len, rows, width);
        goto done;
    }
    const double *v = (const double *)values.buf;
    int64_t *hi = (int64_t *)high.buf, *lo = (int64_t *)low.buf;
    Py_ssize_t row_step = by_column ? 1 : width, column_step = by_column ? rows : 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < width; c++) {
        int64_t *hi_c = hi + c * EXPONENTS, *lo_c = lo + c * EXPONENTS;
        const double *column = v + c * column_step;
        for (Py_ssize_t r = 0; r < rows; r++) {
            double x = column[r * row_step];
            uint64_t bits;
            memcpy(&bits, &x, 8);
            int biased = (int)((bits >> 52) & 0x7ff);
            if (biased == 0x7ff || x == 0.0) continue; /* NaN, infinite or zero: adds nothing */
            int e;
            int64_t whole;
            if (biased) { /* normal: frexp's m * 2**53 is the significand with its hidden bit */
                e = biased - 1022;
                whole = (int64_t)((bits & 0xfffffffffffffULL) | 0x10000000000000ULL);
                if (bits >> 63) whole = -whole;
            } else { /* subnormal: let frexp normalise it */
                double m = frexp(x, &e);
                whole = (int64_t)(m * 9007199254740992.0); /* 2**53: exact, |m| < 1 */
            }
            /* floor(whole / 2**26), as NumPy's >> on int64 gives, without relying on how C
               shifts a negative number */
            int64_t upper = whole >= 0 ? whole / (1 << SPLIT) : -((-whole + (1 << SPLIT) - 1) / (1 << SPLIT));
            hi_c[e + EXPONENT_SHIFT] += upper;
            lo_c[e + EXPONENT_SHIFT] += whole - upper * (1 << SPLIT);
        }
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&high);
    PyBuffer_Release(&low);
    return result;
}

static PyMethodDef methods[] = {
    {"bin_mantissas", bin_mantissas, METH_VARARGS, "Add a batch's mantissas to the exact-sum bins."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_exactsum", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__exactsum(void) { return PyModule_Create(&module); }
