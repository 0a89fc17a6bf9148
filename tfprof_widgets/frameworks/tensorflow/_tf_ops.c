/*
 * XProf's ParseTfOpFullname over many event names at once (see tf_ops.py, whose
 * parse_tf_op is the reference: this gives exactly its results).
 *
 * A capture names thousands of distinct ops ('dense/MatMul:MatMul', kernel names, tf.data
 * iterators); parsing each in Python costs about a microsecond, which an 8-GPU capture's
 * analyses feel. Names that are pure ASCII are parsed here; any other (and anything that is
 * not a str) is left to Python, marked in the returned categories as -1.
 *
 * parse(names: list) -> (categories: bytes of int8 codes, op_names: list, op_types: list)
 * Category codes: 0 unknown, 1 tensorflow, 2 tf_data, 3 jax, 4 memcpy, -1 not parsed here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { UNKNOWN = 0, TENSORFLOW = 1, TF_DATA = 2, JAX = 3, MEMCPY = 4, NOT_HERE = -1 };

static int is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* TF_OP_NAME: [A-Za-z0-9.][A-Za-z0-9_./>-]* */
static int tf_op_name(const char *s, Py_ssize_t n) {
    if (n < 1 || !(is_alnum(s[0]) || s[0] == '.')) return 0;
    for (Py_ssize_t i = 1; i < n; i++) {
        char c = s[i];
        if (!(is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '>' || c == '-')) return 0;
    }
    return 1;
}

/* TF_OP_TYPE: [A-Z_][a-zA-Z0-9_]* */
static int tf_op_type(const char *s, Py_ssize_t n) {
    if (n < 1 || !((s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    for (Py_ssize_t i = 1; i < n; i++)
        if (!(is_alnum(s[i]) || s[i] == '_')) return 0;
    return 1;
}

/* JAX_OP_TYPE: [a-z_][a-z0-9_]*(\[.*\])?  ('.' matches anything but a newline) */
static int jax_op_type(const char *s, Py_ssize_t n) {
    if (n < 1 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_')) return 0;
    Py_ssize_t i = 1;
    while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
        i++;
    if (i == n) return 1;
    if (s[i] != '[' || n - i < 2 || s[n - 1] != ']') return 0;
    return memchr(s + i + 1, '\n', (size_t)(n - i - 2)) == NULL;
}

/* _derive_op_type: the last path component, without a trailing '_<digits>' (with any
 * leading '-' on the digits), as [start, end) of s. */
static void derive_op_type(const char *s, Py_ssize_t n, Py_ssize_t *a, Py_ssize_t *b) {
    Py_ssize_t start = n;
    while (start > 0 && s[start - 1] != '/') start--;
    Py_ssize_t u = n;
    while (u > start && s[u - 1] != '_') u--;
    *a = start;
    *b = n;
    if (u == start) return; /* no '_' in the component */
    Py_ssize_t head_end = u - 1, d = u;
    if (head_end == start) return; /* empty head */
    while (d < n && s[d] == '-') d++;
    if (d == n) return; /* nothing after the dashes */
    for (Py_ssize_t k = d; k < n; k++)
        if (s[k] < '0' || s[k] > '9') return;
    *b = head_end;
}

static int starts_lower(const char *s, Py_ssize_t n, const char *prefix) {
    size_t m = strlen(prefix);
    if ((size_t)n < m) return 0;
    for (size_t i = 0; i < m; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != prefix[i]) return 0;
    }
    return 1;
}

static const char *MEMCPY_PREFIX[4] = {"memcpyhtod", "memcpydtoh", "memcpydtod", "memcpyhtoh"};
static const char *MEMCPY_TYPE[4] = {"MemcpyHToD", "MemcpyDToH", "MemcpyDToD", "MemcpyHToH"};

/* One ASCII name: its category, and op name / op type as new references. */
static int parse_one(PyObject *full, const char *s, Py_ssize_t n, PyObject **name,
                     PyObject **type, PyObject *empty, PyObject *dataset) {
    const char *colon = memchr(s, ':', (size_t)n);
    if (!colon) {
        for (int k = 0; k < 4; k++) {
            if (starts_lower(s, n, MEMCPY_PREFIX[k])) {
                Py_INCREF(full);
                *name = full;
                *type = PyUnicode_FromString(MEMCPY_TYPE[k]);
                return *type ? MEMCPY : -2;
            }
        }
        Py_INCREF(full);
        Py_INCREF(empty);
        *name = full;
        *type = empty;
        return UNKNOWN;
    }
    Py_ssize_t c = colon - s;
    const char *t = colon + 1;
    Py_ssize_t tn = n - c - 1;
    if (c == 8 && memcmp(s, "Iterator", 8) == 0) {
        Py_INCREF(full);
        Py_INCREF(dataset);
        *name = full;
        *type = dataset;
        return TF_DATA;
    }
    if (tf_op_name(s, c) && tf_op_type(t, tn)) {
        *name = PyUnicode_FromStringAndSize(s, c);
        *type = PyUnicode_FromStringAndSize(t, tn);
        return (*name && *type) ? TENSORFLOW : -2;
    }
    const char *d = t;
    Py_ssize_t dn = tn;
    if (tn == 0) {
        Py_ssize_t a, b;
        derive_op_type(s, c, &a, &b);
        d = s + a;
        dn = b - a;
    }
    if (jax_op_type(d, dn)) {
        const char *bracket = memchr(d, '[', (size_t)dn);
        *name = PyUnicode_FromStringAndSize(s, c);
        *type = PyUnicode_FromStringAndSize(d, bracket ? bracket - d : dn);
        return (*name && *type) ? JAX : -2;
    }
    if (tn == 0) {
        *name = PyUnicode_FromStringAndSize(s, c);
        *type = PyUnicode_FromStringAndSize(d, dn);
        return (*name && *type) ? TENSORFLOW : -2;
    }
    Py_INCREF(full);
    Py_INCREF(empty);
    *name = full;
    *type = empty;
    return UNKNOWN;
}

static PyObject *py_parse(PyObject *self, PyObject *arg) {
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "parse() takes a list of names");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(arg);
    PyObject *cats = PyBytes_FromStringAndSize(NULL, n);
    PyObject *names = PyList_New(n), *types = PyList_New(n);
    PyObject *empty = PyUnicode_FromString(""), *dataset = PyUnicode_FromString("Dataset");
    PyObject *result = NULL;
    if (!cats || !names || !types || !empty || !dataset) goto done;
    char *code = PyBytes_AS_STRING(cats);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *full = PyList_GET_ITEM(arg, i), *name = NULL, *type = NULL;
        int cat = NOT_HERE;
        if (PyUnicode_CheckExact(full) && PyUnicode_IS_ASCII(full)) {
            cat = parse_one(full, (const char *)PyUnicode_DATA(full), PyUnicode_GET_LENGTH(full),
                            &name, &type, empty, dataset);
            if (cat == -2) {
                Py_XDECREF(name);
                Py_XDECREF(type);
                goto done;
            }
        }
        if (cat == NOT_HERE) { /* left to Python */
            Py_INCREF(Py_None);
            Py_INCREF(Py_None);
            name = type = Py_None;
        }
        code[i] = (char)cat;
        PyList_SET_ITEM(names, i, name);
        PyList_SET_ITEM(types, i, type);
    }
    result = PyTuple_Pack(3, cats, names, types);
done:
    Py_XDECREF(cats);
    Py_XDECREF(names);
    Py_XDECREF(types);
    Py_XDECREF(empty);
    Py_XDECREF(dataset);
    return result;
}

static PyMethodDef methods[] = {
    {"parse", py_parse, METH_O,
     "parse(names: list) -> (int8 category codes as bytes, op names, op types); a code of -1\n"
     "marks a name left to Python (not an ASCII str)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tf_ops",
                                    "ParseTfOpFullname over many names.", -1, methods};

PyMODINIT_FUNC PyInit__tf_ops(void) { return PyModule_Create(&module); }
