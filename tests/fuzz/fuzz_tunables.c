/* Fuzz: every tunable's parser with any value from the environment, and the
 * size/int/bool/choice parsers the CLI shares. The first byte picks the
 * tunable; the rest is its value. Any value must give LOCUS_OK or a clear
 * error (a message naming the variable), never a crash. */
#include "fuzz.h"

#include "core/config.h"
#include "core/error.h"
#include <locus/heap.h>

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t idx = data[0] % locus_config_count();
    char *value = fuzz_cstr(data + 1, size - 1);
    locus_tunable_info_t info;
    if (locus_config_describe(idx, &info) != LOCUS_OK)
        abort();
    setenv(info.name, value, 1);
    locus_status_t st = locus_config_check();
    if (st != LOCUS_OK && !strstr(locus_last_error(), info.name))
        abort(); /* the error must name the variable */

    /* the attribute structs filled from the environment: all or nothing */
    locus_heap_attr_t h, h0;
    locus_heap_attr_init(&h);
    h0 = h;
    if (locus_heap_attr_from_env(&h) != LOCUS_OK && memcmp(&h, &h0, sizeof h))
        abort();
    unsetenv(info.name);

    /* the shared parsers on the same text */
    uint64_t u;
    double d;
    int64_t i;
    bool b;
    int c;
    (void)locus_parse_size(value, &u);
    (void)lc_parse_sizepct(value, &u, &d);
    (void)lc_parse_int(value, INT64_MIN, INT64_MAX, &i);
    (void)lc_parse_int(value, -5, 5, &i);
    (void)lc_parse_bool(value, &b);
    (void)lc_parse_choice(value, "a|bb|ccc", &c);
    char buf[32];
    (void)locus_format_size(u, buf, sizeof buf);
    free(value);
    return 0;
}
