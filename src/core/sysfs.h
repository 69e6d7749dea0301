/* Internal: reading what the kernel says in sysfs and procfs — small files,
 * cpu lists, kernel-style sizes and a cpu's caches. Every module that asks
 * the kernel about the machine goes through these. `root` is normally "/sys";
 * tests point it at a fake tree. */
#ifndef LOCUS_CORE_SYSFS_H
#define LOCUS_CORE_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LC_MAX_CPUS 4096

/* First line of a small file into buf (newline stripped); false if unreadable. */
bool lc_read_line(const char *path, char *buf, size_t len);
/* One field of /proc/cpuinfo's first processor ("model name", "vendor_id")
 * into out ("" if absent). */
void lc_cpuinfo_field(const char *key, char *out, size_t len);
/* A decimal unsigned number from the first line of a file. */
bool lc_read_u64(const char *path, uint64_t *out);
/* "32768K" / "2048kB" / "1M" / "4096" -> bytes; 0 on failure. */
uint64_t lc_parse_kernel_size(const char *text);
/* A kernel cpu list "0-3,8,10-11" into ascending ints; count, or -1 when
 * malformed or longer than max. */
int lc_parse_cpulist(const char *text, int *out, int max);

/* A cpu set as the kernel lists it (cpus < LC_MAX_CPUS). */
typedef struct lc_cpuset {
    uint64_t bits[LC_MAX_CPUS / 64];
    int count;
} lc_cpuset_t;

static inline bool lc_cpuset_has(const lc_cpuset_t *s, int cpu)
{
    return cpu >= 0 && cpu < LC_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/* One cache of one cpu, from <root>/devices/system/cpu/cpuN/cache/indexI. */
typedef struct lc_cache {
    int level;
    uint64_t size_bytes;  /* 0 if the kernel did not say */
    int id;               /* the "id" file, -1 if absent */
    lc_cpuset_t shared;   /* shared_cpu_list; count 0 if unreadable */
} lc_cache_t;

/* The data or unified cache of `level` that cpu `cpu` sees; false if none. */
bool lc_sysfs_cache(const char *root, int cpu, int level, lc_cache_t *out);

/* Id of cpu's L3 (the "id" file of its level-3 cache) or -1: two cpus with the
 * same id share the L3. */
int lc_sysfs_l3_id(int cpu);

#endif
