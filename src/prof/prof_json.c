/* A small JSON reader for the profiler's own files (profiles to merge): the
 * whole text to a tree. Bad input gives an error with the byte offset,
 * never a crash; nesting is limited. */
#include "prof/prof_json.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *p, *start, *end;
    char *err;
    size_t cap;
    int depth;
} rd_t;

static bool fail(rd_t *r, const char *fmt, ...)
{
    if (r->err[0])
        return false;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(r->err, r->cap, "at byte %zu: ", (size_t)(r->p - r->start));
    if (n > 0 && (size_t)n < r->cap)
        vsnprintf(r->err + n, r->cap - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static void ws(rd_t *r)
{
    while (r->p < r->end && isspace((unsigned char)*r->p))
        r->p++;
}

static bool value(rd_t *r, pj_t *out);

static bool push(pj_t *v, pj_t *kid, char *key)
{
    if (v->n % 16 == 0) {
        pj_t *k = realloc(v->kids, (v->n + 16) * sizeof *k);
        if (!k)
            return false;
        v->kids = k;
        if (v->t == PJ_OBJ) {
            char **ks = realloc(v->keys, (v->n + 16) * sizeof *ks);
            if (!ks)
                return false;
            v->keys = ks;
        }
    }
    v->kids[v->n] = *kid;
    if (v->t == PJ_OBJ)
        v->keys[v->n] = key;
    v->n++;
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One escape after its backslash into buf as UTF-8: its length, or 0 after
 * an error. */
static int escape(rd_t *r, char buf[4])
{
    static const char pairs[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    if (r->p >= r->end) {
        fail(r, "unterminated string");
        return 0;
    }
    char e = *r->p++;
    if (e != 'u') {
        const char *map = e ? strchr(pairs, e) : NULL;
        if (!map || (map - pairs) % 2) {
            fail(r, "bad escape '\\%c'", e);
            return 0;
        }
        buf[0] = map[1];
        return 1;
    }
    unsigned u = 0;
    for (int i = 0; i < 4; i++) {
        int h = r->p < r->end ? hexval(*r->p++) : -1;
        if (h < 0) {
            fail(r, "bad \\u escape");
            return 0;
        }
        u = u * 16 + (unsigned)h;
    }
    if (u < 0x80) { /* UTF-8, no surrogate pairs (the profiler never writes them) */
        buf[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        buf[0] = (char)(0xC0 | u >> 6);
        buf[1] = (char)(0x80 | (u & 63));
        return 2;
    }
    buf[0] = (char)(0xE0 | u >> 12);
    buf[1] = (char)(0x80 | (u >> 6 & 63));
    buf[2] = (char)(0x80 | (u & 63));
    return 3;
}

static char *string(rd_t *r)
{
    r->p++; /* the quote */
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    if (!s) {
        fail(r, "out of memory");
        return NULL;
    }
    while (r->p < r->end && *r->p != '"') {
        unsigned c = (unsigned char)*r->p++;
        char buf[4] = {(char)c};
        int len = 1;
        if (c < 0x20)
            fail(r, "control character in a string");
        else if (c == '\\')
            len = escape(r, buf);
        if (r->err[0] || len == 0)
            break;
        if (n + (size_t)len + 1 > cap) {
            char *ns = realloc(s, cap * 2);
            if (!ns) {
                fail(r, "out of memory");
                break;
            }
            s = ns;
            cap *= 2;
        }
        memcpy(s + n, buf, (size_t)len);
        n += (size_t)len;
    }
    if (!r->err[0] && r->p >= r->end)
        fail(r, "unterminated string");
    if (r->err[0]) {
        free(s);
        return NULL;
    }
    r->p++;
    s[n] = 0;
    return s;
}

static bool container(rd_t *r, pj_t *out, char close)
{
    if (++r->depth > MAX_DEPTH)
        return fail(r, "nested deeper than %d", MAX_DEPTH);
    out->t = close == '}' ? PJ_OBJ : PJ_ARR;
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        r->depth--;
        return true;
    }
    for (;;) {
        char *key = NULL;
        ws(r);
        if (out->t == PJ_OBJ) {
            if (r->p >= r->end || *r->p != '"')
                return fail(r, "expected a key");
            if (!(key = string(r)))
                return false;
            ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(key);
                return fail(r, "expected ':'");
            }
            r->p++;
        }
        pj_t kid;
        if (!value(r, &kid)) {
            free(key);
            pj_clear(&kid); /* what it held before the error */
            return false;
        }
        if (!push(out, &kid, key)) {
            free(key);
            pj_clear(&kid);
            return fail(r, "out of memory");
        }
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            r->depth--;
            return true;
        }
        return fail(r, "expected ',' or '%c'", close);
    }
}

static bool value(rd_t *r, pj_t *out)
{
    memset(out, 0, sizeof *out);
    ws(r);
    if (r->p >= r->end)
        return fail(r, "unexpected end");
    char c = *r->p;
    if (c == '{' || c == '[')
        return container(r, out, c == '{' ? '}' : ']');
    if (c == '"') {
        out->t = PJ_STR;
        return (out->str = string(r)) != NULL;
    }
    static const struct { const char *w; pj_type_t t; bool b; } words[] = {
        {"true", PJ_BOOL, true}, {"false", PJ_BOOL, false}, {"null", PJ_NULL, false}};
    for (size_t i = 0; i < 3; i++) {
        size_t l = strlen(words[i].w);
        if ((size_t)(r->end - r->p) >= l && !memcmp(r->p, words[i].w, l)) {
            out->t = words[i].t;
            out->num = words[i].b;
            r->p += l;
            return true;
        }
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        char buf[64];
        size_t n = 0;
        while (r->p < r->end && n < sizeof buf - 1 && strchr("+-.eE0123456789", *r->p))
            buf[n++] = *r->p++;
        buf[n] = 0;
        char *e;
        out->t = PJ_NUM;
        out->num = strtod(buf, &e);
        return *e ? fail(r, "bad number '%s'", buf) : true;
    }
    return fail(r, "unexpected '%c'", c);
}

pj_t *pj_parse(const char *text, size_t len, char *err, size_t cap)
{
    rd_t r = {text, text, text + len, err, cap, 0};
    err[0] = 0;
    pj_t *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    if (!value(&r, v)) {
        pj_free(v);
        return NULL;
    }
    ws(&r);
    if (r.p != r.end) {
        fail(&r, "text after the value");
        pj_free(v);
        return NULL;
    }
    return v;
}

void pj_clear(pj_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        pj_clear(&v->kids[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->kids);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

void pj_free(pj_t *v)
{
    if (v) {
        pj_clear(v);
        free(v);
    }
}

const pj_t *pj_get(const pj_t *v, const char *key)
{
    if (!v || v->t != PJ_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->kids[i];
    return NULL;
}

const pj_t *pj_at(const pj_t *v, size_t i) { return v && v->t == PJ_ARR && i < v->n ? &v->kids[i] : NULL; }
size_t pj_len(const pj_t *v) { return v && (v->t == PJ_ARR || v->t == PJ_OBJ) ? v->n : 0; }
double pj_num(const pj_t *v, double def) { return v && (v->t == PJ_NUM || v->t == PJ_BOOL) ? v->num : def; }
const char *pj_str(const pj_t *v, const char *def) { return v && v->t == PJ_STR ? v->str : def; }

uint64_t pj_u64(const pj_t *v, uint64_t def)
{
    double d = pj_num(v, -1);
    return d >= 0 && d < 18446744073709551616.0 ? (uint64_t)d : def; /* [0, 2^64) */
}

int pj_int(const pj_t *v, int def)
{
    double d = pj_num(v, (double)INT_MIN - 1);
    return d > (double)INT_MIN - 1 && d < (double)INT_MAX + 1 ? (int)d : def;
}

void pj_write_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
