/* Shared by the fuzz harnesses: the libFuzzer entry point and a helper that
 * turns the input into a NUL-terminated string (parsers take C strings). */
#ifndef LOCUS_FUZZ_H
#define LOCUS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd copy of data with a terminating NUL (the caller frees it);
 * interior NULs simply end the string early, as they would from a file. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
