/* SHMEM_SYMMETRIC_SIZE's syntax (content/environment_variables.tex): a
 * number, a fraction allowed, with one optional binary multiplier k, m, g
 * or t (either case); characters after the multiplier are ignored
 * ("3.1M" = 3250586 bytes, rounded up). Kept apart so that unit tests can
 * link it alone. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

bool lshm_parse_symmetric_size(const char *text, uint64_t *out);

bool lshm_parse_symmetric_size(const char *text, uint64_t *out)
{
    if (!text)
        return false;
    while (isspace((unsigned char)*text))
        text++;
    if (!isdigit((unsigned char)*text) && *text != '.')
        return false;
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v > 0) || !isfinite(v))
        return false;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; break;
    case 'm': case 'M': mul = 1024.0 * 1024; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    case '\0': break;
    default:
        if (!isspace((unsigned char)*end))
            return false;
    }
    double bytes = ceil(v * mul);
    if (bytes < 1 || bytes > 9.0e18)
        return false;
    *out = (uint64_t)bytes;
    return true;
}

