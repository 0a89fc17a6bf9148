/*
 * Fast columnar walk of an XSpace protobuf (the *.xplane.pb wire format).
 *
 * Python's protobuf runtime builds one object per event and per stat, and reading their
 * fields back from Python costs about a microsecond each. This walker reads the wire bytes
 * once and emits flat columns instead:
 *
 *   events: line index, metadata id, offset_ps, duration_ps, num_occurrences (0 = timed)
 *   stats:  owning event, metadata id, oneof field number (2..8; 0 = no value), an int64
 *           payload (varint, or the double's bits) and, for string/bytes kinds, the byte
 *           offset and length of the value inside the input buffer.
 *
 * Everything that is not an event (plane names, metadata maps, plane stats, line names and
 * timestamps, XSpace errors/warnings/hostnames) is returned as the concatenation of those
 * fields' raw bytes per message, which the protobuf runtime then parses: a protobuf message
 * is the concatenation of its fields, so these "headers" parse as the same message minus its
 * lines/events. Field numbers follow TensorFlow's tsl/profiler/protobuf/xplane.proto.
 *
 * Any malformed input (a length or varint running past its enclosing message, an invalid
 * wire type, a field number protobuf refuses: 0 or a tag beyond 32 bits) stops the walk with
 * ValueError("... at byte N"), where protobuf stops too; unknown groups are skipped as
 * protobuf skips them. Every read is
 * bounds-checked against the end of the enclosing message; nothing is allocated from a
 * length prefix that has not been checked against the bytes that are really there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len;  /* bytes used */
    size_t cap;
} buf_t;

static int buf_reserve(buf_t *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    char *d = (char *)realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static inline int buf_put(buf_t *b, const void *src, size_t n) {
    if (buf_reserve(b, n)) return -1;
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

typedef struct {
    const uint8_t *base;  /* start of the whole input, for error offsets */
    const char *error;
    size_t error_at;
    buf_t ev_line, ev_md, ev_off, ev_dur, ev_occ;
    buf_t st_owner, st_md, st_kind, st_val, st_soff, st_slen;
    int64_t n_events;
    int64_t n_stats;
    int32_t n_lines;
    /* Memory budget of the load: every event and stat met costs its measured peak bytes; past
     * the budget the walk stops (too_large) before the columns outgrow memory. */
    int64_t budget, event_cost, stat_cost;
    int too_large;
    PyObject *planes;  /* list of bytes: plane headers */
    PyObject *lines;   /* list of (plane index, bytes header) */
    buf_t space_hdr;
} walk_t;

static int fail(walk_t *w, const uint8_t *at, const char *why) {
    if (!w->error) {
        w->error = why;
        w->error_at = (size_t)(at - w->base);
    }
    return -1;
}

static inline int read_varint(walk_t *w, const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end) return fail(w, p, "a varint runs past the end of its message");
        uint8_t b = *p++;
        /* A tenth byte's bits past the 64th are dropped, as protobuf (upb) drops them. */
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = r;
            *pp = p;
            return 0;
        }
    }
    return fail(w, p, "a varint is longer than 10 bytes");
}

/* Read a length prefix and check it against the bytes left in the enclosing message. */
static inline int read_len(walk_t *w, const uint8_t **pp, const uint8_t *end, const uint8_t **sub_end) {
    uint64_t n;
    const uint8_t *at = *pp;
    if (read_varint(w, pp, end, &n)) return -1;
    if (n > (uint64_t)(end - *pp)) return fail(w, at, "a length prefix claims more bytes than its message holds");
    *sub_end = *pp + n;
    return 0;
}

/* A field's tag, checked as protobuf checks it: a 32-bit varint whose field number is not 0
 * (so at most 2^29 - 1). */
static inline int read_tag(walk_t *w, const uint8_t **pp, const uint8_t *end, int *field, int *wt) {
    uint64_t tag;
    const uint8_t *at = *pp;
    if (read_varint(w, pp, end, &tag)) return -1;
    if (tag > 0xFFFFFFFFu) return fail(w, at, "a field tag is longer than 32 bits");
    if ((tag >> 3) == 0) return fail(w, at, "a field number 0 (no protobuf field has it)");
    *field = (int)(tag >> 3);
    *wt = (int)(tag & 7);
    return 0;
}

static int skip_field(walk_t *w, const uint8_t **pp, const uint8_t *end, int wt, int field);

/* An unknown group (wire type 3) up to its end tag (wire type 4, same field number), as
 * protobuf skips it; nested no deeper than protobuf's recursion limit. */
static int skip_group(walk_t *w, const uint8_t **pp, const uint8_t *end, int field, int depth) {
    if (depth > 100) return fail(w, *pp, "groups nested deeper than protobuf allows");
    while (*pp < end) {
        int f, wt;
        if (read_tag(w, pp, end, &f, &wt)) return -1;
        if (wt == 4) {
            if (f != field) return fail(w, *pp, "a group ends with another field's end tag");
            return 0;
        }
        if (wt == 3) {
            if (skip_group(w, pp, end, f, depth + 1)) return -1;
        } else if (skip_field(w, pp, end, wt, f)) {
            return -1;
        }
    }
    return fail(w, *pp, "a group runs past the end of its message");
}

static int skip_field(walk_t *w, const uint8_t **pp, const uint8_t *end, int wt, int field) {
    uint64_t v;
    const uint8_t *sub_end;
    switch (wt) {
        case 0: return read_varint(w, pp, end, &v);
        case 1:
            if (end - *pp < 8) return fail(w, *pp, "a fixed64 runs past the end of its message");
            *pp += 8;
            return 0;
        case 2:
            if (read_len(w, pp, end, &sub_end)) return -1;
            *pp = sub_end;
            return 0;
        case 5:
            if (end - *pp < 4) return fail(w, *pp, "a fixed32 runs past the end of its message");
            *pp += 4;
            return 0;
        case 3: return skip_group(w, pp, end, field, 0);
        case 4: return fail(w, *pp, "a group's end tag without its start");
        default: return fail(w, *pp, "an invalid wire type (a damaged tag)");
    }
}

#define PUT(b, v) do { if (buf_put(&(b), &(v), sizeof(v))) { PyErr_NoMemory(); return -2; } } while (0)

static int walk_stat(walk_t *w, const uint8_t *p, const uint8_t *end, int64_t owner) {
    int64_t md = 0, val = 0, soff = 0, slen = 0;
    int8_t kind = 0;
    while (p < end) {
        int field, wt;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        uint64_t v;
        const uint8_t *sub_end;
        if (wt == 0 && (field == 1 || field == 3 || field == 4 || field == 7)) {
            if (read_varint(w, &p, end, &v)) return -1;
            if (field == 1) md = (int64_t)v;
            else { kind = (int8_t)field; val = (int64_t)v; }
        } else if (wt == 1 && field == 2) {
            if (end - p < 8) return fail(w, p, "a double stat runs past the end of its message");
            memcpy(&val, p, 8);
            p += 8;
            kind = 2;
        } else if (wt == 2 && (field == 5 || field == 6 || field == 8)) {
            if (read_len(w, &p, end, &sub_end)) return -1;
            kind = (int8_t)field;
            soff = (int64_t)(p - w->base);
            slen = (int64_t)(sub_end - p);
            p = sub_end;
        } else if (skip_field(w, &p, end, wt, field)) {
            return -1;
        }
    }
    if (w->budget > 0 && (w->n_events * w->event_cost + ++w->n_stats * w->stat_cost) > w->budget) {
        w->too_large = 1;
        return fail(w, p, "the capture holds more events and stats than the memory budget");
    }
    PUT(w->st_owner, owner);
    PUT(w->st_md, md);
    PUT(w->st_kind, kind);
    PUT(w->st_val, val);
    PUT(w->st_soff, soff);
    PUT(w->st_slen, slen);
    return 0;
}

static int walk_event(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t line) {
    int64_t md = 0, off = 0, dur = 0, occ = 0;
    int64_t me = w->n_events;
    while (p < end) {
        int field, wt;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        uint64_t v;
        const uint8_t *sub_end;
        if (wt == 0 && (field == 1 || field == 2 || field == 3 || field == 5)) {
            if (read_varint(w, &p, end, &v)) return -1;
            if (field == 1) md = (int64_t)v;
            else if (field == 2) { off = (int64_t)v; occ = 0; }  /* oneof: last one wins */
            else if (field == 3) dur = (int64_t)v;
            else { occ = (int64_t)v; off = 0; }
        } else if (wt == 2 && field == 4) {
            if (read_len(w, &p, end, &sub_end)) return -1;
            int rc = walk_stat(w, p, sub_end, me);
            if (rc) return rc;
            p = sub_end;
        } else if (skip_field(w, &p, end, wt, field)) {
            return -1;
        }
    }
    if (w->budget > 0 && ((w->n_events + 1) * w->event_cost + w->n_stats * w->stat_cost) > w->budget) {
        w->too_large = 1;
        return fail(w, p, "the capture holds more events and stats than the memory budget");
    }
    PUT(w->ev_line, line);
    PUT(w->ev_md, md);
    PUT(w->ev_off, off);
    PUT(w->ev_dur, dur);
    PUT(w->ev_occ, occ);
    w->n_events++;
    return 0;
}

typedef int (*child_fn)(walk_t *, const uint8_t *, const uint8_t *, int32_t);

/* Walks one message: each length-delimited field `child_field` is handed to `child` (with
 * `child_arg`); every other field's raw bytes are appended to `hdr`. */
static int walk_split(walk_t *w, const uint8_t *p, const uint8_t *end, int child_field,
                      child_fn child, int32_t child_arg, buf_t *hdr) {
    int rc = 0;
    while (p < end && !rc) {
        const uint8_t *start = p;
        int field, wt;
        const uint8_t *sub_end;
        if ((rc = read_tag(w, &p, end, &field, &wt))) break;
        if (field == child_field && wt == 2) {
            if ((rc = read_len(w, &p, end, &sub_end))) break;
            rc = child(w, p, sub_end, child_arg);
            p = sub_end;
        } else {
            if ((rc = skip_field(w, &p, end, wt, field))) break;
            if (buf_put(hdr, start, (size_t)(p - start))) { PyErr_NoMemory(); rc = -2; }
        }
    }
    return rc;
}

/* A line: its events (field 4) become columns, the rest its header (plane index, bytes). */
static int walk_line(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t plane) {
    buf_t hdr = {0};
    int rc = walk_split(w, p, end, 4, walk_event, w->n_lines++, &hdr);
    if (!rc) {
        PyObject *item = Py_BuildValue("(iy#)", plane, hdr.data ? hdr.data : "", (Py_ssize_t)hdr.len);
        if (!item || PyList_Append(w->lines, item)) rc = -2;
        Py_XDECREF(item);
    }
    free(hdr.data);
    return rc;
}

/* A plane: its lines (field 3) are walked, the rest becomes its header. */
static int walk_plane(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t me) {
    buf_t hdr = {0};
    int rc = walk_split(w, p, end, 3, walk_line, me, &hdr);
    if (!rc) {
        PyObject *item = PyBytes_FromStringAndSize(hdr.data ? hdr.data : "", (Py_ssize_t)hdr.len);
        if (!item || PyList_Append(w->planes, item)) rc = -2;
        Py_XDECREF(item);
    }
    free(hdr.data);
    return rc;
}

static int walk_space(walk_t *w, const uint8_t *p, const uint8_t *end) {
    int32_t n_planes = 0;
    while (p < end) {
        const uint8_t *start = p;
        int field, wt;
        const uint8_t *sub_end;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        if (field == 1 && wt == 2) {
            if (read_len(w, &p, end, &sub_end)) return -1;
            int rc = walk_plane(w, p, sub_end, n_planes++);
            if (rc) return rc;
            p = sub_end;
        } else {
            if (skip_field(w, &p, end, wt, field)) return -1;
            if (buf_put(&w->space_hdr, start, (size_t)(p - start))) { PyErr_NoMemory(); return -2; }
        }
    }
    return 0;
}

static PyObject *to_bytes(buf_t *b) {
    return PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
}

/* A column handed to Python without a copy: it owns the walk's buffer and exports it by
 * the buffer protocol (numpy.frombuffer reads it in place). Copying ~100 MB of columns for
 * a 1 M-event capture into bytes objects cost a tenth of a second, most of it faulting in
 * fresh pages. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len;
} ColumnObject;

static void column_dealloc(ColumnObject *self) {
    free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int column_getbuffer(ColumnObject *self, Py_buffer *view, int flags) {
    static char empty[1];
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data ? self->data : empty, self->len,
                             0, flags);
}

static PyBufferProcs column_as_buffer = {(getbufferproc)column_getbuffer, NULL};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfprof_widgets.readers._wire.Column",
    .tp_basicsize = sizeof(ColumnObject),
    .tp_dealloc = (destructor)column_dealloc,
    .tp_as_buffer = &column_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One column of a walk: its bytes, exported by the buffer protocol.",
};

/* The buffer as a Column; the walk no longer owns it. */
static PyObject *to_column(buf_t *b) {
    ColumnObject *col = PyObject_New(ColumnObject, &ColumnType);
    if (!col) return NULL;
    col->data = b->data;
    col->len = (Py_ssize_t)b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return (PyObject *)col;
}

static void free_walk(walk_t *w) {
    buf_t *all[] = {&w->ev_line, &w->ev_md, &w->ev_off, &w->ev_dur, &w->ev_occ,
                    &w->st_owner, &w->st_md, &w->st_kind, &w->st_val, &w->st_soff,
                    &w->st_slen, &w->space_hdr};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) free(all[i]->data);
    Py_XDECREF(w->planes);
    Py_XDECREF(w->lines);
}

static PyObject *py_walk(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long budget = 0, event_cost = 0, stat_cost = 0;
    if (!PyArg_ParseTuple(args, "y*|LLL", &view, &budget, &event_cost, &stat_cost)) return NULL;
    walk_t w;
    memset(&w, 0, sizeof(w));
    w.budget = budget;
    w.event_cost = event_cost;
    w.stat_cost = stat_cost;
    w.base = (const uint8_t *)view.buf;
    w.planes = PyList_New(0);
    w.lines = PyList_New(0);
    PyObject *result = NULL;
    if (w.planes && w.lines) {
        /* The GIL stays held: plane and line headers are Python objects built on the way. */
        int rc = walk_space(&w, w.base, w.base + view.len);
        if (rc == -1 && w.too_large) {
            PyErr_Format(PyExc_MemoryError, "%lld events and %lld stats by byte %zu",
                         (long long)w.n_events, (long long)w.n_stats, w.error_at);
        } else if (rc == -1) {
            PyErr_Format(PyExc_ValueError, "%s at byte %zu", w.error, w.error_at);
        } else if (rc == 0) {
            result = Py_BuildValue(
                "{s:N,s:O,s:O,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
                "space", to_bytes(&w.space_hdr), "planes", w.planes, "lines", w.lines,
                "ev_line", to_column(&w.ev_line), "ev_md", to_column(&w.ev_md),
                "ev_off", to_column(&w.ev_off), "ev_dur", to_column(&w.ev_dur),
                "ev_occ", to_column(&w.ev_occ), "st_owner", to_column(&w.st_owner),
                "st_md", to_column(&w.st_md), "st_kind", to_column(&w.st_kind),
                "st_val", to_column(&w.st_val), "st_soff", to_column(&w.st_soff),
                "st_slen", to_column(&w.st_slen));
        }
    }
    free_walk(&w);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", py_walk, METH_VARARGS,
     "walk(data: bytes, budget=0, event_cost=0, stat_cost=0) -> dict of columns;\n"
     "ValueError('... at byte N') on malformed input; MemoryError when the events and stats\n"
     "met cost more than budget bytes (0: no budget)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire",
                                    "Columnar XSpace wire walker.", -1, methods};

PyMODINIT_FUNC PyInit__wire(void) {
    if (PyType_Ready(&ColumnType) < 0) return NULL;
    return PyModule_Create(&module);
}
