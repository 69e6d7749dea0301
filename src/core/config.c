/* The one place LOCUS_* tunables are parsed and validated (tunables.def). */
#include "core/config.h"
#include "core/error.h"
#include "core/tune.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

typedef enum { T_SIZE, T_SIZEPCT, T_INT, T_BOOL, T_ENUM, T_STRING, T_DOUBLE } tun_type_t;

typedef struct {
    const char *name, *module, *def, *choices, *help;
    tun_type_t type;
    double min, max;
} tunable_t;

#define TYPE_SIZE T_SIZE
#define TYPE_SIZEPCT T_SIZEPCT
#define TYPE_INT T_INT
#define TYPE_BOOL T_BOOL
#define TYPE_ENUM T_ENUM
#define TYPE_STRING T_STRING
#define TYPE_DOUBLE T_DOUBLE

static const tunable_t tunables[LC_TUN_COUNT] = {
#define LOCUS_TUNABLE(ID, mod, type, def, mn, mx, ch, help) \
    { "LOCUS_" #ID, mod, def, ch, help, TYPE_##type, (double)(mn), (double)(mx) },
#include "core/tunables.def"
#undef LOCUS_TUNABLE
};

/* Filled by the modules (lc_tun_set_validator/_resolver) when they are loaded. */
static lc_tun_validator_t validators[LC_TUN_COUNT];
static lc_tun_resolver_t resolvers[LC_TUN_COUNT];

void lc_tun_set_resolver(lc_tun_id_t id, lc_tun_resolver_t fn)
{
    if ((unsigned)id < LC_TUN_COUNT)
        resolvers[id] = fn;
}

void lc_tun_set_validator(lc_tun_id_t id, lc_tun_validator_t fn)
{
    if ((unsigned)id < LC_TUN_COUNT)
        validators[id] = fn;
}

static const char *type_name(tun_type_t t)
{
    static const char *names[] = {"size", "sizepct", "int", "bool", "enum", "string", "double"};
    return names[t];
}

/* ---------- tunables ---------- */

/* The explicit value: the environment's, else the tune file's, else NULL. */
static const char *explicit_value(lc_tun_id_t id, lc_tun_source_t *src)
{
    const char *v = getenv(tunables[id].name);
    if (v) {
        if (src) *src = LC_SRC_ENV;
        return v;
    }
    v = lc_tune_value(tunables[id].name);
    if (src) *src = v ? LC_SRC_TUNE : LC_SRC_DEFAULT;
    return v;
}

bool lc_tun_is_set(lc_tun_id_t id)
{
    return explicit_value(id, NULL) != NULL;
}

lc_tun_source_t lc_tun_source(lc_tun_id_t id)
{
    lc_tun_source_t src;
    explicit_value(id, &src);
    return src;
}

const char *lc_tun_default(lc_tun_id_t id) { return tunables[id].def; }

const char *lc_tun_text(lc_tun_id_t id)
{
    const char *v = explicit_value(id, NULL);
    return v ? v : tunables[id].def;
}

/* Re-label a parser's message with the variable's name. */
static locus_status_t named(lc_tun_id_t id, locus_status_t st)
{
    if (st == LOCUS_OK)
        return st;
    char msg[400], where[600] = "";
    snprintf(msg, sizeof msg, "%s", locus_last_error());
    if (lc_tun_source(id) == LC_SRC_TUNE)
        snprintf(where, sizeof where, " (in the tune file %s)", lc_tune_path((char[512]){0}, 512));
    return lc_err(st, "%s=%s%s", tunables[id].name, msg, where);
}

static void accepted_text(const tunable_t *t, char *buf, size_t len)
{
    switch (t->type) {
    case T_SIZE:
        if (t->max > 0)
            snprintf(buf, len, "size in [%.0f, %.0f] bytes (K/M/G/T suffixes)", t->min, t->max);
        else
            snprintf(buf, len, "size in bytes (K/M/G/T suffixes)");
        break;
    case T_SIZEPCT: snprintf(buf, len, "size (K/M/G/T suffixes) or percentage, e.g. 50%%"); break;
    case T_INT: snprintf(buf, len, "integer in [%.0f, %.0f]", t->min, t->max); break;
    case T_BOOL: snprintf(buf, len, "1/0, yes/no, on/off, true/false"); break;
    case T_ENUM: snprintf(buf, len, "one of %s", t->choices); break;
    case T_DOUBLE: snprintf(buf, len, "number in [%g, %g]", t->min, t->max); break;
    case T_STRING: snprintf(buf, len, "%s", t->choices ? t->choices : "text"); break;
    }
}

typedef union {
    uint64_t u;
    int64_t i;
    double d;
    bool b;
    int e;
    const char *s;
    struct { uint64_t bytes; double pct; } sp;
} tun_value_t;

static locus_status_t parse_double(const tunable_t *t, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = *v ? strtod(v, &end) : NAN;
    if (!*v || *end || errno || isnan(d) || d < t->min || d > t->max)
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected a number in [%g, %g]", v, t->min, t->max);
    *out = d;
    return LOCUS_OK;
}

static locus_status_t parse_size(const tunable_t *t, const char *text, uint64_t *out)
{
    uint64_t v;
    locus_status_t st = locus_parse_size(text, &v);
    if (st == LOCUS_OK && t->max > 0 && ((double)v < t->min || (double)v > t->max)) {
        char acc[128];
        accepted_text(t, acc, sizeof acc);
        return lc_err(LOCUS_ERR_RANGE, "'%s': expected %s", text, acc);
    }
    if (st == LOCUS_OK)
        *out = v;
    return st;
}

/* Parse `text` as tunable id's type, bounds and validator (unnamed error). */
static locus_status_t parse_text(lc_tun_id_t id, const char *text, tun_value_t *v)
{
    const tunable_t *t = &tunables[id];
    switch (t->type) {
    case T_SIZE: return parse_size(t, text, &v->u);
    case T_SIZEPCT: return lc_parse_sizepct(text, &v->sp.bytes, &v->sp.pct);
    case T_INT: return lc_parse_int(text, (int64_t)t->min, (int64_t)t->max, &v->i);
    case T_BOOL: return lc_parse_bool(text, &v->b);
    case T_ENUM: return lc_parse_choice(text, t->choices, &v->e);
    case T_DOUBLE: return parse_double(t, text, &v->d);
    case T_STRING:
        v->s = text;
        return validators[id] ? validators[id](text) : LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_INVALID, "%s: unknown tunable type", t->name);
}

static const char *type_name(tun_type_t t);

/* Read tunable id (environment or default) as type `want`. */
static locus_status_t read_as(lc_tun_id_t id, tun_type_t want, tun_value_t *v)
{
    if (tunables[id].type != want)
        return lc_err(LOCUS_ERR_INVALID, "%s is a %s tunable, read as %s", tunables[id].name,
                      type_name(tunables[id].type), type_name(want));
    return named(id, parse_text(id, lc_tun_text(id), v));
}

locus_status_t lc_tun_size(lc_tun_id_t id, uint64_t *out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_SIZE, &v);
    if (!st) *out = v.u;
    return st;
}

locus_status_t lc_tun_sizepct(lc_tun_id_t id, uint64_t *bytes, double *percent)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_SIZEPCT, &v);
    if (!st) { *bytes = v.sp.bytes; *percent = v.sp.pct; }
    return st;
}

locus_status_t lc_tun_int(lc_tun_id_t id, int64_t *out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_INT, &v);
    if (!st) *out = v.i;
    return st;
}

locus_status_t lc_tun_bool(lc_tun_id_t id, bool *out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_BOOL, &v);
    if (!st) *out = v.b;
    return st;
}

locus_status_t lc_tun_enum(lc_tun_id_t id, int *out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_ENUM, &v);
    if (!st) *out = v.e;
    return st;
}

locus_status_t lc_tun_string(lc_tun_id_t id, const char **out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_STRING, &v);
    if (!st) *out = v.s;
    return st;
}

locus_status_t lc_tun_double(lc_tun_id_t id, double *out)
{
    tun_value_t v;
    locus_status_t st = read_as(id, T_DOUBLE, &v);
    if (!st) *out = v.d;
    return st;
}

uint64_t lc_tun_default_u64(lc_tun_id_t id)
{
    tun_value_t v = {0};
    if (parse_text(id, tunables[id].def, &v) != LOCUS_OK)
        return 0;
    return tunables[id].type == T_INT ? (uint64_t)v.i : v.u;
}

/* ---------- attribute structs ---------- */

static void store_int(char *field, unsigned width, uint64_t v)
{
    switch (width) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(field, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(field, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(field, &x, 4); break; }
    default: memcpy(field, &v, 8); break;
    }
}

static locus_status_t store(const lc_tun_bind_t *b, const tun_value_t *v, char *obj)
{
    char *f = obj + b->offset;
    switch (tunables[b->id].type) {
    case T_SIZE: store_int(f, b->width, v->u); break;
    case T_INT: store_int(f, b->width, (uint64_t)v->i); break;
    case T_ENUM: store_int(f, b->width, (uint64_t)(int64_t)v->e); break;
    case T_BOOL: *(bool *)f = v->b; break;
    case T_DOUBLE: memcpy(f, &v->d, sizeof v->d); break;
    case T_SIZEPCT:
        memcpy(f, &v->sp.bytes, 8);
        memcpy(obj + b->offset2, &v->sp.pct, sizeof(double));
        break;
    case T_STRING:
        if (b->parse)
            return b->parse(v->s, obj);
        {
            const char *s = *v->s ? v->s : NULL;
            memcpy(f, &s, sizeof s);
        }
        break;
    }
    return LOCUS_OK;
}

locus_status_t lc_tun_load(const lc_tun_bind_t *binds, size_t n, void *obj, size_t obj_size,
                           lc_tun_from_t from)
{
    if (!obj)
        return lc_err(LOCUS_ERR_INVALID, "attr NULL: expected an attribute struct");
    char *tmp = malloc(obj_size);
    if (!tmp)
        return lc_err(LOCUS_ERR_NO_MEMORY, "tunables: %zu bytes", obj_size);
    memcpy(tmp, obj, obj_size);
    locus_status_t st = LOCUS_OK;
    for (size_t i = 0; i < n && !st; i++) {
        lc_tun_id_t id = binds[i].id;
        const char *text = from == LC_TUN_ENV ? explicit_value(id, NULL) : tunables[id].def;
        if (!text)
            continue;
        tun_value_t v;
        st = named(id, parse_text(id, text, &v));
        if (!st)
            st = named(id, store(&binds[i], &v, tmp));
    }
    if (!st)
        memcpy(obj, tmp, obj_size);
    free(tmp);
    return st;
}

/* ---------- listing and checking ---------- */

static locus_status_t validate(lc_tun_id_t id)
{
    tun_value_t v;
    return named(id, parse_text(id, lc_tun_text(id), &v));
}

size_t locus_config_count(void) { return LC_TUN_COUNT; }

/* The texts locus_config_describe returns, per thread (valid until the
 * thread's next call for the same tunable), on the heap and freed at thread
 * exit: as TLS these 25 KB would be carried by every thread of every program
 * that links liblocus, and its TLS must stay small enough to be dlopen'ed. */
typedef struct {
    char accepted[LC_TUN_COUNT][160];
    char effective[LC_TUN_COUNT][200];
} describe_buf_t;

static pthread_key_t describe_key;
static pthread_once_t describe_once = PTHREAD_ONCE_INIT;
static bool describe_key_ok;

static void describe_key_init(void) { describe_key_ok = pthread_key_create(&describe_key, free) == 0; }

static describe_buf_t *describe_buf(void)
{
    pthread_once(&describe_once, describe_key_init);
    if (!describe_key_ok)
        return NULL;
    describe_buf_t *b = pthread_getspecific(describe_key);
    if (!b && (b = calloc(1, sizeof *b)) && pthread_setspecific(describe_key, b) != 0) {
        free(b);
        b = NULL;
    }
    return b;
}

locus_status_t locus_config_describe(size_t i, locus_tunable_info_t *info)
{
    if (i >= LC_TUN_COUNT || !info)
        return lc_err(LOCUS_ERR_INVALID, "tunable index %zu out of range [0, %d)", i,
                         (int)LC_TUN_COUNT);
    describe_buf_t *b = describe_buf();
    if (!b)
        return lc_err(LOCUS_ERR_NO_MEMORY, "locus_config_describe: no memory for the text of tunable %zu", i);
    const tunable_t *t = &tunables[i];
    char *accepted = b->accepted[i], *effective = b->effective[i];
    accepted_text(t, accepted, sizeof b->accepted[i]);
    info->name = t->name;
    info->module = t->module;
    info->type = type_name(t->type);
    info->def = t->def;
    info->accepted = accepted;
    info->help = t->help;
    lc_tun_source_t src;
    info->value = explicit_value((lc_tun_id_t)i, &src);
    info->source = src == LC_SRC_ENV ? "environment" : src == LC_SRC_TUNE ? "tune file" : "default";
    info->valid = info->value ? validate((lc_tun_id_t)i) : LOCUS_OK;
    effective[0] = '\0';
    if (info->valid == LOCUS_OK && resolvers[i])
        resolvers[i](effective, sizeof b->effective[i]);
    info->effective = effective[0] ? effective : NULL;
    return LOCUS_OK;
}

static bool known(const char *name, size_t len)
{
    for (int i = 0; i < LC_TUN_COUNT; i++)
        if (strlen(tunables[i].name) == len && !strncmp(tunables[i].name, name, len))
            return true;
    return false;
}

locus_status_t locus_config_check(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "LOCUS_", 6))
            continue;
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        if (!known(*e, len))
            return lc_err(LOCUS_ERR_INVALID,
                             "unknown tunable %.*s (run `locus config` for the list)", (int)len, *e);
    }
    for (int i = 0; i < LC_TUN_COUNT; i++) {
        if (!explicit_value((lc_tun_id_t)i, NULL))
            continue;
        locus_status_t st = validate((lc_tun_id_t)i);
        if (st)
            return st;
    }
    return LOCUS_OK;
}

/* ---------- the tune file (public side) ---------- */

const char *locus_tune_file_path(char *buf, size_t len) { return lc_tune_path(buf, len); }

const char *locus_tune_file_status(void) { return lc_tune_status(); }

static int tunable_index(const char *name)
{
    for (int i = 0; i < LC_TUN_COUNT; i++)
        if (!strcmp(tunables[i].name, name))
            return i;
    return -1;
}

locus_status_t locus_tune_file_write(const char *path, const locus_tune_entry_t *e, size_t n)
{
    if (!e && n)
        return lc_err(LOCUS_ERR_INVALID, "tune file: entries NULL");
    for (size_t i = 0; i < n; i++) {
        int id = e[i].name ? tunable_index(e[i].name) : -1;
        if (id < 0)
            return lc_err(LOCUS_ERR_INVALID, "tune file: unknown tunable %s", e[i].name ? e[i].name : "(null)");
        tun_value_t v;
        if (!e[i].value || strchr(e[i].value, '\n'))
            return lc_err(LOCUS_ERR_INVALID, "tune file: %s: expected a one-line value", e[i].name);
        locus_status_t st = parse_text((lc_tun_id_t)id, e[i].value, &v);
        if (st)
            return lc_err(st, "tune file: %s=%s", e[i].name, locus_last_error());
    }
    char err[600];
    if (lc_tune_write(path, e, n, err, sizeof err) != 0)
        return lc_err(LOCUS_ERR_SYSTEM, "tune file: %s", err);
    return LOCUS_OK;
}
