/* Internal: LOCUS_* tunables. One table (tunables.def) declares each one with
 * its type, default, bounds and help; values are read from the environment at
 * each call (callers read them once, at create time). Modules bind tunables
 * to the fields of their attribute structs (lc_tun_bind_t) so that defaults
 * and environment values are filled from the table, never restated. */
#ifndef LOCUS_CORE_CONFIG_H
#define LOCUS_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/config.h>

typedef enum lc_tun_id {
#define LOCUS_TUNABLE(ID, mod, type, def, mn, mx, ch, help) LC_TUN_##ID,
#include "core/tunables.def"
#undef LOCUS_TUNABLE
    LC_TUN_COUNT
} lc_tun_id_t;

/* Where a tunable's value comes from. */
typedef enum lc_tun_source { LC_SRC_DEFAULT, LC_SRC_TUNE, LC_SRC_ENV } lc_tun_source_t;
/* Set explicitly: in the environment or the tune file (core/tune.h). */
bool lc_tun_is_set(lc_tun_id_t id);
lc_tun_source_t lc_tun_source(lc_tun_id_t id);
/* The raw text (environment, tune file or default). */
const char *lc_tun_text(lc_tun_id_t id);
/* The table's default, as text. */
const char *lc_tun_default(lc_tun_id_t id);
locus_status_t lc_tun_size(lc_tun_id_t id, uint64_t *out);
/* SIZEPCT: either *bytes is set and *percent = 0, or *percent in (0,100]. */
locus_status_t lc_tun_sizepct(lc_tun_id_t id, uint64_t *bytes, double *percent);
locus_status_t lc_tun_int(lc_tun_id_t id, int64_t *out);
locus_status_t lc_tun_bool(lc_tun_id_t id, bool *out);
/* ENUM: index of the value in the choices list. */
locus_status_t lc_tun_enum(lc_tun_id_t id, int *out);
locus_status_t lc_tun_string(lc_tun_id_t id, const char **out);
locus_status_t lc_tun_double(lc_tun_id_t id, double *out);
/* The default of a SIZE or INT tunable as a number (for "0 = default"
 * fields of attribute structs filled by hand). */
uint64_t lc_tun_default_u64(lc_tun_id_t id);

/* A module's check of one of its STRING tunables (a node list, a job name):
 * registered by the module when it is loaded, so core never calls up. */
typedef locus_status_t (*lc_tun_validator_t)(const char *value);
void lc_tun_set_validator(lc_tun_id_t id, lc_tun_validator_t fn);
/* A module's account of what an "auto" (or derived) value resolves to here
 * and where that came from ("16 MiB (self-test)"), for `locus config`. */
typedef void (*lc_tun_resolver_t)(char *buf, size_t len);
void lc_tun_set_resolver(lc_tun_id_t id, lc_tun_resolver_t fn);
#define LC_TUN_RESOLVER(ID, FN)                                                     \
    __attribute__((constructor)) static void lc_resolver_##ID(void)                  \
    {                                                                                \
        lc_tun_set_resolver(LC_TUN_##ID, FN);                                        \
    }
/* In the module's source file: registers FN for LOCUS_<ID> when the library
 * (or the object, in a static link) is loaded. */
#define LC_TUN_VALIDATOR(ID, FN)                                                    \
    __attribute__((constructor)) static void lc_register_##ID(void)                  \
    {                                                                                \
        lc_tun_set_validator(LC_TUN_##ID, FN);                                       \
    }

/* ---- attribute structs filled from the table ----
 * One entry per tunable a struct carries: where the field is and how wide.
 * SIZE -> unsigned integer field, INT -> signed or unsigned integer field,
 * ENUM -> int/enum field (the choice's index), BOOL -> bool, DOUBLE -> double,
 * SIZEPCT -> uint64_t bytes + double percent (offset2), STRING -> `parse`
 * (or a const char * field, "" stored as NULL, when parse is NULL). */
typedef struct lc_tun_bind {
    lc_tun_id_t id;
    unsigned short offset, width, offset2;
    locus_status_t (*parse)(const char *value, void *obj);
} lc_tun_bind_t;

#define LC_BIND(ID, T, F) {LC_TUN_##ID, offsetof(T, F), sizeof(((T *)0)->F), 0, NULL}
#define LC_BIND_PCT(ID, T, F, P) {LC_TUN_##ID, offsetof(T, F), sizeof(((T *)0)->F), offsetof(T, P), NULL}
#define LC_BIND_FN(ID, FN) {LC_TUN_##ID, 0, 0, 0, FN}

typedef enum lc_tun_from {
    LC_TUN_DEFAULTS, /* every bound field from the table's default */
    LC_TUN_ENV,      /* only the fields whose variable is set */
} lc_tun_from_t;

/* Fill obj (of obj_size bytes) from the table. All or nothing: on a bad
 * value obj is left as it was and the error names the variable. */
locus_status_t lc_tun_load(const lc_tun_bind_t *binds, size_t n, void *obj, size_t obj_size,
                           lc_tun_from_t from);

/* Shared parsers (also used for command-line options, so both say the same). */
locus_status_t lc_parse_sizepct(const char *text, uint64_t *bytes, double *percent);
locus_status_t lc_parse_int(const char *text, int64_t min, int64_t max, int64_t *out);
locus_status_t lc_parse_bool(const char *text, bool *out);
/* Index of text in "a|b|c", or LOCUS_ERR_INVALID. */
locus_status_t lc_parse_choice(const char *text, const char *choices, int *out);

#endif
