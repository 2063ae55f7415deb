/*
 * Fast parser for perfmon PDH-CSV/TSV data rows (UTF-8, every field quoted or bare).
 *
 * parse(buffer, start, columns, separator, threads, first_line)
 *   -> (values, stamps, status, bad_cells, first_bad, lines)
 *   values:    bytearray of float64, column-major (columns x rows); a missing sample (" " or "") is NaN
 *   stamps:    bytearray of int64 microseconds since 1970 of the local wall-clock time, INT64_MIN if unreadable
 *   status:    bytearray of uint8 per row: 0 ok, 1 too few fields, 2 too many fields, 3 unterminated quote
 *   bad_cells: bytearray of int32 per row: cells that are not numbers (stored as NaN, to be reported)
 *   first_bad: bytearray of int32 per row: 1-based column of the first such cell, 0 if none
 *   lines:     bytearray of int64 per row: its 1-based line in the file (blank lines are skipped)
 *
 * arrow_table(values, stamps, status, names, bias_us) -> (schema capsule, array capsule, rows kept)
 *   The rows parse() read as a struct array in the Arrow C data interface, for Polars to take
 *   without NumPy or PyArrow (start-up: docs/benchmarks.md): a "timestamp" child (microseconds,
 *   UTC: each stamp plus bias_us) and one float64 child per name, NaN as null. Only rows whose
 *   status is 0 and whose stamp was read are in it. When every row is, the value children point
 *   into `values` (kept alive by the array) and nothing is copied.
 *
 * Numbers take the exact fast path (integer mantissa < 2^53 scaled by an exact power of ten up to
 * 10^22, which rounds correctly) and fall back to strtod otherwise. Rows are split between threads
 * at line boundaries; the GIL is released while parsing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

typedef struct {
    const char *data;
    const Py_ssize_t *line_starts; /* rows + 1 entries; the last is the end of the data */
    Py_ssize_t row_begin, row_end, rows, columns;
    char sep;
    double *values;
    int64_t *stamps;
    uint8_t *status;
    int32_t *bad_cells;
    int32_t *first_bad;
} job_t;

/* Parse [p, end) as a number; returns 1 and sets *out on success. */
static int parse_number(const char *p, const char *end, double *out) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    if (p == end) return 0;
    const char *start = p;
    int negative = 0;
    if (*p == '-' || *p == '+') { negative = (*p == '-'); p++; }
    uint64_t mantissa = 0;
    int digits = 0, exponent = 0, seen = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (digits < 19) { mantissa = mantissa * 10 + (uint64_t)(*p - '0'); if (mantissa) digits++; }
        else exponent++;
        p++; seen = 1;
    }
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9') {
            if (digits < 19) { mantissa = mantissa * 10 + (uint64_t)(*p - '0'); if (mantissa) digits++; exponent--; }
            p++; seen = 1;
        }
    }
    if (!seen) return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, e = 0, eseen = 0;
        if (p < end && (*p == '-' || *p == '+')) { eneg = (*p == '-'); p++; }
        while (p < end && *p >= '0' && *p <= '9') { if (e < 10000) e = e * 10 + (*p - '0'); p++; eseen = 1; }
        if (!eseen) return 0;
        exponent += eneg ? -e : e;
    }
    if (p != end) return 0;
    if (mantissa < (1ULL << 53) && digits <= 19 && exponent >= -22 && exponent <= 22) {
        double value = (double)mantissa;
        value = exponent < 0 ? value / POW10[-exponent] : value * POW10[exponent];
        *out = negative ? -value : value;
        return 1;
    }
    /* Slow path: strtod on a NUL-terminated copy (rare: long mantissas or large exponents). */
    char buffer[128];
    size_t length = (size_t)(end - start);
    if (length >= sizeof buffer) return 0;
    memcpy(buffer, start, length);
    buffer[length] = 0;
    char *stop;
    *out = strtod(buffer, &stop);
    return stop == buffer + length;
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int read_int(const char **p, const char *end, int min_digits, int max_digits, int *out) {
    int n = 0, value = 0;
    while (*p < end && **p >= '0' && **p <= '9' && n < max_digits) { value = value * 10 + (**p - '0'); (*p)++; n++; }
    *out = value;
    return n >= min_digits;
}

/* "MM/DD/YYYY HH:MM:SS.fff" -> microseconds since 1970 (of the wall-clock time as written). */
static int64_t parse_stamp(const char *p, const char *end) {
    int month, day, year, hour, minute, second, micros = 0;
    while (p < end && *p == ' ') p++;
    if (!read_int(&p, end, 1, 2, &month) || p >= end || *p++ != '/') return INT64_MIN;
    if (!read_int(&p, end, 1, 2, &day) || p >= end || *p++ != '/') return INT64_MIN;
    if (!read_int(&p, end, 4, 4, &year) || p >= end || *p++ != ' ') return INT64_MIN;
    if (!read_int(&p, end, 1, 2, &hour) || p >= end || *p++ != ':') return INT64_MIN;
    if (!read_int(&p, end, 2, 2, &minute) || p >= end || *p++ != ':') return INT64_MIN;
    if (!read_int(&p, end, 2, 2, &second)) return INT64_MIN;
    if (p < end && *p == '.') {
        p++;
        int scale = 100000, n = 0;
        while (p < end && *p >= '0' && *p <= '9') { if (n < 6) { micros += (*p - '0') * scale; scale /= 10; } p++; n++; }
        if (n == 0) return INT64_MIN;
    }
    while (p < end && *p == ' ') p++;
    if (p != end || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return INT64_MIN;
    static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] || (month == 2 && day == 29 && !leap)) return INT64_MIN;
    int64_t days = days_from_civil(year, month, day);
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1000000LL) + micros;
}

static void *run_job(void *arg) {
    job_t *job = (job_t *)arg;
    for (Py_ssize_t row = job->row_begin; row < job->row_end; row++) {
        const char *p = job->data + job->line_starts[row];
        const char *end = job->data + job->line_starts[row + 1];
        while (end > p && (end[-1] == '\n' || end[-1] == '\r')) end--;
        Py_ssize_t field = 0;
        int32_t bad = 0, first = 0;
        uint8_t status = 0;
        for (;;) {
            const char *fs, *fe;
            if (p < end && *p == '"') {
                fs = ++p;
                const char *q = memchr(p, '"', (size_t)(end - p));
                if (!q) { status = 3; break; }
                fe = q;
                p = q + 1;
            } else {
                fs = p;
                const char *q = memchr(p, job->sep, (size_t)(end - p));
                fe = q ? q : end;
                p = fe;
            }
            if (field == 0) {
                job->stamps[row] = parse_stamp(fs, fe);
            } else if (field <= job->columns) {
                double value;
                const char *t = fs;
                while (t < fe && *t == ' ') t++;
                if (t == fe) {
                    value = NAN; /* missing sample */
                } else if (!parse_number(fs, fe, &value)) {
                    value = NAN;
                    bad++;
                    if (!first) first = (int32_t)field + 1;
                }
                job->values[(field - 1) * job->rows + row] = value;
            }
            field++;
            if (p >= end) break;
            if (*p != job->sep) { status = 3; break; } /* text after a closing quote */
            p++;
        }
        if (field == 0) job->stamps[row] = INT64_MIN;
        if (status == 0 && field < job->columns + 1) status = 1;
        if (status == 0 && field > job->columns + 1) status = 2;
        if (status != 0) {
            for (Py_ssize_t c = field > 0 ? field - 1 : 0; c < job->columns; c++) job->values[c * job->rows + row] = NAN;
        }
        job->status[row] = status;
        job->bad_cells[row] = bad;
        job->first_bad[row] = first;
    }
    return NULL;
}

static PyObject *new_buffer(Py_ssize_t size, char **data) {
    PyObject *buffer = PyByteArray_FromStringAndSize(NULL, size);
    if (buffer) *data = PyByteArray_AS_STRING(buffer);
    return buffer;
}

static PyObject *parse(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, columns, first_line;
    int sep, threads;
    if (!PyArg_ParseTuple(args, "y*nnCin", &view, &start, &columns, &sep, &threads, &first_line)) return NULL;
    const char *data = (const char *)view.buf;
    Py_ssize_t size = view.len;
    if (start < 0 || start > size || columns < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start or columns out of range");
        return NULL;
    }
    /* Line starts: every non-empty line after `start` is a row. */
    Py_ssize_t capacity = 1024, rows = 0, line = first_line;
    Py_ssize_t *starts = malloc(sizeof(Py_ssize_t) * (size_t)capacity);
    int64_t *line_numbers = malloc(sizeof(int64_t) * (size_t)capacity);
    if (!starts || !line_numbers) { free(starts); free(line_numbers); PyBuffer_Release(&view); return PyErr_NoMemory(); }
    Py_ssize_t pos = start;
    while (pos < size) {
        const char *nl = memchr(data + pos, '\n', (size_t)(size - pos));
        Py_ssize_t next = nl ? (nl - data) + 1 : size;
        int blank = 1;
        for (Py_ssize_t i = pos; i < next; i++) if (data[i] != '\r' && data[i] != '\n') { blank = 0; break; }
        if (!blank) {
            if (rows + 2 > capacity) {
                capacity *= 2;
                Py_ssize_t *grown = realloc(starts, sizeof(Py_ssize_t) * (size_t)capacity);
                int64_t *grown_lines = grown ? realloc(line_numbers, sizeof(int64_t) * (size_t)capacity) : NULL;
                if (!grown || !grown_lines) {
                    free(grown ? grown : starts); free(line_numbers); PyBuffer_Release(&view); return PyErr_NoMemory();
                }
                starts = grown;
                line_numbers = grown_lines;
            }
            line_numbers[rows] = line;
            starts[rows++] = pos;
            starts[rows] = next;
        }
        line++;
        pos = next;
    }
    if (columns > 0 && rows > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) / columns) {
        /* columns x rows values would not fit in a Py_ssize_t: refuse rather than wrap around */
        free(starts); free(line_numbers); PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "columns x rows out of range");
        return NULL;
    }
    char *values, *stamps, *status, *bad, *first, *lines;
    PyObject *b_values = new_buffer((Py_ssize_t)sizeof(double) * columns * rows, &values);
    PyObject *b_stamps = new_buffer((Py_ssize_t)sizeof(int64_t) * rows, &stamps);
    PyObject *b_status = new_buffer(rows, &status);
    PyObject *b_bad = new_buffer((Py_ssize_t)sizeof(int32_t) * rows, &bad);
    PyObject *b_first = new_buffer((Py_ssize_t)sizeof(int32_t) * rows, &first);
    PyObject *b_lines = new_buffer((Py_ssize_t)sizeof(int64_t) * rows, &lines);
    if (!b_values || !b_stamps || !b_status || !b_bad || !b_first || !b_lines) {
        Py_XDECREF(b_values); Py_XDECREF(b_stamps); Py_XDECREF(b_status); Py_XDECREF(b_bad); Py_XDECREF(b_first);
        Py_XDECREF(b_lines);
        free(starts);
        free(line_numbers);
        PyBuffer_Release(&view);
        return NULL;
    }
    if (threads < 1) threads = 1;
    if (threads > 16) threads = 16;
    if (rows < 64) threads = 1;
    job_t jobs[16];
    pthread_t ids[16];
    int started[16] = {0};
    Py_BEGIN_ALLOW_THREADS
    for (int t = 0; t < threads; t++) {
        jobs[t] = (job_t){data, starts, rows * t / threads, rows * (t + 1) / threads, rows, columns, (char)sep,
                          (double *)values, (int64_t *)stamps, (uint8_t *)status, (int32_t *)bad, (int32_t *)first};
        if (t > 0 && pthread_create(&ids[t], NULL, run_job, &jobs[t]) == 0) started[t] = 1;
    }
    run_job(&jobs[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t]) pthread_join(ids[t], NULL);
        else run_job(&jobs[t]);
    }
    Py_END_ALLOW_THREADS
    if (rows) memcpy(lines, line_numbers, sizeof(int64_t) * (size_t)rows);
    free(starts);
    free(line_numbers);
    PyBuffer_Release(&view);
    return Py_BuildValue("(NNNNNN)", b_values, b_stamps, b_status, b_bad, b_first, b_lines);
}


/* --- Arrow C data interface export (https://arrow.apache.org/docs/format/CDataInterface.html) --- */

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#define ARROW_FLAG_NULLABLE 2

/* What one exported array owns: its buffer pointers, memory it allocated, a Python object. */
typedef struct {
    const void *buffers[2];
    void *owned[2];
    PyObject *owner;
} holding_t;

static void release_schema(struct ArrowSchema *schema) {
    if (!schema || !schema->release) return;
    for (int64_t i = 0; i < schema->n_children; i++) {
        struct ArrowSchema *child = schema->children[i];
        if (child->release) child->release(child);
        free(child);
    }
    free(schema->children);
    free(schema->private_data); /* the copied name */
    schema->release = NULL;
}

static void release_array(struct ArrowArray *array) {
    if (!array || !array->release) return;
    for (int64_t i = 0; i < array->n_children; i++) {
        struct ArrowArray *child = array->children[i];
        if (child->release) child->release(child);
        free(child);
    }
    free(array->children);
    holding_t *holding = array->private_data;
    if (holding) {
        free(holding->owned[0]);
        free(holding->owned[1]);
        if (holding->owner) {
            /* The consumer may release from any thread, without the GIL. */
            PyGILState_STATE state = PyGILState_Ensure();
            Py_DECREF(holding->owner);
            PyGILState_Release(state);
        }
        free(holding);
    }
    array->release = NULL;
}

static int child_schema(struct ArrowSchema *schema, const char *format, const char *name, Py_ssize_t length) {
    char *copy = malloc((size_t)length + 1);
    if (!copy) return -1;
    memcpy(copy, name, (size_t)length);
    copy[length] = '\0';
    *schema = (struct ArrowSchema){format, copy, NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, copy};
    return 0;
}

/* A float64 or int64 child over `data` (rows long); a validity bitmap when a value is NaN. */
static int child_array(struct ArrowArray *array, const void *data, void *owned, PyObject *owner, int64_t rows,
                       int nan_is_null) {
    holding_t *holding = calloc(1, sizeof(holding_t));
    if (!holding) { free(owned); return -1; }
    holding->owned[0] = owned;
    holding->buffers[1] = data;
    int64_t nulls = 0;
    if (nan_is_null) {
        const double *values = data;
        for (int64_t r = 0; r < rows; r++) nulls += isnan(values[r]) ? 1 : 0;
        if (nulls) {
            uint8_t *valid = calloc((size_t)(rows + 7) / 8, 1);
            if (!valid) { free(owned); free(holding); return -1; }
            for (int64_t r = 0; r < rows; r++)
                if (!isnan(values[r])) valid[r >> 3] |= (uint8_t)(1u << (r & 7));
            holding->owned[1] = valid;
            holding->buffers[0] = valid;
        }
    }
    if (owner) { Py_INCREF(owner); holding->owner = owner; }
    *array = (struct ArrowArray){rows, nulls, 0, 2, 0, holding->buffers, NULL, NULL, release_array, holding};
    return 0;
}

static void free_schema_capsule(PyObject *capsule) {
    struct ArrowSchema *schema = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (schema) { release_schema(schema); free(schema); }
}

static void free_array_capsule(PyObject *capsule) {
    struct ArrowArray *array = PyCapsule_GetPointer(capsule, "arrow_array");
    if (array) { release_array(array); free(array); }
}

static PyObject *arrow_table(PyObject *self, PyObject *args) {
    PyObject *values_obj, *names;
    Py_buffer stamps_view, status_view;
    long long bias;
    if (!PyArg_ParseTuple(args, "Oy*y*O!L", &values_obj, &stamps_view, &status_view, &PyList_Type, &names, &bias))
        return NULL;
    Py_buffer values_view;
    if (PyObject_GetBuffer(values_obj, &values_view, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&stamps_view); PyBuffer_Release(&status_view);
        return NULL;
    }
    Py_ssize_t rows = stamps_view.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t columns = PyList_GET_SIZE(names);
    const int64_t *stamps = stamps_view.buf;
    const uint8_t *status = status_view.buf;
    const double *values = values_view.buf;
    PyObject *result = NULL;
    struct ArrowSchema *schema = calloc(1, sizeof(struct ArrowSchema));
    struct ArrowArray *array = calloc(1, sizeof(struct ArrowArray));
    struct ArrowSchema **schemas = calloc((size_t)columns + 1, sizeof(struct ArrowSchema *));
    struct ArrowArray **arrays = calloc((size_t)columns + 1, sizeof(struct ArrowArray *));
    int64_t *kept = malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1));
    if (!schema || !array || !schemas || !arrays || !kept) goto nomemory;
    if (status_view.len != rows || values_view.len != (Py_ssize_t)sizeof(double) * rows * columns) {
        PyErr_SetString(PyExc_ValueError, "values, stamps and status do not describe the same rows");
        goto fail;
    }
    int64_t length = 0;
    for (Py_ssize_t r = 0; r < rows; r++)
        if (status[r] == 0 && stamps[r] != INT64_MIN) kept[length++] = r;
    int every_row = length == rows;
    /* The schema first: the array's release frees whatever was built, the schema's likewise. */
    *schema = (struct ArrowSchema){"+s", NULL, NULL, 0, 0, schemas, NULL, release_schema, NULL};
    *array = (struct ArrowArray){length, 0, 0, 1, 0, NULL, arrays, NULL, release_array, NULL};
    static const void *no_validity[1] = {NULL};
    array->buffers = no_validity;
    for (Py_ssize_t c = 0; c <= columns; c++) {
        schemas[c] = calloc(1, sizeof(struct ArrowSchema));
        arrays[c] = calloc(1, sizeof(struct ArrowArray));
        if (!schemas[c] || !arrays[c]) { free(schemas[c]); free(arrays[c]); goto nomemory; }
        schema->n_children = array->n_children = c + 1;
        const char *name = "timestamp";
        Py_ssize_t name_length = 9;
        if (c > 0) {
            name = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(names, c - 1), &name_length);
            if (!name) goto fail;
        }
        if (child_schema(schemas[c], c ? "g" : "tsu:UTC", name, name_length) < 0) goto nomemory;
        if (c == 0) {
            int64_t *shifted = malloc(sizeof(int64_t) * (size_t)(length ? length : 1));
            if (!shifted) goto nomemory;
            for (int64_t i = 0; i < length; i++) shifted[i] = stamps[kept[i]] + bias;
            if (child_array(arrays[c], shifted, shifted, NULL, length, 0) < 0) goto nomemory;
        } else if (every_row) {
            if (child_array(arrays[c], values + (c - 1) * rows, NULL, values_obj, length, 1) < 0) goto nomemory;
        } else {
            double *compact = malloc(sizeof(double) * (size_t)(length ? length : 1));
            if (!compact) goto nomemory;
            const double *column = values + (c - 1) * rows;
            for (int64_t i = 0; i < length; i++) compact[i] = column[kept[i]];
            if (child_array(arrays[c], compact, compact, NULL, length, 1) < 0) goto nomemory;
        }
    }
    schemas = NULL;
    arrays = NULL;
    PyObject *schema_capsule = PyCapsule_New(schema, "arrow_schema", free_schema_capsule);
    if (!schema_capsule) goto fail;
    schema = NULL; /* the capsule owns it now */
    PyObject *array_capsule = PyCapsule_New(array, "arrow_array", free_array_capsule);
    if (!array_capsule) { Py_DECREF(schema_capsule); goto fail; }
    array = NULL;
    result = Py_BuildValue("(NNL)", schema_capsule, array_capsule, (long long)length);
    goto done;
nomemory:
    PyErr_NoMemory();
fail:
    if (schema && schema->release) release_schema(schema);
    else if (schemas) { for (Py_ssize_t c = 0; c <= columns; c++) free(schemas[c]); free(schemas); }
    if (array && array->release) release_array(array);
    else if (arrays) { for (Py_ssize_t c = 0; c <= columns; c++) free(arrays[c]); free(arrays); }
    free(schema);
    free(array);
done:
    free(kept);
    PyBuffer_Release(&values_view);
    PyBuffer_Release(&stamps_view);
    PyBuffer_Release(&status_view);
    return result;
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_VARARGS, "Parse PDH-CSV data rows; see the module source for the result layout."},
    {"arrow_table", arrow_table, METH_VARARGS, "parse()'s sound rows as an Arrow struct array (two capsules and the row count)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pdhcsv", "Fast PDH-CSV row parser.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pdhcsv(void) { return PyModule_Create(&module); }
