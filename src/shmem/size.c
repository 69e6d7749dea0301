/* SHMEM_SYMMETRIC_SIZE's syntax (content/environment_variables.tex): a
 * non-negative decimal number, a fraction allowed, with one optional binary
 * multiplier k, m, g or t (either case); "3.1M" = 3250586 bytes, rounded
 * up. "Any unrecognized suffix is an error" and only one multiplier counts
 * ("20kk" is refused, not read as 20k); a B or iB after the multiplier
 * ("512MB", "1.5GiB", as users write it) is accepted. 0 asks for no heap
 * beyond what the library needs. Kept apart so that unit tests can link it
 * alone. */
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
    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        return false; /* decimal only (strtod would take hex) */
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v >= 0) || !isfinite(v))
        return false;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; break;
    case 'm': case 'M': mul = 1024.0 * 1024; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    }
    if (mul > 1) {
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
        else if (end[-1] == 'i')
            return false; /* "1Gi" */
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return false;
    double bytes = ceil(v * mul);
    if (bytes > 9.0e18)
        return false;
    *out = (uint64_t)bytes;
    return true;
}

