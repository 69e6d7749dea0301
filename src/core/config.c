/* The one place LOCUS_* tunables are parsed and validated. */
#include "core/config.h"
#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

typedef enum { T_SIZE, T_SIZEPCT, T_INT, T_BOOL, T_ENUM, T_STRING, T_DOUBLE } tun_type_t;
typedef locus_status_t (*tun_validator_t)(const char *value);

typedef struct {
    const char *name, *module, *def, *choices, *help;
    tun_type_t type;
    double min, max;
    tun_validator_t validate;
} tunable_t;

/* Validators named in tunables.def (defined in their modules). */
#include "core/validators.h"

#define TYPE_SIZE T_SIZE
#define TYPE_SIZEPCT T_SIZEPCT
#define TYPE_INT T_INT
#define TYPE_BOOL T_BOOL
#define TYPE_ENUM T_ENUM
#define TYPE_STRING T_STRING
#define TYPE_DOUBLE T_DOUBLE

static const tunable_t tunables[LOCUS_TUN_COUNT] = {
#define LOCUS_TUNABLE(ID, mod, type, def, mn, mx, ch, val, help) \
    { "LOCUS_" #ID, mod, def, ch, help, TYPE_##type, (double)(mn), (double)(mx), val },
#include "core/tunables.def"
#undef LOCUS_TUNABLE
};

static const char *type_name(tun_type_t t)
{
    static const char *names[] = {"size", "sizepct", "int", "bool", "enum", "string", "double"};
    return names[t];
}

/* ---------- shared parsers ---------- */

static const char SIZE_ACCEPTED[] =
    "bytes with an optional K/M/G/T suffix (binary units, e.g. 4096, 64K, 8G, 1.5GiB)";

locus_status_t locus_parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text)
        return locus_err(LOCUS_ERR_INVALID, "'': expected %s", SIZE_ACCEPTED);
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (end == text || errno || !(v >= 0) || isinf(v) || text[0] == '-')
        return locus_err(LOCUS_ERR_INVALID, "'%s': expected %s", text, SIZE_ACCEPTED);
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 0x1p10; end++; break;
    case 'M': mult = 0x1p20; end++; break;
    case 'G': mult = 0x1p30; end++; break;
    case 'T': mult = 0x1p40; end++; break;
    case 'P': mult = 0x1p50; end++; break;
    default: break;
    }
    if (mult > 1 && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
        end += 2;
    else if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return locus_err(LOCUS_ERR_INVALID, "'%s': expected %s", text, SIZE_ACCEPTED);
    double bytes = v * mult;
    if (bytes >= 0x1p64)
        return locus_err(LOCUS_ERR_RANGE, "'%s': larger than 2^64 bytes", text);
    if (bytes != floor(bytes))
        return locus_err(LOCUS_ERR_INVALID, "'%s': not a whole number of bytes", text);
    *out = (uint64_t)bytes;
    return LOCUS_OK;
}

locus_status_t locus_parse_sizepct(const char *text, uint64_t *bytes, double *percent)
{
    size_t n = text ? strlen(text) : 0;
    if (n > 1 && text[n - 1] == '%') {
        char *end;
        errno = 0;
        double p = strtod(text, &end);
        if (end != text + n - 1 || errno || !(p > 0) || p > 100)
            return locus_err(LOCUS_ERR_INVALID,
                             "'%s': expected a percentage in (0, 100], e.g. 50%%", text);
        *bytes = 0;
        *percent = p;
        return LOCUS_OK;
    }
    locus_status_t st = locus_parse_size(text, bytes);
    if (st != LOCUS_OK)
        return locus_err(st, "'%s': expected %s, or a percentage of physical memory such as 50%%",
                         text ? text : "", SIZE_ACCEPTED);
    *percent = 0;
    return LOCUS_OK;
}

locus_status_t locus_parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 0) : 0;
    if (!text || !*text || *end || errno)
        return locus_err(LOCUS_ERR_INVALID, "'%s': expected an integer in [%lld, %lld]",
                         text ? text : "", (long long)min, (long long)max);
    if (v < min || v > max)
        return locus_err(LOCUS_ERR_RANGE, "'%s': expected an integer in [%lld, %lld]", text,
                         (long long)min, (long long)max);
    *out = v;
    return LOCUS_OK;
}

locus_status_t locus_parse_bool(const char *text, bool *out)
{
    static const char *yes[] = {"1", "y", "yes", "on", "true"};
    static const char *no[] = {"0", "n", "no", "off", "false"};
    for (size_t i = 0; text && i < 5; i++) {
        if (!strcasecmp(text, yes[i])) { *out = true; return LOCUS_OK; }
        if (!strcasecmp(text, no[i])) { *out = false; return LOCUS_OK; }
    }
    return locus_err(LOCUS_ERR_INVALID, "'%s': expected 1/0, yes/no, on/off or true/false",
                     text ? text : "");
}

locus_status_t locus_parse_choice(const char *text, const char *choices, int *out)
{
    size_t n = text ? strlen(text) : 0;
    int idx = 0;
    for (const char *p = choices; n && *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncasecmp(p, text, n)) {
            *out = idx;
            return LOCUS_OK;
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    return locus_err(LOCUS_ERR_INVALID, "'%s': expected one of %s", text ? text : "", choices);
}

const char *locus_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) { v /= 1024; u++; }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

/* ---------- tunables ---------- */

bool locus_tun_is_set(locus_tun_id_t id)
{
    return getenv(tunables[id].name) != NULL;
}

const char *locus_tun_text(locus_tun_id_t id)
{
    const char *v = getenv(tunables[id].name);
    return v ? v : tunables[id].def;
}

/* Re-label a parser's message with the variable's name. */
static locus_status_t named(locus_tun_id_t id, locus_status_t st)
{
    if (st == LOCUS_OK)
        return st;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", locus_last_error());
    return locus_err(st, "%s=%s", tunables[id].name, msg);
}

static locus_status_t accepted_text(const tunable_t *t, char *buf, size_t len)
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
    return LOCUS_OK;
}

static locus_status_t check_type(locus_tun_id_t id, tun_type_t want)
{
    if (tunables[id].type != want)
        return locus_err(LOCUS_ERR_INVALID, "%s is a %s tunable, read as %s", tunables[id].name,
                         type_name(tunables[id].type), type_name(want));
    return LOCUS_OK;
}

locus_status_t locus_tun_size(locus_tun_id_t id, uint64_t *out)
{
    locus_status_t st = check_type(id, T_SIZE);
    if (st) return st;
    const tunable_t *t = &tunables[id];
    uint64_t v;
    st = locus_parse_size(locus_tun_text(id), &v);
    if (st == LOCUS_OK && t->max > 0 && ((double)v < t->min || (double)v > t->max)) {
        char acc[128];
        accepted_text(t, acc, sizeof acc);
        st = locus_err(LOCUS_ERR_RANGE, "'%s': expected %s", locus_tun_text(id), acc);
    }
    if (st == LOCUS_OK) *out = v;
    return named(id, st);
}

locus_status_t locus_tun_sizepct(locus_tun_id_t id, uint64_t *bytes, double *percent)
{
    locus_status_t st = check_type(id, T_SIZEPCT);
    if (st) return st;
    return named(id, locus_parse_sizepct(locus_tun_text(id), bytes, percent));
}

locus_status_t locus_tun_int(locus_tun_id_t id, int64_t *out)
{
    locus_status_t st = check_type(id, T_INT);
    if (st) return st;
    const tunable_t *t = &tunables[id];
    return named(id, locus_parse_int(locus_tun_text(id), (int64_t)t->min, (int64_t)t->max, out));
}

locus_status_t locus_tun_bool(locus_tun_id_t id, bool *out)
{
    locus_status_t st = check_type(id, T_BOOL);
    if (st) return st;
    return named(id, locus_parse_bool(locus_tun_text(id), out));
}

locus_status_t locus_tun_enum(locus_tun_id_t id, int *out)
{
    locus_status_t st = check_type(id, T_ENUM);
    if (st) return st;
    return named(id, locus_parse_choice(locus_tun_text(id), tunables[id].choices, out));
}

locus_status_t locus_tun_string(locus_tun_id_t id, const char **out)
{
    locus_status_t st = check_type(id, T_STRING);
    if (st) return st;
    const char *v = locus_tun_text(id);
    if (tunables[id].validate) {
        st = tunables[id].validate(v);
        if (st) return named(id, st);
    }
    *out = v;
    return LOCUS_OK;
}

locus_status_t locus_tun_double(locus_tun_id_t id, double *out)
{
    locus_status_t st = check_type(id, T_DOUBLE);
    if (st) return st;
    const tunable_t *t = &tunables[id];
    const char *v = locus_tun_text(id);
    char *end;
    errno = 0;
    double d = *v ? strtod(v, &end) : NAN;
    if (!*v || *end || errno || isnan(d) || d < t->min || d > t->max)
        return named(id, locus_err(LOCUS_ERR_INVALID, "'%s': expected a number in [%g, %g]", v,
                                   t->min, t->max));
    *out = d;
    return LOCUS_OK;
}

/* ---------- listing and checking ---------- */

static locus_status_t validate(locus_tun_id_t id)
{
    uint64_t u;
    double d;
    int64_t i;
    bool b;
    int e;
    const char *s;
    switch (tunables[id].type) {
    case T_SIZE: return locus_tun_size(id, &u);
    case T_SIZEPCT: return locus_tun_sizepct(id, &u, &d);
    case T_INT: return locus_tun_int(id, &i);
    case T_BOOL: return locus_tun_bool(id, &b);
    case T_ENUM: return locus_tun_enum(id, &e);
    case T_STRING: return locus_tun_string(id, &s);
    case T_DOUBLE: return locus_tun_double(id, &d);
    }
    return LOCUS_ERR_INVALID;
}

size_t locus_config_count(void) { return LOCUS_TUN_COUNT; }

locus_status_t locus_config_describe(size_t i, locus_tunable_info_t *info)
{
    if (i >= LOCUS_TUN_COUNT || !info)
        return locus_err(LOCUS_ERR_INVALID, "tunable index %zu out of range [0, %d)", i,
                         (int)LOCUS_TUN_COUNT);
    static _Thread_local char accepted[LOCUS_TUN_COUNT][160];
    const tunable_t *t = &tunables[i];
    accepted_text(t, accepted[i], sizeof accepted[i]);
    info->name = t->name;
    info->module = t->module;
    info->type = type_name(t->type);
    info->def = t->def;
    info->accepted = accepted[i];
    info->help = t->help;
    info->value = getenv(t->name);
    info->valid = info->value ? validate((locus_tun_id_t)i) : LOCUS_OK;
    return LOCUS_OK;
}

static bool known(const char *name, size_t len)
{
    for (int i = 0; i < LOCUS_TUN_COUNT; i++)
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
            return locus_err(LOCUS_ERR_INVALID,
                             "unknown tunable %.*s (run `locus config` for the list)", (int)len, *e);
    }
    for (int i = 0; i < LOCUS_TUN_COUNT; i++) {
        if (!getenv(tunables[i].name))
            continue;
        locus_status_t st = validate((locus_tun_id_t)i);
        if (st)
            return st;
    }
    return LOCUS_OK;
}
