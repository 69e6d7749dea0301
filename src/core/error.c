#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

const char *locus_strerror(locus_status_t status)
{
    switch (status) {
    case LOCUS_OK:              return "success";
    case LOCUS_ERR_INVALID:     return "invalid argument";
    case LOCUS_ERR_NO_MEMORY:   return "out of memory";
    case LOCUS_ERR_UNSUPPORTED: return "not supported on this machine";
    case LOCUS_ERR_RANGE:       return "value out of range";
    case LOCUS_ERR_SYSTEM:      return "system call failed";
    case LOCUS_ERR_NO_DEVICE:   return "no such device";
    case LOCUS_ERR_PERMISSION:  return "permission denied";
    case LOCUS_ERR_NO_SPACE:    return "no space left";
    case LOCUS_ERR_PEER_FAILED: return "peer process failed";
    case LOCUS_ERR_TIMEOUT:     return "timed out";
    case LOCUS_ERR_BUSY:        return "resource busy";
    case LOCUS_ERR_NOT_FOUND:   return "not found";
    case LOCUS_ERR_AGAIN:       return "try again";
    case LOCUS_ERR_TRUNCATED:   return "message truncated";
    case LOCUS_ERR_CORRUPT:     return "shared state corrupt";
    }
    return "unknown status";
}

const char *locus_last_error(void) { return last_error; }

void locus_clear_error(void) { last_error[0] = '\0'; }

locus_status_t lc_err(locus_status_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

locus_status_t lc_err_errno(locus_status_t code, int errno_value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof last_error)
        snprintf(last_error + n, sizeof last_error - (size_t)n, ": %s", strerror(errno_value));
    if (errno_value == EPERM || errno_value == EACCES)
        return LOCUS_ERR_PERMISSION;
    if (errno_value == ENOMEM)
        return LOCUS_ERR_NO_MEMORY;
    return code;
}
