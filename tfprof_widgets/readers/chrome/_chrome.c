/*
 * Chrome trace-event JSON -> columns, in one pass over the bytes, with no Python object per
 * event.
 *
 * readers/chrome/decode.py decodes a trace with msgspec into typed structs and then flattens
 * every event's args into long typed rows. This decoder produces the same thing directly:
 *
 *   per element of traceEvents: ts and dur (float64, NaN where absent or null); ph, name,
 *       cat and bp as int32 codes into lists of their distinct strings; pid, tid and id as
 *       codes into lists of their distinct values, ints and strings apart (1 and "1" differ);
 *       id2 as a code into its distinct raw JSON texts (decoded in Python, rare);
 *   per arg of every event, one row: the event, the arg name (a code into the distinct
 *       names), the value's kind (stat_columns.KIND_CODE: int, uint, double, str), its int64
 *       and float64 payloads and a code into the distinct texts. Strings, nested values (their
 *       JSON text as written), nulls (the text "null") and integers past 64 bits (their
 *       digits) are texts; booleans are ints. Rows are ordered by arg name (names in order of
 *       first appearance), then by event, and texts are numbered in the order
 *       chrome_decode.flatten_args meets them, so both give identical columns.
 *
 * Codes number values in order of first appearance, -1 standing for absent or null, which is
 * what pandas.factorize gives the msgspec path's lists. Strings are interned in C hash tables
 * keyed by their UTF-8 bytes (a string without escapes is hashed where it lies in the input);
 * Python strings are built once per distinct value, at the end.
 *
 * THE RULE: the result is exactly what the msgspec path gives, or the decoder gives up and
 * returns the reason (a str), and the caller runs the msgspec path, which raises its usual
 * typed error. So this accepts only RFC 8259 JSON in valid UTF-8, nested at most MAX_DEPTH
 * deep, with every field of the JSON type msgspec accepts for it, and gives up on anything
 * else or anything msgspec might read otherwise: a BOM, NaN/Infinity, trailing commas or
 * characters, an invalid escape, a lone surrogate escape (text.py replaces those first), a
 * duplicate field in the top-level object, an event or an args object (msgspec keeps the last,
 * a dict keeps the first's place), a pid/tid/id integer outside [-2**63, 2**64), a ts/dur/arg
 * number beyond the double range, a number literal longer than MAX_NUMBER_LEN, a top level
 * without a traceEvents array.
 *
 * Numbers: integers are exact; a float whose significant digits fit 53 bits with a power of
 * ten up to 22 is computed exactly as msgspec's fast path does (one IEEE operation, correctly
 * rounded); any other float is parsed after the scan by CPython's correctly rounded
 * PyOS_string_to_double, which gives the same double as msgspec's (also correctly rounded)
 * Eisel-Lemire and big-decimal paths.
 *
 * The GIL is released while scanning: the scan touches no Python object. Every read is
 * bounds-checked against the end of the input; nesting is bounded; columns grow with what is
 * really in the input (no size is taken from the input before the bytes are seen).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Deeper than any real trace (7 in the Kineto traces), far below msgspec's recursion limit. */
#define MAX_DEPTH 64
/* Longer number literals are left to msgspec (Python caps int digits at 4300). */
#define MAX_NUMBER_LEN 1000

/* stat_columns.KIND_CODE */
enum { K_INT = 0, K_UINT = 1, K_DOUBLE = 2, K_STR = 3 };
/* What made an arg's text: the order flatten_args meets them within one arg name. */
enum { T_NONE = 0, T_STRING = 1, T_NESTED = 2, T_NULL = 3, T_BIGINT = 4 };
/* Interned values: strings (or raw JSON texts), and integers by their 64 bits. */
enum { TAG_STR = 0, TAG_INT = 1, TAG_UINT = 2 };
/* Number literals. */
enum { N_INT, N_UINT, N_BIG, N_DOUBLE, N_DEFER };
/* Event fields, as bits of a mask. */
enum {
    F_PH = 1, F_NAME = 2, F_CAT = 4, F_PID = 8, F_TID = 16, F_TS = 32, F_DUR = 64, F_ID = 128,
    F_ID2 = 256, F_BP = 512, F_S = 1024, F_ARGS = 2048
};

static const char LONE_SURROGATE[] = "a lone surrogate escape";
/* One JSON string (a name, an arg) longer than this is refused: a 0.5 MB .json.gz can hold a
 * 500 MB name, and its decode then needs several GB. */
#define MAX_STRING_BYTES ((size_t)64 << 20)
static const char LONG_STRING[] = "a string longer than 64 MB";

/* -- memory ------------------------------------------------------------------------------ */

/* The capacity (in items) that holds `need` items, doubling from `cap`. */
static size_t grown(size_t cap, size_t need) {
    size_t c = cap ? cap : 1024;
    while (c < need) c *= 2;
    return c;
}

/* Grow an array of `size`-byte items to hold at least `need` items. */
static int grow(void **arr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t c = grown(*cap, need);
    void *p = realloc(*arr, c * size);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* Parallel arrays (sizes[i]-byte items) grown together to one new capacity. */
static int grow_all(void **arrs[], const size_t sizes[], size_t n, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = grown(*cap, need);
    for (size_t i = 0; i < n; i++) {
        void *p = realloc(*arrs[i], c * sizes[i]);
        if (!p) return -1;
        *arrs[i] = p;
    }
    *cap = c;
    return 0;
}

/* Unescaped strings live in chunks that never move, so entries can point into them. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    uint8_t data[];
} chunk_t;

static uint8_t *arena_copy(chunk_t **head, const uint8_t *src, size_t n) {
    chunk_t *c = *head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > (1 << 20) ? n : (1 << 20);
        c = (chunk_t *)malloc(sizeof(chunk_t) + cap);
        if (!c) return NULL;
        c->next = *head;
        c->used = 0;
        c->cap = cap;
        *head = c;
    }
    uint8_t *dst = c->data + c->used;
    if (n) memcpy(dst, src, n);
    c->used += n;
    return dst;
}

/* -- intern tables ----------------------------------------------------------------------- */

typedef struct {
    const uint8_t *ptr; /* the bytes (TAG_STR): in the input or the arena */
    uint64_t num;       /* the integer's bits (TAG_INT, TAG_UINT) */
    uint32_t len;
    uint32_t hash;
    uint8_t tag;
    uint8_t ascii;
} entry_t;

typedef struct {
    entry_t *e;
    size_t n, cap;
    int32_t *slots; /* open addressing; -1 is empty */
    size_t nslots;  /* a power of two */
} table_t;

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t read64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

#define K1 0xbf58476d1ce4e5b9ULL
#define K2 0x94d049bb133111ebULL

/* Set once per process from Python's randomised string hash: a file cannot be crafted so
 * that its strings collide here (which would make interning quadratic). */
static uint64_t hash_seed = 0x9E3779B97F4A7C15ULL;

/* Four independent multiply chains over 32-byte blocks: long strings (Kineto's call stacks
 * are kilobytes) hash at several bytes per cycle. */
static inline uint32_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = hash_seed ^ (uint64_t)n;
    if (n >= 32) {
        uint64_t a = h, b = h ^ K1, c = h ^ K2, d = h + K1;
        do {
            a = (a ^ read64(p)) * K1;
            b = (b ^ read64(p + 8)) * K1;
            c = (c ^ read64(p + 16)) * K1;
            d = (d ^ read64(p + 24)) * K1;
            a ^= a >> 31;
            b ^= b >> 31;
            c ^= c >> 31;
            d ^= d >> 31;
            p += 32;
            n -= 32;
        } while (n >= 32);
        h = mix64(a) ^ mix64(b + K2) ^ mix64(c + 2 * K2) ^ mix64(d + 3 * K2);
    }
    while (n >= 8) {
        h = (h ^ read64(p)) * K1;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * K2;
    }
    return (uint32_t)mix64(h);
}

static int table_rehash(table_t *t) {
    size_t ns = t->nslots ? t->nslots * 2 : 64;
    int32_t *slots = (int32_t *)malloc(ns * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, ns * sizeof(int32_t));
    for (size_t i = 0; i < t->n; i++) {
        size_t j = t->e[i].hash & (ns - 1);
        while (slots[j] >= 0) j = (j + 1) & (ns - 1);
        slots[j] = (int32_t)i;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

typedef struct dec dec_t;
static int32_t intern(dec_t *d, table_t *t, const uint8_t *p, size_t len, uint64_t num, int tag,
                      int ascii, int copy);

/* -- the decoder's state ----------------------------------------------------------------- */

struct dec {
    const uint8_t *base, *p, *end;
    int depth;
    const char *why; /* the reason for giving up (static text) */
    size_t why_at;
    int saw_nonascii; /* set by scan_string: a string held a byte >= 0x80 */

    /* top level */
    int is_array, has_events, top_seen;
    const uint8_t *top_start[4], *top_end[4]; /* deviceProperties, baseTimeNanoseconds,
                                                 schemaVersion, distributedInfo */
    int unloaded; /* bits: samples, stackFrames, systemTraceEvents */

    /* per event */
    size_t n_ev, ev_cap;
    int32_t *ev_ph, *ev_name, *ev_cat, *ev_bp, *ev_pid, *ev_tid, *ev_id, *ev_id2;
    double *ev_ts, *ev_dur;
    int last_mask; /* non-null fields of the last event */

    /* per arg row, in event order */
    size_t n_rows, row_cap;
    int64_t *r_src, *r_int;
    int32_t *r_key, *r_text;
    int8_t *r_kind, *r_tcat;
    double *r_float;
    int64_t *key_last_event; /* per arg name: the last event that had it (duplicates) */
    size_t key_last_cap;

    /* floats parsed after the scan (with the GIL): where they go and their literal */
    struct deferred {
        int8_t col; /* 0 ts, 1 dur, 2 arg row */
        size_t index;
        size_t off, len;
    } *defer;
    size_t n_defer, defer_cap;

    table_t t_ph, t_name, t_cat, t_bp, t_pid, t_tid, t_id, t_id2, t_key, t_text;
    chunk_t *arena;
    uint8_t *scratch;
    size_t scratch_cap;
};

static int give_up(dec_t *d, const uint8_t *at, const char *why) {
    if (!d->why) {
        d->why = why;
        d->why_at = (size_t)(at - d->base);
    }
    return -1;
}

/* Out of memory while scanning: given up like any other doubt, so the msgspec path (which
 * needs more memory) decides what the load does. */
static int no_memory(dec_t *d) { return give_up(d, d->p, "out of memory"); }

static int32_t intern(dec_t *d, table_t *t, const uint8_t *p, size_t len, uint64_t num, int tag,
                      int ascii, int copy) {
    uint32_t h = tag == TAG_STR ? hash_bytes(p, len)
                                : (uint32_t)mix64((num ^ hash_seed) * 3 + (uint64_t)tag);
    if (t->n * 2 >= t->nslots && table_rehash(t) < 0) return no_memory(d), -1;
    size_t mask = t->nslots - 1, j = h & mask;
    for (;;) {
        int32_t k = t->slots[j];
        if (k < 0) break;
        entry_t *e = &t->e[k];
        if (e->hash == h && e->tag == tag &&
            (tag == TAG_STR ? e->len == len && memcmp(e->ptr, p, len) == 0 : e->num == num))
            return k;
        j = (j + 1) & mask;
    }
    if (t->n >= INT32_MAX || len > UINT32_MAX) return give_up(d, d->p, "too many values"), -1;
    if (grow((void **)&t->e, &t->cap, t->n + 1, sizeof(entry_t)) < 0) return no_memory(d), -1;
    if (copy && tag == TAG_STR) {
        p = arena_copy(&d->arena, p, len);
        if (!p) return no_memory(d), -1;
    }
    entry_t *e = &t->e[t->n];
    e->ptr = p;
    e->num = num;
    e->len = (uint32_t)len;
    e->hash = h;
    e->tag = (uint8_t)tag;
    e->ascii = (uint8_t)ascii;
    t->slots[j] = (int32_t)t->n;
    return (int32_t)t->n++;
}

/* -- lexing ------------------------------------------------------------------------------ */

static inline void skip_ws(dec_t *d) {
    const uint8_t *p = d->p, *end = d->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    d->p = p;
}

static inline int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static int hex4(const uint8_t *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* One UTF-8 sequence starting at p (a byte >= 0x80), as strictly as Python decodes it:
 * no overlong forms, no surrogates, nothing past U+10FFFF. Returns its length or -1. */
static int utf8_seq(const uint8_t *p, const uint8_t *end) {
    uint8_t c = p[0];
    size_t left = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF) {
        if (left < 2 || (p[1] & 0xC0) != 0x80) return -1;
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
        if (c == 0xE0 && p[1] < 0xA0) return -1;  /* overlong */
        if (c == 0xED && p[1] > 0x9F) return -1;  /* a surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80)
            return -1;
        if (c == 0xF0 && p[1] < 0x90) return -1;  /* overlong */
        if (c == 0xF4 && p[1] > 0x8F) return -1;  /* past U+10FFFF */
        return 4;
    }
    return -1;
}

typedef struct {
    const uint8_t *start, *end; /* the bytes between the quotes */
    int escaped;                /* holds a backslash escape: decode before use */
    int ascii;                  /* its decoded text is ASCII */
} str_t;

/* A string at d->p (its opening quote): validated (escapes, control characters, UTF-8). */
static int scan_string(dec_t *d, str_t *s) {
    const uint8_t *p = d->p + 1, *end = d->end;
    s->start = p;
    s->escaped = 0;
    s->ascii = 1;
    for (;;) {
#ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      space = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            /* signed compare: bytes >= 0x80 are negative, so below 0x20 too */
            __m128i special = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                _mm_cmplt_epi8(v, space));
            int m = _mm_movemask_epi8(special);
            if (m) {
                p += __builtin_ctz((unsigned)m);
                goto special;
            }
            p += 16;
        }
#endif
        while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) p++;
        if (p >= end) return give_up(d, p, "a string runs past the end");
#ifdef __SSE2__
    special:
#endif
        if (*p == '"') {
            if ((size_t)(p - s->start) > MAX_STRING_BYTES) return give_up(d, s->start, LONG_STRING);
            s->end = p;
            d->p = p + 1;
            return 0;
        }
        if (*p == '\\') {
            s->escaped = 1;
            if (end - p < 2) return give_up(d, p, "an escape runs past the end");
            switch (p[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p += 2;
                continue;
            case 'u': {
                uint32_t cp, lo;
                if (end - p < 6 || hex4(p + 2, &cp) < 0)
                    return give_up(d, p, "an invalid \\u escape");
                if (cp >= 0xDC00 && cp <= 0xDFFF) return give_up(d, p, LONE_SURROGATE);
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) < 0 ||
                        lo < 0xDC00 || lo > 0xDFFF)
                        return give_up(d, p, LONE_SURROGATE);
                    p += 12;
                    s->ascii = 0;
                    continue;
                }
                if (cp >= 0x80) s->ascii = 0;
                p += 6;
                continue;
            }
            default:
                return give_up(d, p, "an invalid escape");
            }
        }
        if (*p >= 0x80) {
            int n = utf8_seq(p, end);
            if (n < 0) return give_up(d, p, "invalid UTF-8");
            s->ascii = 0;
            d->saw_nonascii = 1;
            p += n;
            continue;
        }
        return give_up(d, p, "a control character in a string");
    }
}

/* The decoded UTF-8 of a validated escaped string, into d->scratch (never longer than the
 * escaped text: each escape is at least as long as what it stands for). */
static int unescape(dec_t *d, const str_t *s, size_t *out_len) {
    size_t n = (size_t)(s->end - s->start);
    if (grow((void **)&d->scratch, &d->scratch_cap, n + 1, 1) < 0) return no_memory(d);
    uint8_t *o = d->scratch;
    const uint8_t *p = s->start, *end = s->end;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        uint8_t c = p[1];
        p += 2;
        switch (c) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t cp = 0, lo = 0; /* validated by scan_string */
            hex4(p, &cp);
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                hex4(p + 2, &lo);
                p += 6;
                cp = 0x10000 + (((cp - 0xD800) << 10) | (lo - 0xDC00));
            }
            if (cp < 0x80) {
                *o++ = (uint8_t)cp;
            } else if (cp < 0x800) {
                *o++ = (uint8_t)(0xC0 | (cp >> 6));
                *o++ = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *o++ = (uint8_t)(0xE0 | (cp >> 12));
                *o++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (uint8_t)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (uint8_t)(0xF0 | (cp >> 18));
                *o++ = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (uint8_t)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: *o++ = c; /* " \ / */
        }
    }
    *out_len = (size_t)(o - d->scratch);
    return 0;
}

/* The code of a scanned string in table t. */
static int32_t intern_str(dec_t *d, table_t *t, const str_t *s) {
    if (!s->escaped)
        return intern(d, t, s->start, (size_t)(s->end - s->start), 0, TAG_STR, s->ascii, 0);
    size_t n;
    if (unescape(d, s, &n) < 0) return -1;
    return intern(d, t, d->scratch, n, 0, TAG_STR, s->ascii, 1);
}

typedef struct {
    int kind;           /* N_INT, N_UINT, N_BIG, N_DOUBLE, N_DEFER */
    int64_t i;          /* N_INT; N_UINT: the value's bits */
    double f;           /* N_DOUBLE */
    const uint8_t *start;
    size_t len;
} num_t;

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number at d->p: RFC 8259's grammar exactly, and its value. */
static int parse_number(dec_t *d, num_t *out) {
    const uint8_t *p = d->p, *end = d->end, *start = p;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return give_up(d, p, "an invalid number");
    const uint8_t *int_start = p;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) return give_up(d, p, "a number with a leading zero");
    } else {
        while (p < end && is_digit(*p)) p++;
    }
    const uint8_t *int_end = p, *frac_start = p, *frac_end = p;
    int is_float = 0;
    if (p < end && *p == '.') {
        frac_start = ++p;
        while (p < end && is_digit(*p)) p++;
        if (p == frac_start) return give_up(d, p, "a number without digits after its point");
        frac_end = p;
        is_float = 1;
    }
    int64_t exp = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int sign = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) sign = *p++ == '-' ? -1 : 1;
        const uint8_t *es = p;
        while (p < end && is_digit(*p)) {
            if (exp < 1000000) exp = exp * 10 + (*p - '0');
            p++;
        }
        if (p == es) return give_up(d, p, "a number without exponent digits");
        exp *= sign;
        is_float = 1;
    }
    d->p = p;
    out->start = start;
    out->len = (size_t)(p - start);
    if (out->len > MAX_NUMBER_LEN) return give_up(d, start, "a number literal too long");
    if (!is_float) {
        size_t nd = (size_t)(int_end - int_start);
        uint64_t m = 0;
        int big = nd > 20;
        for (const uint8_t *q = int_start; !big && q < int_end; q++) {
            uint64_t digit = (uint64_t)(*q - '0');
            if (m > (UINT64_MAX - digit) / 10) big = 1;
            else m = m * 10 + digit;
        }
        if (big || (neg && m > ((uint64_t)1 << 63))) {
            out->kind = N_BIG;
        } else if (neg) {
            out->kind = N_INT;
            out->i = m == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)m;
        } else {
            out->kind = m < ((uint64_t)1 << 63) ? N_INT : N_UINT;
            out->i = (int64_t)m;
        }
        return 0;
    }
    /* Significant digits (leading zeros skipped) and the power of ten they are scaled by. */
    uint64_t m = 0;
    int nd = 0;
    for (const uint8_t *q = int_start; q < int_end; q++) {
        if (m == 0 && *q == '0') continue;
        if (++nd > 19) break;
        m = m * 10 + (uint64_t)(*q - '0');
    }
    for (const uint8_t *q = frac_start; q < frac_end && nd <= 19; q++) {
        if (m == 0 && *q == '0') continue;
        if (++nd > 19) break;
        m = m * 10 + (uint64_t)(*q - '0');
    }
    int64_t e10 = exp - (int64_t)(frac_end - frac_start);
    if (nd <= 19 && m == 0) {
        out->kind = N_DOUBLE;
        out->f = neg ? -0.0 : 0.0;
    } else if (nd <= 19 && (m >> 53) == 0 && e10 >= -22 && e10 <= 22) {
        double v = (double)m;
        v = e10 >= 0 ? v * POW10[e10] : v / POW10[-e10];
        out->kind = N_DOUBLE;
        out->f = neg ? -v : v;
    } else {
        out->kind = N_DEFER;
    }
    return 0;
}

/* A literal true/false/null at d->p. */
static int literal(dec_t *d, const char *word, size_t n) {
    if ((size_t)(d->end - d->p) < n || memcmp(d->p, word, n) != 0)
        return give_up(d, d->p, "an invalid literal");
    d->p += n;
    return 0;
}

static int skip_value(dec_t *d);

/* After a member or an element: ',' (then more) or the closing character. Returns 1 at the
 * end, 0 when another follows, -1 on anything else. */
static int next_member(dec_t *d, uint8_t close) {
    skip_ws(d);
    if (d->p >= d->end) return give_up(d, d->p, "the input ends inside a container");
    if (*d->p == ',') {
        d->p++;
        skip_ws(d);
        if (d->p >= d->end) return give_up(d, d->p, "the input ends inside a container");
        if (*d->p == close) return give_up(d, d->p, "a trailing comma");
        return 0;
    }
    if (*d->p == close) {
        d->p++;
        return 1;
    }
    return give_up(d, d->p, "expected ',' or the container's end");
}

/* A key and its colon, at d->p (after whitespace); leaves d->p at the value. */
static int member_key(dec_t *d, str_t *key) {
    if (d->p >= d->end || *d->p != '"') return give_up(d, d->p, "expected a key");
    if (scan_string(d, key) < 0) return -1;
    skip_ws(d);
    if (d->p >= d->end || *d->p != ':') return give_up(d, d->p, "expected ':'");
    d->p++;
    skip_ws(d);
    if (d->p >= d->end) return give_up(d, d->p, "the input ends before a value");
    return 0;
}

/* Opening an object or array at d->p: depth bound, and whether it is empty. Returns 1 when
 * empty (and consumed), 0 when members follow (d->p is then at one), -1 on a problem. */
static int open_container(dec_t *d, uint8_t close) {
    if (++d->depth > MAX_DEPTH) return give_up(d, d->p, "nested too deeply");
    d->p++;
    skip_ws(d);
    if (d->p >= d->end) return give_up(d, d->p, "the input ends inside a container");
    if (*d->p == close) {
        d->p++;
        d->depth--;
        return 1;
    }
    return 0;
}

/* Any JSON value at d->p, validated and skipped. */
static int skip_value(dec_t *d) {
    if (d->p >= d->end) return give_up(d, d->p, "the input ends before a value");
    str_t s;
    num_t num;
    int r;
    switch (*d->p) {
    case '"':
        return scan_string(d, &s);
    case '{':
        if ((r = open_container(d, '}')) != 0) return r < 0 ? -1 : 0;
        do {
            if (member_key(d, &s) < 0 || skip_value(d) < 0) return -1;
        } while ((r = next_member(d, '}')) == 0);
        d->depth--;
        return r < 0 ? -1 : 0;
    case '[':
        if ((r = open_container(d, ']')) != 0) return r < 0 ? -1 : 0;
        do {
            if (skip_value(d) < 0) return -1;
        } while ((r = next_member(d, ']')) == 0);
        d->depth--;
        return r < 0 ? -1 : 0;
    case 't':
        return literal(d, "true", 4);
    case 'f':
        return literal(d, "false", 5);
    case 'n':
        return literal(d, "null", 4);
    default:
        if (*d->p == '-' || is_digit(*d->p)) return parse_number(d, &num);
        return give_up(d, d->p, "an invalid value");
    }
}

/* -- events ------------------------------------------------------------------------------ */

static int defer_number(dec_t *d, int col, size_t index, const num_t *num) {
    if (grow((void **)&d->defer, &d->defer_cap, d->n_defer + 1, sizeof(*d->defer)) < 0)
        return no_memory(d);
    struct deferred *f = &d->defer[d->n_defer++];
    f->col = (int8_t)col;
    f->index = index;
    f->off = (size_t)(num->start - d->base);
    f->len = num->len;
    return 0;
}

/* A ts or dur value: a number or null. */
static int time_value(dec_t *d, int col, double *out) {
    uint8_t c = *d->p;
    *out = NAN;
    if (c == 'n') return literal(d, "null", 4);
    if (c != '-' && !is_digit(c)) return give_up(d, d->p, "ts or dur is not a number");
    num_t num;
    if (parse_number(d, &num) < 0) return -1;
    switch (num.kind) {
    case N_INT: *out = (double)num.i; return 0;
    case N_UINT: *out = (double)(uint64_t)num.i; return 0;
    case N_DOUBLE: *out = num.f; return 0;
    default: return defer_number(d, col, d->n_ev, &num);
    }
}

/* A string-or-null field: its code in t (-1 for null). */
static int str_field(dec_t *d, table_t *t, int32_t *out) {
    *out = -1;
    if (*d->p == 'n') return literal(d, "null", 4);
    if (*d->p != '"') return give_up(d, d->p, "a string field is not a string");
    str_t s;
    if (scan_string(d, &s) < 0) return -1;
    if (!t) return 0;
    return (*out = intern_str(d, t, &s)) < 0 ? -1 : 0;
}

/* pid, tid or id: an integer, a string or null. */
static int id_field(dec_t *d, table_t *t, int32_t *out) {
    uint8_t c = *d->p;
    if (c == '"' || c == 'n') return str_field(d, t, out);
    if (c != '-' && !is_digit(c)) return give_up(d, d->p, "an id is not an integer or string");
    num_t num;
    if (parse_number(d, &num) < 0) return -1;
    if (num.kind != N_INT && num.kind != N_UINT)
        return give_up(d, num.start, "an id is a fraction or beyond 64 bits");
    *out = intern(d, t, NULL, 0, (uint64_t)num.i, num.kind == N_INT ? TAG_INT : TAG_UINT, 1, 0);
    return *out < 0 ? -1 : 0;
}

static int add_row(dec_t *d) {
    if (d->n_rows == d->row_cap) {
        void **arrs[] = {(void **)&d->r_src,  (void **)&d->r_int,  (void **)&d->r_key,
                         (void **)&d->r_text, (void **)&d->r_kind, (void **)&d->r_tcat,
                         (void **)&d->r_float};
        const size_t sizes[] = {8, 8, 4, 4, 1, 1, 8};
        if (grow_all(arrs, sizes, 7, &d->row_cap, d->n_rows + 1) < 0) return no_memory(d);
    }
    size_t r = d->n_rows++;
    d->r_src[r] = (int64_t)d->n_ev;
    d->r_int[r] = 0;
    d->r_float[r] = NAN;
    d->r_text[r] = -1;
    d->r_kind[r] = K_STR;
    d->r_tcat[r] = T_NONE;
    return 0;
}

/* A text arg value: code into the texts. */
static int text_row(dec_t *d, const uint8_t *p, size_t len, int ascii, int copy, int tcat) {
    int32_t k = intern(d, &d->t_text, p, len, 0, TAG_STR, ascii, copy);
    if (k < 0) return -1;
    d->r_text[d->n_rows - 1] = k;
    d->r_tcat[d->n_rows - 1] = (int8_t)tcat;
    return 0;
}

/* One arg value at d->p, as the row just added. */
static int arg_value(dec_t *d) {
    size_t r = d->n_rows - 1;
    uint8_t c = *d->p;
    if (c == '"') {
        str_t s;
        if (scan_string(d, &s) < 0) return -1;
        if (!s.escaped)
            return text_row(d, s.start, (size_t)(s.end - s.start), s.ascii, 0, T_STRING);
        size_t n;
        if (unescape(d, &s, &n) < 0) return -1;
        return text_row(d, d->scratch, n, s.ascii, 1, T_STRING);
    }
    if (c == '[' || c == '{') {
        const uint8_t *start = d->p;
        d->saw_nonascii = 0;
        if (skip_value(d) < 0) return -1;
        return text_row(d, start, (size_t)(d->p - start), !d->saw_nonascii, 0, T_NESTED);
    }
    if (c == 'n') {
        if (literal(d, "null", 4) < 0) return -1;
        return text_row(d, (const uint8_t *)"null", 4, 1, 0, T_NULL);
    }
    if (c == 't' || c == 'f') {
        if (c == 't' ? literal(d, "true", 4) : literal(d, "false", 5)) return -1;
        d->r_kind[r] = K_INT;
        d->r_int[r] = c == 't';
        return 0;
    }
    if (c != '-' && !is_digit(c)) return give_up(d, d->p, "an invalid arg value");
    num_t num;
    if (parse_number(d, &num) < 0) return -1;
    switch (num.kind) {
    case N_INT:
    case N_UINT:
        d->r_kind[r] = num.kind == N_INT ? K_INT : K_UINT;
        d->r_int[r] = num.i;
        return 0;
    case N_BIG: /* past 64 bits: kept as the digits written (what str(int) gives back) */
        return text_row(d, num.start, num.len, 1, 0, T_BIGINT);
    case N_DOUBLE:
        d->r_kind[r] = K_DOUBLE;
        d->r_float[r] = num.f;
        return 0;
    default:
        d->r_kind[r] = K_DOUBLE;
        return defer_number(d, 2, r, &num);
    }
}

/* An event's args object at d->p: one row per member. */
static int parse_args(dec_t *d) {
    int r = open_container(d, '}');
    if (r) return r < 0 ? -1 : 0;
    do {
        str_t key;
        if (member_key(d, &key) < 0) return -1;
        int32_t k = intern_str(d, &d->t_key, &key);
        if (k < 0) return -1;
        if ((size_t)k >= d->key_last_cap) {
            size_t old = d->key_last_cap;
            if (grow((void **)&d->key_last_event, &d->key_last_cap, (size_t)k + 1, 8) < 0)
                return no_memory(d);
            for (size_t i = old; i < d->key_last_cap; i++) d->key_last_event[i] = -1;
        }
        if (d->key_last_event[k] == (int64_t)d->n_ev)
            return give_up(d, key.start, "a duplicate key in args");
        d->key_last_event[k] = (int64_t)d->n_ev;
        if (add_row(d) < 0) return -1;
        d->r_key[d->n_rows - 1] = k;
        if (arg_value(d) < 0) return -1;
    } while ((r = next_member(d, '}')) == 0);
    d->depth--;
    return r < 0 ? -1 : 0;
}

/* Which event field a key names (0 for none). */
static int event_field(const uint8_t *k, size_t n) {
    switch (n) {
    case 1: return k[0] == 's' ? F_S : 0;
    case 2:
        if (!memcmp(k, "ph", 2)) return F_PH;
        if (!memcmp(k, "ts", 2)) return F_TS;
        if (!memcmp(k, "id", 2)) return F_ID;
        if (!memcmp(k, "bp", 2)) return F_BP;
        return 0;
    case 3:
        if (!memcmp(k, "pid", 3)) return F_PID;
        if (!memcmp(k, "tid", 3)) return F_TID;
        if (!memcmp(k, "dur", 3)) return F_DUR;
        if (!memcmp(k, "cat", 3)) return F_CAT;
        if (!memcmp(k, "id2", 3)) return F_ID2;
        return 0;
    case 4:
        if (!memcmp(k, "name", 4)) return F_NAME;
        if (!memcmp(k, "args", 4)) return F_ARGS;
        return 0;
    }
    return 0;
}

/* A key as decoded text, for matching field names. */
static int key_text(dec_t *d, const str_t *key, const uint8_t **k, size_t *n) {
    if (!key->escaped) {
        *k = key->start;
        *n = (size_t)(key->end - key->start);
        return 0;
    }
    if (unescape(d, key, n) < 0) return -1;
    *k = d->scratch;
    return 0;
}

static int grow_events(dec_t *d) {
    if (d->n_ev < d->ev_cap) return 0;
    void **arrs[] = {(void **)&d->ev_ph,  (void **)&d->ev_name, (void **)&d->ev_cat,
                     (void **)&d->ev_bp,  (void **)&d->ev_pid,  (void **)&d->ev_tid,
                     (void **)&d->ev_id,  (void **)&d->ev_id2,  (void **)&d->ev_ts,
                     (void **)&d->ev_dur};
    const size_t sizes[] = {4, 4, 4, 4, 4, 4, 4, 4, 8, 8};
    return grow_all(arrs, sizes, 10, &d->ev_cap, d->n_ev + 1) < 0 ? no_memory(d) : 0;
}

/* id2: an object (its raw text, checked and decoded in Python: rare) or null. */
static int id2_field(dec_t *d, int32_t *out) {
    *out = -1;
    if (*d->p == 'n') return literal(d, "null", 4);
    if (*d->p != '{') return give_up(d, d->p, "id2 is not an object");
    const uint8_t *start = d->p;
    d->saw_nonascii = 0;
    if (skip_value(d) < 0) return -1;
    *out = intern(d, &d->t_id2, start, (size_t)(d->p - start), 0, TAG_STR, !d->saw_nonascii, 0);
    return *out < 0 ? -1 : 0;
}

/* One element of traceEvents at d->p. */
static int parse_event(dec_t *d) {
    if (*d->p != '{') return give_up(d, d->p, "an event is not an object");
    if (grow_events(d) < 0) return -1;
    size_t e = d->n_ev;
    d->ev_ph[e] = d->ev_name[e] = d->ev_cat[e] = d->ev_bp[e] = -1;
    d->ev_pid[e] = d->ev_tid[e] = d->ev_id[e] = d->ev_id2[e] = -1;
    d->ev_ts[e] = d->ev_dur[e] = NAN;
    int seen = 0, nonnull = 0, more = open_container(d, '}');
    if (more < 0) return -1;
    while (more == 0) {
        str_t key;
        const uint8_t *k;
        size_t kn;
        int32_t unused, r;
        if (member_key(d, &key) < 0 || key_text(d, &key, &k, &kn) < 0) return -1;
        int f = event_field(k, kn);
        if (f & seen) return give_up(d, key.start, "a duplicate field in an event");
        seen |= f;
        if (f && *d->p != 'n') nonnull |= f;
        switch (f) {
        case F_PH: r = str_field(d, &d->t_ph, &d->ev_ph[e]); break;
        case F_NAME: r = str_field(d, &d->t_name, &d->ev_name[e]); break;
        case F_CAT: r = str_field(d, &d->t_cat, &d->ev_cat[e]); break;
        case F_BP: r = str_field(d, &d->t_bp, &d->ev_bp[e]); break;
        case F_S: r = str_field(d, NULL, &unused); break;
        case F_PID: r = id_field(d, &d->t_pid, &d->ev_pid[e]); break;
        case F_TID: r = id_field(d, &d->t_tid, &d->ev_tid[e]); break;
        case F_ID: r = id_field(d, &d->t_id, &d->ev_id[e]); break;
        case F_TS: r = time_value(d, 0, &d->ev_ts[e]); break;
        case F_DUR: r = time_value(d, 1, &d->ev_dur[e]); break;
        case F_ID2: r = id2_field(d, &d->ev_id2[e]); break;
        case F_ARGS:
            if (*d->p == 'n') r = literal(d, "null", 4);
            else if (*d->p == '{') r = parse_args(d);
            else r = give_up(d, d->p, "args is not an object");
            break;
        default: r = skip_value(d);
        }
        if (r < 0) return -1;
        more = next_member(d, '}');
        if (more < 0) return -1;
        if (more == 1) d->depth--;
    }
    d->last_mask = nonnull;
    d->n_ev++;
    return 0;
}

/* The traceEvents array at d->p. */
static int parse_events(dec_t *d) {
    if (*d->p != '[') return give_up(d, d->p, "traceEvents is not an array");
    int r = open_container(d, ']');
    if (r) return r < 0 ? -1 : 0;
    do {
        if (parse_event(d) < 0) return -1;
    } while ((r = next_member(d, ']')) == 0);
    d->depth--;
    return r < 0 ? -1 : 0;
}

static const char *const TOP_ANY[4] = {"deviceProperties", "baseTimeNanoseconds",
                                       "schemaVersion", "distributedInfo"};
static const char *const TOP_RAW[3] = {"samples", "stackFrames", "systemTraceEvents"};

/* The JSON Object Format: traceEvents and the keys _Trace reads beside it. */
static int parse_top_object(dec_t *d) {
    int r = open_container(d, '}');
    if (r) return give_up(d, d->p, "no traceEvents");
    do {
        str_t key;
        const uint8_t *k;
        size_t kn;
        if (member_key(d, &key) < 0 || key_text(d, &key, &k, &kn) < 0) return -1;
        int which = -1; /* 0..3 TOP_ANY, 4..6 TOP_RAW, 7 traceEvents */
        for (int i = 0; i < 4; i++)
            if (kn == strlen(TOP_ANY[i]) && !memcmp(k, TOP_ANY[i], kn)) which = i;
        for (int i = 0; i < 3; i++)
            if (kn == strlen(TOP_RAW[i]) && !memcmp(k, TOP_RAW[i], kn)) which = 4 + i;
        if (kn == 11 && !memcmp(k, "traceEvents", 11)) which = 7;
        if (which >= 0) {
            if (d->top_seen & (1 << which)) return give_up(d, key.start, "a duplicate key");
            d->top_seen |= 1 << which;
        }
        const uint8_t *start = d->p;
        if (which == 7) {
            if (parse_events(d) < 0) return -1;
            d->has_events = 1;
        } else if (skip_value(d) < 0) {
            return -1;
        }
        if (which >= 0 && which < 4) {
            d->top_start[which] = start;
            d->top_end[which] = d->p;
        } else if (which >= 4 && which < 7) {
            d->unloaded |= 1 << (which - 4);
        }
    } while ((r = next_member(d, '}')) == 0);
    d->depth--;
    if (r < 0) return -1;
    if (!d->has_events) return give_up(d, d->p, "no traceEvents");
    return 0;
}

static int parse_document(dec_t *d) {
    skip_ws(d);
    if (d->p >= d->end) return give_up(d, d->p, "no JSON value");
    if (*d->p == '[') {
        d->is_array = 1;
        if (parse_events(d) < 0) return -1;
    } else if (*d->p == '{') {
        if (parse_top_object(d) < 0) return -1;
    } else {
        return give_up(d, d->p, "neither an object nor an array");
    }
    skip_ws(d);
    if (d->p != d->end) return give_up(d, d->p, "trailing characters");
    return 0;
}

/* -- rows in flatten_args' order --------------------------------------------------------- */

typedef struct {
    int64_t *src, *key, *intv, *text;
    int8_t *kind;
    double *flt;
    size_t *pos;   /* pos[provisional row] = final row */
    int32_t *text_order; /* final text code -> interned text */
} rows_t;

/* Rows sorted by arg name (stable: event order within a name), and texts numbered in the
 * order flatten_args meets them: per name, its strings, then its nested values, its nulls,
 * its integers past 64 bits, each in row order. */
static int order_rows(dec_t *d, rows_t *o) {
    size_t n = d->n_rows, nk = d->t_key.n, nt = d->t_text.n;
    size_t *start = (size_t *)calloc(nk + 1, sizeof(size_t));
    int32_t *final = (int32_t *)malloc((nt ? nt : 1) * sizeof(int32_t));
    uint8_t *cats = (uint8_t *)calloc(nk ? nk : 1, 1);
    o->src = (int64_t *)malloc((n ? n : 1) * 8);
    o->key = (int64_t *)malloc((n ? n : 1) * 8);
    o->intv = (int64_t *)malloc((n ? n : 1) * 8);
    o->text = (int64_t *)malloc((n ? n : 1) * 8);
    o->kind = (int8_t *)malloc(n ? n : 1);
    o->flt = (double *)malloc((n ? n : 1) * 8);
    o->pos = (size_t *)malloc((n ? n : 1) * sizeof(size_t));
    o->text_order = (int32_t *)malloc((nt ? nt : 1) * sizeof(int32_t));
    int32_t *prov = (int32_t *)malloc((n ? n : 1) * sizeof(int32_t));
    int8_t *tcat = (int8_t *)malloc(n ? n : 1);
    if (!start || !final || !cats || !o->src || !o->key || !o->intv || !o->text || !o->kind ||
        !o->flt || !o->pos || !o->text_order || !prov || !tcat) {
        free(start);
        free(final);
        free(cats);
        free(prov);
        free(tcat);
        return -1;
    }
    for (size_t r = 0; r < n; r++) start[d->r_key[r] + 1]++;
    for (size_t k = 0; k < nk; k++) start[k + 1] += start[k];
    for (size_t r = 0; r < n; r++) {
        int32_t k = d->r_key[r];
        size_t to = start[k]++;
        o->pos[r] = to;
        o->src[to] = d->r_src[r];
        o->key[to] = k;
        o->intv[to] = d->r_int[r];
        o->kind[to] = d->r_kind[r];
        o->flt[to] = d->r_float[r];
        prov[to] = d->r_text[r];
        tcat[to] = d->r_tcat[r];
        cats[k] |= (uint8_t)(1 << d->r_tcat[r]);
    }
    /* start[k] is now the end of name k's rows */
    memset(final, 0xff, (nt ? nt : 1) * sizeof(int32_t));
    int32_t next = 0;
    size_t lo = 0;
    for (size_t k = 0; k < nk; k++) {
        size_t hi = start[k];
        for (int c = T_STRING; c <= T_BIGINT; c++) {
            if (!(cats[k] & (1 << c))) continue;
            for (size_t r = lo; r < hi; r++)
                if (tcat[r] == c && final[prov[r]] < 0) final[prov[r]] = next++;
        }
        lo = hi;
    }
    for (size_t r = 0; r < n; r++) o->text[r] = prov[r] >= 0 ? final[prov[r]] : -1;
    int complete = 1;
    for (size_t t = 0; t < nt; t++) {
        if (final[t] < 0) complete = 0; /* cannot happen: every text comes with its row */
        else o->text_order[final[t]] = (int32_t)t;
    }
    free(start);
    free(final);
    free(cats);
    free(prov);
    free(tcat);
    return complete ? 0 : -1;
}

/* -- Python objects ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    void *data;
    Py_ssize_t len;
} ColumnObject;

static void column_dealloc(ColumnObject *self) {
    free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int column_getbuffer(ColumnObject *self, Py_buffer *view, int flags) {
    static char empty[8];
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data ? self->data : empty, self->len,
                             0, flags);
}

static PyBufferProcs column_as_buffer = {(getbufferproc)column_getbuffer, NULL};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfprof_widgets.readers.chrome._chrome.Column",
    .tp_basicsize = sizeof(ColumnObject),
    .tp_dealloc = (destructor)column_dealloc,
    .tp_as_buffer = &column_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One decoded column: its bytes, exported by the buffer protocol.",
};

/* n items of `size` bytes at *data as a Column; the Column owns them from now on. */
static PyObject *to_column(void **data, size_t n, size_t size) {
    ColumnObject *col = PyObject_New(ColumnObject, &ColumnType);
    if (!col) return NULL;
    col->data = *data;
    col->len = (Py_ssize_t)(n * size);
    *data = NULL;
    return (PyObject *)col;
}

static PyObject *entry_object(const entry_t *e) {
    if (e->tag == TAG_INT) return PyLong_FromLongLong((long long)e->num);
    if (e->tag == TAG_UINT) return PyLong_FromUnsignedLongLong((unsigned long long)e->num);
    if (e->ascii) {
        PyObject *s = PyUnicode_New((Py_ssize_t)e->len, 127);
        if (s && e->len) memcpy(PyUnicode_DATA(s), e->ptr, e->len);
        return s;
    }
    return PyUnicode_DecodeUTF8((const char *)e->ptr, (Py_ssize_t)e->len, "strict");
}

/* The values of a table as a list (in the order `order`, or their own). */
static PyObject *table_list(const table_t *t, const int32_t *order) {
    PyObject *list = PyList_New((Py_ssize_t)t->n);
    if (!list) return NULL;
    for (size_t i = 0; i < t->n; i++) {
        PyObject *v = entry_object(&t->e[order ? order[i] : (int32_t)i]);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* The raw texts of a table (id2 objects) as bytes. */
static PyObject *table_bytes(const table_t *t) {
    PyObject *list = PyList_New((Py_ssize_t)t->n);
    if (!list) return NULL;
    for (size_t i = 0; i < t->n; i++) {
        PyObject *v = PyBytes_FromStringAndSize((const char *)t->e[i].ptr, t->e[i].len);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* The deferred floats, with the GIL: 1 when one is out of range (give up), -1 on error. */
static int resolve_deferred(dec_t *d, rows_t *o) {
    char small[64];
    for (size_t i = 0; i < d->n_defer; i++) {
        struct deferred *f = &d->defer[i];
        char *buf = f->len < sizeof(small) ? small : (char *)PyMem_Malloc(f->len + 1);
        if (!buf) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(buf, d->base + f->off, f->len);
        buf[f->len] = 0;
        char *endp = NULL;
        double v = PyOS_string_to_double(buf, &endp, NULL);
        int ok = !(v == -1.0 && PyErr_Occurred()) && endp == buf + f->len && !isinf(v);
        if (buf != small) PyMem_Free(buf);
        if (!ok) {
            PyErr_Clear();
            d->why = "a number beyond the double range";
            d->why_at = f->off;
            return 1;
        }
        if (f->col == 0) d->ev_ts[f->index] = v;
        else if (f->col == 1) d->ev_dur[f->index] = v;
        else o->flt[o->pos[f->index]] = v;
    }
    return 0;
}

static void free_tables(dec_t *d) {
    table_t *all[] = {&d->t_ph, &d->t_name, &d->t_cat, &d->t_bp, &d->t_pid,
                      &d->t_tid, &d->t_id, &d->t_id2, &d->t_key, &d->t_text};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        free(all[i]->e);
        free(all[i]->slots);
    }
    while (d->arena) {
        chunk_t *next = d->arena->next;
        free(d->arena);
        d->arena = next;
    }
}

static void free_dec(dec_t *d, rows_t *o) {
    void *all[] = {d->ev_ph, d->ev_name, d->ev_cat, d->ev_bp, d->ev_pid, d->ev_tid, d->ev_id,
                   d->ev_id2, d->ev_ts, d->ev_dur, d->r_src, d->r_int, d->r_key, d->r_text,
                   d->r_kind, d->r_tcat, d->r_float, d->key_last_event, d->defer, d->scratch,
                   o->src, o->key, o->intv, o->text, o->kind, o->flt, o->pos, o->text_order};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) free(all[i]);
    free_tables(d);
}

static PyObject *reason(dec_t *d) {
    return PyUnicode_FromFormat("%s at byte %zu", d->why ? d->why : "unknown", d->why_at);
}

static PyObject *build_result(dec_t *d, rows_t *o) {
    PyObject *top = PyDict_New();
    if (!top) return NULL;
    for (int i = 0; i < 4; i++) {
        if (!d->top_start[i]) continue;
        PyObject *b = PyBytes_FromStringAndSize((const char *)d->top_start[i],
                                                d->top_end[i] - d->top_start[i]);
        if (!b || PyDict_SetItemString(top, TOP_ANY[i], b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(top);
            return NULL;
        }
        Py_DECREF(b);
    }
    PyObject *unloaded = PyList_New(0);
    for (int i = 0; unloaded && i < 3; i++) {
        if (!(d->unloaded & (1 << i))) continue;
        PyObject *s = PyUnicode_FromString(TOP_RAW[i]);
        if (!s || PyList_Append(unloaded, s) < 0) Py_CLEAR(unloaded);
        Py_XDECREF(s);
    }
    size_t n = d->n_ev, m = d->n_rows;
    return Py_BuildValue(
        "{s:n,s:O,s:N,s:N,s:N,"
        "s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,"
        "s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,"
        "s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
        "n", (Py_ssize_t)n, "array", d->is_array ? Py_True : Py_False, "last_empty",
        PyBool_FromLong(n > 0 && d->last_mask == 0), "top", top, "unloaded", unloaded,
        "ts", to_column((void **)&d->ev_ts, n, 8), "dur", to_column((void **)&d->ev_dur, n, 8),
        "ph", to_column((void **)&d->ev_ph, n, 4), "name", to_column((void **)&d->ev_name, n, 4),
        "cat", to_column((void **)&d->ev_cat, n, 4), "bp", to_column((void **)&d->ev_bp, n, 4),
        "pid", to_column((void **)&d->ev_pid, n, 4), "tid", to_column((void **)&d->ev_tid, n, 4),
        "id", to_column((void **)&d->ev_id, n, 4), "id2", to_column((void **)&d->ev_id2, n, 4),
        "ph_values", table_list(&d->t_ph, NULL), "name_values", table_list(&d->t_name, NULL),
        "cat_values", table_list(&d->t_cat, NULL), "bp_values", table_list(&d->t_bp, NULL),
        "pid_values", table_list(&d->t_pid, NULL), "tid_values", table_list(&d->t_tid, NULL),
        "id_values", table_list(&d->t_id, NULL), "id2_texts", table_bytes(&d->t_id2),
        "arg_src", to_column((void **)&o->src, m, 8), "arg_key", to_column((void **)&o->key, m, 8),
        "arg_kind", to_column((void **)&o->kind, m, 1),
        "arg_int", to_column((void **)&o->intv, m, 8),
        "arg_float", to_column((void **)&o->flt, m, 8),
        "arg_str", to_column((void **)&o->text, m, 8), "keys", table_list(&d->t_key, NULL),
        "texts", table_list(&d->t_text, o->text_order));
}

static PyObject *py_decode(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "decode() takes bytes");
        return NULL;
    }
    dec_t d;
    rows_t o;
    memset(&d, 0, sizeof(d));
    memset(&o, 0, sizeof(o));
    d.base = d.p = (const uint8_t *)PyBytes_AS_STRING(arg);
    d.end = d.base + PyBytes_GET_SIZE(arg);
    int rc;
    Py_INCREF(arg); /* the bytes stay alive (and immutable) while the GIL is released */
    Py_BEGIN_ALLOW_THREADS
    rc = parse_document(&d);
    if (rc == 0 && order_rows(&d, &o) < 0) rc = no_memory(&d);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (rc == 0) {
        int r = resolve_deferred(&d, &o);
        if (r == 0) result = build_result(&d, &o);
        else if (r == 1) result = reason(&d);
    } else {
        result = reason(&d);
    }
    free_dec(&d, &o);
    Py_DECREF(arg);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", py_decode, METH_O,
     "decode(data: bytes) -> dict of columns, or a str: why it gave up (the msgspec path must\n"
     "then decode the trace). See the module's source for the columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_chrome", "Columnar Chrome trace JSON decoder.", -1, methods};

PyMODINIT_FUNC PyInit__chrome(void) {
    if (PyType_Ready(&ColumnType) < 0) return NULL;
    PyObject *key = PyUnicode_FromString("tfprof_widgets.readers.chrome._chrome");
    Py_hash_t seed = key ? PyObject_Hash(key) : -1;
    Py_XDECREF(key);
    if (seed == -1 && PyErr_Occurred()) return NULL;
    hash_seed = mix64((uint64_t)seed ^ hash_seed);
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "LONG_STRING", LONG_STRING) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (m && PyModule_AddStringConstant(m, "LONE_SURROGATE", LONE_SURROGATE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (m && PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
