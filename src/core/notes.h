/* Internal: notes — the '\n'-terminated lines an object keeps about the
 * fallbacks and choices it made ("THP not obtained: 4 KiB pages"), shown by
 * locus_<module>_notes() and the CLI. One type for every module. */
#ifndef LOCUS_CORE_NOTES_H
#define LOCUS_CORE_NOTES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct lc_notes {
    char *text;  /* NULL until the first note */
    size_t len;
} lc_notes_t;

/* Append one line (printf-style). A note is best effort: on allocation
 * failure it is dropped and false returned. */
bool lc_note(lc_notes_t *n, const char *fmt, ...) LOCUS_PRINTF(2, 3);
/* Same, but not if the same line is already there (notes said once). */
bool lc_note_once(lc_notes_t *n, const char *fmt, ...) LOCUS_PRINTF(2, 3);
/* The lines, never NULL. */
static inline const char *lc_notes_text(const lc_notes_t *n)
{
    return n && n->text ? n->text : "";
}
/* Drop every line after the first `len` bytes (a mark taken from n->len). */
void lc_notes_truncate(lc_notes_t *n, size_t len);
void lc_notes_free(lc_notes_t *n);

#endif
