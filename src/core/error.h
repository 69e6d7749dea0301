/* Internal: set the thread's detailed error and return the code, so call
 * sites read `return lc_err(LOCUS_ERR_INVALID, "size 0: ...");`. */
#ifndef LOCUS_CORE_ERROR_H
#define LOCUS_CORE_ERROR_H

#include <locus/status.h>

#if defined(__GNUC__)
#define LOCUS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LOCUS_PRINTF(a, b)
#endif

locus_status_t lc_err(locus_status_t code, const char *fmt, ...) LOCUS_PRINTF(2, 3);
/* Same, appending ": strerror(errno_value)" and mapping EPERM/EACCES to
 * LOCUS_ERR_PERMISSION, ENOMEM to LOCUS_ERR_NO_MEMORY, else `code`. */
locus_status_t lc_err_errno(locus_status_t code, int errno_value, const char *fmt, ...)
    LOCUS_PRINTF(3, 4);

#endif
