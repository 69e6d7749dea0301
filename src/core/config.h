/* Internal accessors for LOCUS_* tunables. Values are read from the
 * environment at each call (callers read them once, at create time). */
#ifndef LOCUS_CORE_CONFIG_H
#define LOCUS_CORE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <locus/config.h>

typedef enum locus_tun_id {
#define LOCUS_TUNABLE(ID, mod, type, def, mn, mx, ch, val, help) LOCUS_TUN_##ID,
#include "core/tunables.def"
#undef LOCUS_TUNABLE
    LOCUS_TUN_COUNT
} locus_tun_id_t;

bool locus_tun_is_set(locus_tun_id_t id);
/* The raw text (environment or default). */
const char *locus_tun_text(locus_tun_id_t id);
locus_status_t locus_tun_size(locus_tun_id_t id, uint64_t *out);
/* SIZEPCT: either *bytes is set and *percent = 0, or *percent in (0,100]. */
locus_status_t locus_tun_sizepct(locus_tun_id_t id, uint64_t *bytes, double *percent);
locus_status_t locus_tun_int(locus_tun_id_t id, int64_t *out);
locus_status_t locus_tun_bool(locus_tun_id_t id, bool *out);
/* ENUM: index of the value in the choices list. */
locus_status_t locus_tun_enum(locus_tun_id_t id, int *out);
locus_status_t locus_tun_string(locus_tun_id_t id, const char **out);
locus_status_t locus_tun_double(locus_tun_id_t id, double *out);

/* Shared parsers (also used for command-line options, so both say the same). */
locus_status_t locus_parse_sizepct(const char *text, uint64_t *bytes, double *percent);
locus_status_t locus_parse_int(const char *text, int64_t min, int64_t max, int64_t *out);
locus_status_t locus_parse_bool(const char *text, bool *out);
/* Index of text in "a|b|c", or LOCUS_ERR_INVALID. */
locus_status_t locus_parse_choice(const char *text, const char *choices, int *out);

#endif
