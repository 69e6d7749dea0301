/* Internal: the tune file — values of LOCUS_* tunables measured on this
 * machine by `locus tune` (one "LOCUS_X=value" per line, '#' comments, and a
 * "host=" line naming the CPU they were measured on). The library reads it
 * once; an entry counts only when the host line matches this machine.
 * Precedence of a tunable's value: the environment, then the tune file, then
 * what the module derives (self-test, topology), then the table's default.
 * LOCUS_TUNE_FILE names the file ("none": no file; default
 * $XDG_CACHE_HOME/locus/tune.conf or ~/.cache/locus/tune.conf). */
#ifndef LOCUS_CORE_TUNE_H
#define LOCUS_CORE_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <locus/config.h>

/* $XDG_CACHE_HOME/locus/<name>, else ~/.cache/locus/<name>, else "" (no
 * home): where the library keeps what it measured about this machine. */
const char *lc_cache_file(const char *name, char *buf, size_t len);
/* mkdir -p of the directory holding `path` (best effort). */
void lc_make_parent(const char *path);
/* Path of the tune file into buf ("" when disabled or no home); buf. */
const char *lc_tune_path(char *buf, size_t len);
/* This machine's identity as the tune file's host line records it: CPU
 * vendor, family, model, stepping, model name, online cpus, L3 bytes. */
const char *lc_tune_host(char *buf, size_t len);
/* The tune file's value for variable `name` ("LOCUS_X"), or NULL. */
const char *lc_tune_value(const char *name);
/* Why the tune file is not used, if it exists but was ignored ("" if used or
 * absent). */
const char *lc_tune_status(void);
/* Write the tune file (path NULL = lc_tune_path): the host line, then the
 * n "LOCUS_X=value" lines with an optional comment each. Atomic (temporary
 * file + rename); creates the directory. */
typedef locus_tune_entry_t lc_tune_entry_t;
int lc_tune_write(const char *path, const lc_tune_entry_t *e, size_t n, char *err, size_t errlen);
/* Forget what was read (tests; the next lookup reads the file again). */
void lc_tune_reset(void);

#endif
