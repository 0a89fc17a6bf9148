/*
 * Fast columnar walk of an XSpace protobuf (the *.xplane.pb wire format).
 *
 * Python's protobuf runtime builds one object per event and per stat, and reading their
 * fields back from Python costs about a microsecond each. This walker reads the wire bytes
 * once and emits flat columns instead:
 *
 *   events: metadata id, offset_ps, duration_ps (int64 each); each line's number of
 *           events; the few events with num_occurrences (their index and count);
 *   stats:  owning event (int32), metadata id (int64), oneof field number (int8: 2..8; 0 = no
 *           value) and an int64 payload (varint, or the double's bits); for the string and
 *           bytes kinds only, the stat's index and the value's byte offset and length inside
 *           the input buffer.
 *
 * Only what each row needs is written (a load is bound by first touches of fresh memory on
 * small machines), into buffers that grow by remapping pages, never by copying them, and that
 * ask the kernel for huge pages.
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
#ifdef __linux__
#include <sys/mman.h>
#endif

typedef struct {
    char *data;
    size_t len;  /* bytes used */
    size_t cap;
    int mapped;  /* data is an anonymous mapping of cap bytes (else malloc'd) */
} buf_t;

/* Buffers from this size on are anonymous mappings: they grow with mremap (the kernel moves
 * page tables, no byte is copied) and are advised to use transparent huge pages, which cuts
 * the page faults of filling them 512-fold. */
#define MAP_FROM ((size_t)1 << 21)

static void buf_free(buf_t *b) {
#ifdef __linux__
    if (b->mapped) {
        munmap(b->data, b->cap);
        b->data = NULL;
        return;
    }
#endif
    free(b->data);
    b->data = NULL;
}

static int buf_reserve(buf_t *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
#ifdef __linux__
    if (cap >= MAP_FROM) {
        void *d;
        if (b->mapped) {
            d = mremap(b->data, b->cap, cap, MREMAP_MAYMOVE);
        } else {
            d = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (d != MAP_FAILED) {
                if (b->len) memcpy(d, b->data, b->len);
                free(b->data);
            }
        }
        if (d == MAP_FAILED) return -1;
#ifdef MADV_HUGEPAGE
        madvise(d, cap, MADV_HUGEPAGE);
#endif
        b->data = (char *)d;
        b->cap = cap;
        b->mapped = 1;
        return 0;
    }
#endif
    char *d = (char *)realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static inline int buf_put(buf_t *b, const void *src, size_t n) {
    if (b->len + n > b->cap && buf_reserve(b, n)) return -1;
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

typedef struct {
    const uint8_t *base;  /* start of the whole input, for error offsets */
    const char *error;
    size_t error_at;
    buf_t ev_md, ev_off, ev_dur, line_n, occ_idx, occ_val;
    buf_t st_owner, st_md, st_kind, st_val, str_row, str_code;
    /* Distinct string payloads (kind, offset, length), each once: most string stats repeat
     * a few values (kernel launch details, shapes), so Python decodes each value once. */
    buf_t uniq_kind, uniq_off, uniq_len;
    int32_t *slots; /* open addressing: 1 + index into uniq_*, 0 = empty */
    size_t n_slots;
    int64_t n_events;
    int64_t n_stats;
    int32_t n_lines;
    int64_t line_events; /* events met so far on the line being walked */
    /* Memory budget of the load: every event and stat met costs its measured peak bytes; past
     * the budget the walk stops (too_large) before the columns outgrow memory. */
    int64_t budget, event_cost, stat_cost;
    int too_large;
    /* Headers (everything but lines / events) of the space, of each plane and each line, one
     * after the other, with where each begins; each line's plane (int32). */
    buf_t space_hdr, plane_hdr, plane_off, line_hdr, line_off, line_plane;
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

/* -2: out of memory (raised once the walk is over: it runs without the GIL). */
#define PUT(b, v) do { if (buf_put(&(b), &(v), sizeof(v))) return -2; } while (0)

static uint64_t hash_bytes(const uint8_t *p, size_t n, int8_t kind) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uint8_t)kind;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

/* The code of a string payload: its index among the distinct ones (added when new). */
static int intern_text(walk_t *w, int8_t kind, int64_t off, int64_t len, int32_t *code) {
    size_t n_uniq = w->uniq_len.len / sizeof(int64_t);
    if (n_uniq >= INT32_MAX - 1) return -2;
    if ((n_uniq + 1) * 2 > w->n_slots) { /* grow and rehash at half full */
        size_t n = w->n_slots ? w->n_slots * 2 : 1024;
        int32_t *slots = (int32_t *)calloc(n, sizeof(int32_t));
        if (!slots) return -2;
        const int64_t *uo = (const int64_t *)w->uniq_off.data, *ul = (const int64_t *)w->uniq_len.data;
        const int8_t *uk = (const int8_t *)w->uniq_kind.data;
        for (size_t i = 0; i < n_uniq; i++) {
            size_t j = hash_bytes(w->base + uo[i], (size_t)ul[i], uk[i]) & (n - 1);
            while (slots[j]) j = (j + 1) & (n - 1);
            slots[j] = (int32_t)i + 1;
        }
        free(w->slots);
        w->slots = slots;
        w->n_slots = n;
    }
    const uint8_t *p = w->base + off;
    size_t j = hash_bytes(p, (size_t)len, kind) & (w->n_slots - 1);
    const int64_t *uo = (const int64_t *)w->uniq_off.data, *ul = (const int64_t *)w->uniq_len.data;
    const int8_t *uk = (const int8_t *)w->uniq_kind.data;
    while (w->slots[j]) {
        int32_t i = w->slots[j] - 1;
        if (uk[i] == kind && ul[i] == len && memcmp(w->base + uo[i], p, (size_t)len) == 0) {
            *code = i;
            return 0;
        }
        j = (j + 1) & (w->n_slots - 1);
    }
    if (buf_put(&w->uniq_kind, &kind, 1) || buf_put(&w->uniq_off, &off, 8) ||
        buf_put(&w->uniq_len, &len, 8))
        return -2;
    w->slots[j] = (int32_t)n_uniq + 1;
    *code = (int32_t)n_uniq;
    return 0;
}

static int walk_stat(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t owner) {
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
    int64_t row = w->n_stats++;
    if (w->budget > 0 && (w->n_events * w->event_cost + w->n_stats * w->stat_cost) > w->budget) {
        w->too_large = 1;
        return fail(w, p, "the capture holds more events and stats than the memory budget");
    }
    if (kind == 5 || kind == 6 || kind == 8) {
        int32_t code;
        if (intern_text(w, kind, soff, slen, &code)) return -2;
        PUT(w->str_row, row);
        PUT(w->str_code, code);
    }
    PUT(w->st_owner, owner);
    PUT(w->st_md, md);
    PUT(w->st_kind, kind);
    PUT(w->st_val, val);
    return 0;
}

static int walk_event(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t line) {
    int64_t md = 0, off = 0, dur = 0, occ = 0;
    if (w->n_events >= INT32_MAX) {
        /* Owners are int32: a run holds fewer events than that (each needs ~60 bytes). */
        w->too_large = 1;
        return fail(w, p, "the capture holds more events than a run can");
    }
    int32_t me = (int32_t)w->n_events;
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
    if (occ) {
        int64_t idx = w->n_events;
        PUT(w->occ_idx, idx);
        PUT(w->occ_val, occ);
    }
    PUT(w->ev_md, md);
    PUT(w->ev_off, off);
    PUT(w->ev_dur, dur);
    w->n_events++;
    w->line_events++;
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
            if (buf_put(hdr, start, (size_t)(p - start))) rc = -2;
        }
    }
    return rc;
}

/* A line: its events (field 4) become columns, the rest its header (and its plane). */
static int walk_line(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t plane) {
    int64_t at = (int64_t)w->line_hdr.len;
    w->line_events = 0;
    if (buf_put(&w->line_off, &at, sizeof(at)) || buf_put(&w->line_plane, &plane, sizeof(plane)))
        return -2;
    int rc = walk_split(w, p, end, 4, walk_event, w->n_lines++, &w->line_hdr);
    if (!rc && buf_put(&w->line_n, &w->line_events, sizeof(int64_t))) rc = -2;
    return rc;
}

/* A plane: its lines (field 3) are walked, the rest becomes its header. */
static int walk_plane(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t me) {
    /* A plane's header fields may come before and after its lines: gathered apart. */
    buf_t hdr = {0};
    int rc = walk_split(w, p, end, 3, walk_line, me, &hdr);
    int64_t at = (int64_t)w->plane_hdr.len;
    if (!rc && (buf_put(&w->plane_off, &at, sizeof(at)) ||
                (hdr.len && buf_put(&w->plane_hdr, hdr.data, hdr.len))))
        rc = -2;
    buf_free(&hdr);
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
            if (buf_put(&w->space_hdr, start, (size_t)(p - start))) return -2;
        }
    }
    return 0;
}

/* -- plane metadata ------------------------------------------------------------------------
 * A plane header's event metadata map (XPlane field 4: entries of key 1 and an
 * XEventMetadata value 2) and stat metadata map (field 5: key 1, XStatMetadata value 2) as
 * columns, so that thousands of entries need no Python object each. The header has been
 * parsed by protobuf first (which refuses what is malformed, invalid UTF-8 included), so
 * this walk only reads what protobuf accepted and reads it the way protobuf does: in a
 * value met twice, singular fields take the last value and repeated ones add up. Entries
 * are listed in file order; a later entry with the same key replaces an earlier one (the
 * caller keeps the last). */
typedef struct {
    buf_t key, name_off, name_len, disp_off, disp_len, meta_len, children;
} em_cols_t;

typedef struct {
    buf_t key, name_off, name_len;
} sm_cols_t;

static int read_string(walk_t *w, const uint8_t **pp, const uint8_t *end, int64_t *off,
                       int64_t *len) {
    const uint8_t *sub_end;
    if (read_len(w, pp, end, &sub_end)) return -1;
    *off = (int64_t)(*pp - w->base);
    *len = (int64_t)(sub_end - *pp);
    *pp = sub_end;
    return 0;
}

/* One XEventMetadata value (of entry `row`): into the entry's fields, stats owned by row. */
static int walk_em_value(walk_t *w, const uint8_t *p, const uint8_t *end, int32_t row,
                         int64_t *f) {
    /* f: name_off, name_len, disp_off, disp_len, meta_len, children */
    while (p < end) {
        int field, wt;
        uint64_t v;
        const uint8_t *sub_end;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        if (field == 2 && wt == 2) {
            if (read_string(w, &p, end, &f[0], &f[1])) return -1;
        } else if (field == 4 && wt == 2) {
            if (read_string(w, &p, end, &f[2], &f[3])) return -1;
        } else if (field == 3 && wt == 2) {
            int64_t off;
            if (read_string(w, &p, end, &off, &f[4])) return -1;
        } else if (field == 5 && wt == 2) {
            if (read_len(w, &p, end, &sub_end)) return -1;
            int rc = walk_stat(w, p, sub_end, row);
            if (rc) return rc;
            p = sub_end;
        } else if (field == 6 && wt == 0) {
            if (read_varint(w, &p, end, &v)) return -1;
            f[5]++;
        } else if (field == 6 && wt == 2) { /* packed child ids: one varint each */
            if (read_len(w, &p, end, &sub_end)) return -1;
            while (p < sub_end) {
                if (read_varint(w, &p, sub_end, &v)) return -1;
                f[5]++;
            }
        } else if (skip_field(w, &p, end, wt, field)) {
            return -1;
        }
    }
    return 0;
}

/* Undo the stats a dropped map entry added. */
static void drop_stats_since(walk_t *w, int64_t n_stats, size_t n_text_rows) {
    w->n_stats = n_stats;
    w->st_owner.len = (size_t)n_stats * sizeof(int32_t);
    w->st_md.len = (size_t)n_stats * sizeof(int64_t);
    w->st_kind.len = (size_t)n_stats * sizeof(int8_t);
    w->st_val.len = (size_t)n_stats * sizeof(int64_t);
    w->str_row.len = n_text_rows * sizeof(int64_t);
    w->str_code.len = n_text_rows * sizeof(int32_t);
}

/* One map entry: its key (field 1) into *key, its value (field 2, handed to `value` each
 * time it comes: protobuf merges a value given twice) and whether it holds anything else.
 * protobuf keeps such an entry among the map's unknown fields: it is no entry of the map. */
typedef int (*value_fn)(walk_t *, const uint8_t *, const uint8_t *, void *);

static int walk_entry(walk_t *w, const uint8_t *p, const uint8_t *end, int64_t *key,
                      value_fn value, void *ctx, int *unknown) {
    while (p < end) {
        int field, wt;
        uint64_t v;
        const uint8_t *sub_end;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        if (field == 1 && wt == 0) {
            if (read_varint(w, &p, end, &v)) return -1;
            *key = (int64_t)v;
        } else if (field == 2 && wt == 2) {
            if (read_len(w, &p, end, &sub_end)) return -1;
            int rc = value(w, p, sub_end, ctx);
            if (rc) return rc;
            p = sub_end;
        } else {
            if (skip_field(w, &p, end, wt, field)) return -1;
            *unknown = 1;
        }
    }
    return 0;
}

typedef struct {
    int32_t row;
    int64_t f[6]; /* name_off, name_len, disp_off, disp_len, meta_len, children */
} em_entry_t;

static int em_value(walk_t *w, const uint8_t *p, const uint8_t *end, void *ctx) {
    em_entry_t *e = (em_entry_t *)ctx;
    return walk_em_value(w, p, end, e->row, e->f);
}

static int walk_em_entry(walk_t *w, const uint8_t *p, const uint8_t *end, em_cols_t *c) {
    em_entry_t e = {(int32_t)(c->key.len / sizeof(int64_t)), {0, 0, 0, 0, 0, 0}};
    int64_t key = 0, n_stats = w->n_stats;
    size_t n_text_rows = w->str_row.len / sizeof(int64_t);
    int unknown = 0;
    int rc = walk_entry(w, p, end, &key, em_value, &e, &unknown);
    if (rc) return rc;
    if (unknown) { /* no entry: neither are its stats */
        drop_stats_since(w, n_stats, n_text_rows);
        return 0;
    }
    if (buf_put(&c->key, &key, 8) || buf_put(&c->name_off, &e.f[0], 8) ||
        buf_put(&c->name_len, &e.f[1], 8) || buf_put(&c->disp_off, &e.f[2], 8) ||
        buf_put(&c->disp_len, &e.f[3], 8) || buf_put(&c->meta_len, &e.f[4], 8) ||
        buf_put(&c->children, &e.f[5], 8))
        return -2;
    return 0;
}

/* An XStatMetadata value: its name (field 2; the last one given wins). */
static int sm_value(walk_t *w, const uint8_t *p, const uint8_t *end, void *ctx) {
    int64_t *name = (int64_t *)ctx; /* offset, length */
    while (p < end) {
        int field, wt;
        if (read_tag(w, &p, end, &field, &wt)) return -1;
        if (field == 2 && wt == 2) {
            if (read_string(w, &p, end, &name[0], &name[1])) return -1;
        } else if (skip_field(w, &p, end, wt, field)) {
            return -1;
        }
    }
    return 0;
}

static int walk_sm_entry(walk_t *w, const uint8_t *p, const uint8_t *end, sm_cols_t *c) {
    int64_t key = 0, name[2] = {0, 0};
    int unknown = 0;
    int rc = walk_entry(w, p, end, &key, sm_value, name, &unknown);
    if (rc || unknown) return rc;
    if (buf_put(&c->key, &key, 8) || buf_put(&c->name_off, &name[0], 8) ||
        buf_put(&c->name_len, &name[1], 8))
        return -2;
    return 0;
}

static PyObject *to_column(buf_t *b);
static void free_walk(walk_t *w);

/* The distinct string payloads as Python objects: str for field 5 (undecodable bytes
 * replaced, as a UTF-8 decoder shows them), bytes for fields 6 and 8. */
static PyObject *distinct_texts(walk_t *w) {
    Py_ssize_t n = (Py_ssize_t)(w->uniq_len.len / sizeof(int64_t));
    const int64_t *o = (const int64_t *)w->uniq_off.data, *l = (const int64_t *)w->uniq_len.data;
    const int8_t *k = (const int8_t *)w->uniq_kind.data;
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        const char *p = (const char *)w->base + o[i];
        PyObject *t = k[i] == 5 ? PyUnicode_DecodeUTF8(p, (Py_ssize_t)l[i], "replace")
                                : PyBytes_FromStringAndSize(p, (Py_ssize_t)l[i]);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

/* The UTF-8 strings at these offsets and lengths of base, as a list of str (protobuf has
 * checked they are UTF-8). */
static PyObject *texts_at(const uint8_t *base, buf_t *off, buf_t *len) {
    Py_ssize_t n = (Py_ssize_t)(off->len / sizeof(int64_t));
    const int64_t *o = (const int64_t *)off->data, *l = (const int64_t *)len->data;
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *t = PyUnicode_DecodeUTF8((const char *)base + o[i], (Py_ssize_t)l[i], "replace");
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

static PyObject *py_plane_metadata(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    walk_t w;
    memset(&w, 0, sizeof(w));
    em_cols_t em;
    sm_cols_t sm;
    memset(&em, 0, sizeof(em));
    memset(&sm, 0, sizeof(sm));
    w.base = (const uint8_t *)view.buf;
    const uint8_t *p = w.base, *end = w.base + view.len;
    int rc = 0;
    while (p < end && !rc) {
        int field, wt;
        const uint8_t *sub_end;
        if ((rc = read_tag(&w, &p, end, &field, &wt))) break;
        if ((field == 4 || field == 5) && wt == 2) {
            if ((rc = read_len(&w, &p, end, &sub_end))) break;
            rc = field == 4 ? walk_em_entry(&w, p, sub_end, &em) : walk_sm_entry(&w, p, sub_end, &sm);
            p = sub_end;
        } else {
            rc = skip_field(&w, &p, end, wt, field);
        }
    }
    PyObject *result = NULL;
    if (rc == -1) {
        PyErr_Format(PyExc_ValueError, "%s at byte %zu", w.error, w.error_at);
    } else if (rc) {
        PyErr_NoMemory();
    } else {
        result = Py_BuildValue(
            "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
            "em_key", to_column(&em.key), "em_name", texts_at(w.base, &em.name_off, &em.name_len),
            "em_display", texts_at(w.base, &em.disp_off, &em.disp_len), "em_meta_len",
            to_column(&em.meta_len), "em_children", to_column(&em.children), "sm_key",
            to_column(&sm.key), "sm_name", texts_at(w.base, &sm.name_off, &sm.name_len),
            "st_owner", to_column(&w.st_owner), "st_md", to_column(&w.st_md), "st_kind",
            to_column(&w.st_kind), "st_val", to_column(&w.st_val), "str_row",
            to_column(&w.str_row), "str_code", to_column(&w.str_code), "uniq_kind",
            to_column(&w.uniq_kind), "texts", distinct_texts(&w));
    }
    buf_t *all[] = {&em.key, &em.name_off, &em.name_len, &em.disp_off, &em.disp_len,
                    &em.meta_len, &em.children, &sm.key, &sm.name_off, &sm.name_len};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) buf_free(all[i]);
    free_walk(&w);
    PyBuffer_Release(&view);
    return result;
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
    buf_t buf;
} ColumnObject;

static void column_dealloc(ColumnObject *self) {
    buf_free(&self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int column_getbuffer(ColumnObject *self, Py_buffer *view, int flags) {
    static char empty[1];
    return PyBuffer_FillInfo(view, (PyObject *)self, self->buf.data ? self->buf.data : empty,
                             (Py_ssize_t)self->buf.len, 0, flags);
}

static PyBufferProcs column_as_buffer = {(getbufferproc)column_getbuffer, NULL};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfprof_widgets.readers.xspace._wire.Column",
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
    col->buf = *b;
    memset(b, 0, sizeof(*b));
    return (PyObject *)col;
}

/* The headers of a walk, each a bytes object: slices [off[i], off[i + 1]) of hdr. */
static PyObject *header_list(buf_t *hdr, buf_t *off) {
    Py_ssize_t n = (Py_ssize_t)(off->len / sizeof(int64_t));
    const int64_t *o = (const int64_t *)off->data;
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        int64_t a = o[i], b = (i + 1 < n) ? o[i + 1] : (int64_t)hdr->len;
        PyObject *item = PyBytes_FromStringAndSize(hdr->data + a, (Py_ssize_t)(b - a));
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static void free_walk(walk_t *w) {
    buf_t *all[] = {&w->ev_md,    &w->ev_off,    &w->ev_dur,     &w->line_n,   &w->occ_idx,
                    &w->occ_val,  &w->st_owner,  &w->st_md,      &w->st_kind,  &w->st_val,
                    &w->str_row,  &w->str_code,  &w->uniq_kind,  &w->uniq_off, &w->uniq_len,
                    &w->space_hdr, &w->plane_hdr,
                    &w->plane_off, &w->line_hdr, &w->line_off,   &w->line_plane};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) buf_free(all[i]);
    free(w->slots);
    w->slots = NULL;
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
    PyObject *result = NULL;
    int rc;
    /* Nothing in the walk touches a Python object: other threads run meanwhile (several
     * hosts of a run are walked at once). */
    Py_BEGIN_ALLOW_THREADS
    rc = walk_space(&w, w.base, w.base + view.len);
    Py_END_ALLOW_THREADS
    if (rc == -1 && w.too_large) {
        PyErr_Format(PyExc_MemoryError, "%lld events and %lld stats by byte %zu",
                     (long long)w.n_events, (long long)w.n_stats, w.error_at);
    } else if (rc == -1) {
        PyErr_Format(PyExc_ValueError, "%s at byte %zu", w.error, w.error_at);
    } else if (rc) {
        PyErr_NoMemory();
    } else {
        result = Py_BuildValue(
            "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
            "space", to_bytes(&w.space_hdr), "planes", header_list(&w.plane_hdr, &w.plane_off),
            "lines", header_list(&w.line_hdr, &w.line_off), "line_plane",
            to_column(&w.line_plane), "line_n", to_column(&w.line_n), "ev_md",
            to_column(&w.ev_md), "ev_off", to_column(&w.ev_off), "ev_dur", to_column(&w.ev_dur),
            "occ_idx", to_column(&w.occ_idx), "occ_val", to_column(&w.occ_val), "st_owner",
            to_column(&w.st_owner), "st_md", to_column(&w.st_md), "st_kind",
            to_column(&w.st_kind), "st_val", to_column(&w.st_val), "str_row",
            to_column(&w.str_row), "str_code", to_column(&w.str_code), "uniq_kind",
            to_column(&w.uniq_kind), "texts", distinct_texts(&w));
    }
    free_walk(&w);
    PyBuffer_Release(&view);
    return result;
}

/* How many times the 3 bytes of U+FFFD in UTF-8 occur in data, counting up to `limit`: a
 * binary capture re-saved as text is full of them (memchr finds the candidates fast). */
static PyObject *py_count_replacements(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long limit = 0;
    if (!PyArg_ParseTuple(args, "y*L", &view, &limit)) return NULL;
    const uint8_t *p = (const uint8_t *)view.buf, *end = p + view.len;
    long long n = 0;
    Py_BEGIN_ALLOW_THREADS
    while (n < limit && end - p >= 3) {
        const uint8_t *q = (const uint8_t *)memchr(p, 0xEF, (size_t)(end - p - 2));
        if (!q) break;
        if (q[1] == 0xBF && q[2] == 0xBD) {
            n++;
            p = q + 3;
        } else {
            p = q + 1;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(n);
}

/* Offsets that cut a message into runs of at most `every` top-level fields (the first 0,
 * the last the length): each run parses as the same message type, and the runs together as
 * the whole. None where a field is not plainly framed (a group, a bad tag, a length past the
 * end): the caller then parses the whole, and protobuf says what is wrong. */
static int split_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = r;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

static PyObject *py_split_fields(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long every = 0;
    if (!PyArg_ParseTuple(args, "y*L", &view, &every)) return NULL;
    if (every < 1) every = 1;
    const uint8_t *base = (const uint8_t *)view.buf, *p = base, *end = base + view.len;
    PyObject *out = PyList_New(0);
    long long count = 0;
    int bad = 0;
    if (!out) goto done;
    {
        PyObject *o = PyLong_FromLong(0);
        if (!o || PyList_Append(out, o) < 0) { Py_XDECREF(o); goto fail; }
        Py_DECREF(o);
    }
    while (p < end) {
        uint64_t tag, v;
        if (split_varint(&p, end, &tag) || (tag >> 3) == 0 || tag > 0xFFFFFFFFull) { bad = 1; break; }
        switch (tag & 7) {
        case 0:
            if (split_varint(&p, end, &v)) bad = 1;
            break;
        case 1:
            if (end - p < 8) bad = 1; else p += 8;
            break;
        case 2:
            if (split_varint(&p, end, &v) || v > (uint64_t)(end - p)) bad = 1; else p += v;
            break;
        case 5:
            if (end - p < 4) bad = 1; else p += 4;
            break;
        default:
            bad = 1;
        }
        if (bad) break;
        if (++count % every == 0 && p < end) {
            PyObject *o = PyLong_FromSsize_t((Py_ssize_t)(p - base));
            if (!o || PyList_Append(out, o) < 0) { Py_XDECREF(o); goto fail; }
            Py_DECREF(o);
        }
    }
    if (bad) {
        Py_DECREF(out);
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    {
        PyObject *o = PyLong_FromSsize_t(view.len);
        if (!o || PyList_Append(out, o) < 0) { Py_XDECREF(o); goto fail; }
        Py_DECREF(o);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"split_fields", py_split_fields, METH_VARARGS,
     "split_fields(data: bytes, every) -> offsets cutting the message into runs of at most\n"
     "`every` top-level fields, or None when a field is not plainly framed."},
    {"walk", py_walk, METH_VARARGS,
     "walk(data: bytes, budget=0, event_cost=0, stat_cost=0) -> dict of columns;\n"
     "ValueError('... at byte N') on malformed input; MemoryError when the events and stats\n"
     "met cost more than budget bytes (0: no budget)."},
    {"plane_metadata", py_plane_metadata, METH_VARARGS,
     "plane_metadata(header: bytes) -> dict of columns: the event metadata entries (key, name\n"
     "and display name offsets and lengths, metadata length, child count, and their stats)\n"
     "and the stat metadata entries (key, name offset and length), in file order."},
    {"count_replacements", py_count_replacements, METH_VARARGS,
     "count_replacements(data: bytes, limit) -> how many U+FFFD (EF BF BD) are in data, up\n"
     "to limit."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire",
                                    "Columnar XSpace wire walker.", -1, methods};

PyMODINIT_FUNC PyInit__wire(void) {
    if (PyType_Ready(&ColumnType) < 0) return NULL;
    return PyModule_Create(&module);
}
