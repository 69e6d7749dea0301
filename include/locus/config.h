/* locus tunables: LOCUS_* environment variables, parsed and validated in one
 * place (src/core/config.c, declared in src/core/tunables.def). */
#ifndef LOCUS_CONFIG_H
#define LOCUS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_tunable_info {
    const char *name;     /* environment variable, e.g. "LOCUS_HEAP_SIZE" */
    const char *module;   /* "heap", "copy", ... */
    const char *type;     /* "size", "int", "bool", "enum", "string", "double", "sizepct" */
    const char *def;      /* default, as text */
    const char *accepted; /* what is accepted, as text */
    const char *help;     /* one line */
    const char *value;    /* current value from the environment or the tune file, or NULL */
    const char *source;   /* "environment", "tune file" (`locus tune`) or "default" */
    locus_status_t valid; /* LOCUS_OK, or the parse error of value */
    const char *effective; /* what the value resolves to on this machine and why, e.g.
                              "16.0 MiB (self-test)"; NULL if the module says nothing */
} locus_tunable_info_t;

/* Number of tunables the library knows. */
LOCUS_API size_t locus_config_count(void);

/* Describe tunable i (0 <= i < locus_config_count()); parses its current value.
 * The strings stay valid in the calling thread until its next call for the same i. */
LOCUS_API locus_status_t locus_config_describe(size_t i, locus_tunable_info_t *info);

/* Validate every LOCUS_* variable in the environment: unknown names and bad
 * values give LOCUS_ERR_INVALID with locus_last_error() naming the first. */
LOCUS_API locus_status_t locus_config_check(void);

/* Parse "4096", "64K", "8G", "1.5GiB", "2m" (binary units). */
LOCUS_API locus_status_t locus_parse_size(const char *text, uint64_t *out);

/* Format bytes as "8.0 GiB" into buf; returns buf. */
LOCUS_API const char *locus_format_size(uint64_t bytes, char *buf, size_t len);

/* The tune file: LOCUS_* values measured on this machine by `locus tune`,
 * read below the environment and above the built-in defaults, and only on
 * the machine (CPU, cpus, L3) that wrote it. LOCUS_TUNE_FILE overrides the
 * path ("none": no file). */
typedef struct locus_tune_entry {
    const char *name;    /* "LOCUS_COPY_NT_MIN" */
    const char *value;   /* validated like the environment's */
    const char *comment; /* one line, or NULL */
} locus_tune_entry_t;
/* Path into buf ("" if none); returns buf. */
LOCUS_API const char *locus_tune_file_path(char *buf, size_t len);
/* Why an existing tune file is ignored (another machine's, unreadable), or "". */
LOCUS_API const char *locus_tune_file_status(void);
/* Write the tune file (path NULL: the default) atomically; every value is
 * validated first (LOCUS_ERR_INVALID names the bad one, nothing written). */
LOCUS_API locus_status_t locus_tune_file_write(const char *path, const locus_tune_entry_t *entries,
                                               size_t n);

#ifdef __cplusplus
}
#endif
#endif
