/* The shared parsers of sizes, integers, booleans and choices: tunables and
 * command-line options go through the same ones, so both say the same. */
#include "core/config.h"
#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char SIZE_ACCEPTED[] =
    "bytes with an optional K/M/G/T suffix (binary units, e.g. 4096, 64K, 8G, 1.5GiB)";

locus_status_t locus_parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text)
        return lc_err(LOCUS_ERR_INVALID, "'': expected %s", SIZE_ACCEPTED);
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (end == text || errno || !(v >= 0) || isinf(v) || text[0] == '-')
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected %s", text, SIZE_ACCEPTED);
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
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected %s", text, SIZE_ACCEPTED);
    double bytes = v * mult;
    if (bytes >= 0x1p64)
        return lc_err(LOCUS_ERR_RANGE, "'%s': larger than 2^64 bytes", text);
    if (bytes != floor(bytes))
        return lc_err(LOCUS_ERR_INVALID, "'%s': not a whole number of bytes", text);
    *out = (uint64_t)bytes;
    return LOCUS_OK;
}

locus_status_t lc_parse_sizepct(const char *text, uint64_t *bytes, double *percent)
{
    size_t n = text ? strlen(text) : 0;
    if (n > 1 && text[n - 1] == '%') {
        char *end;
        errno = 0;
        double p = strtod(text, &end);
        if (end != text + n - 1 || errno || !(p > 0) || p > 100)
            return lc_err(LOCUS_ERR_INVALID,
                             "'%s': expected a percentage in (0, 100], e.g. 50%%", text);
        *bytes = 0;
        *percent = p;
        return LOCUS_OK;
    }
    locus_status_t st = locus_parse_size(text, bytes);
    if (st != LOCUS_OK)
        return lc_err(st, "'%s': expected %s, or a percentage of physical memory such as 50%%",
                         text ? text : "", SIZE_ACCEPTED);
    *percent = 0;
    return LOCUS_OK;
}

locus_status_t lc_parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 0) : 0;
    if (!text || !*text || *end || errno)
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected an integer in [%lld, %lld]",
                         text ? text : "", (long long)min, (long long)max);
    if (v < min || v > max)
        return lc_err(LOCUS_ERR_RANGE, "'%s': expected an integer in [%lld, %lld]", text,
                         (long long)min, (long long)max);
    *out = v;
    return LOCUS_OK;
}

locus_status_t lc_parse_bool(const char *text, bool *out)
{
    static const char *yes[] = {"1", "y", "yes", "on", "true"};
    static const char *no[] = {"0", "n", "no", "off", "false"};
    for (size_t i = 0; text && i < 5; i++) {
        if (!strcasecmp(text, yes[i])) { *out = true; return LOCUS_OK; }
        if (!strcasecmp(text, no[i])) { *out = false; return LOCUS_OK; }
    }
    return lc_err(LOCUS_ERR_INVALID, "'%s': expected 1/0, yes/no, on/off or true/false",
                     text ? text : "");
}

locus_status_t lc_parse_choice(const char *text, const char *choices, int *out)
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
    return lc_err(LOCUS_ERR_INVALID, "'%s': expected one of %s", text ? text : "", choices);
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

