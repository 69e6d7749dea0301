/* Validators of the STRING tunables LOCUS_COPY_* (registered with
 * core by copy.c). */
#include "core/config.h"
#include "core/error.h"

#include <string.h>

locus_status_t copy_validate_threshold(const char *value)
{
    uint64_t v;
    if (value && (!strcmp(value, "auto") || !strcmp(value, "never")))
        return LOCUS_OK;
    if (locus_parse_size(value, &v) != LOCUS_OK)
        return lc_err(LOCUS_ERR_INVALID,
                         "'%s': expected 'auto', 'never' or a size in bytes with an optional "
                         "K/M/G/T suffix (e.g. 8M)", value ? value : "");
    return LOCUS_OK;
}

locus_status_t copy_validate_calibration(const char *value)
{
    if (!value || !*value || strchr(value, '\n'))
        return lc_err(LOCUS_ERR_INVALID,
                         "'%s': expected 'auto' (the cache path), 'none' or a file path",
                         value ? value : "");
    return LOCUS_OK;
}
