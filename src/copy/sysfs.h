/* Internal: the kernel's view of a cpu's L3, for what the topology cannot
 * say. The topology lists only the cpus this process may use, so a rank
 * pinned to one core would see its L3 "shared by 1 cpu"; how many cores share
 * the cache is a property of the hardware, and sysfs has it. */
#ifndef LOCUS_COPY_SYSFS_H
#define LOCUS_COPY_SYSFS_H

#include <stdbool.h>
#include <stdint.h>

/* Root of the sysfs tree read ("/sys"; tests point it at a fake tree). */
extern const char *copy_sysfs_root;

typedef struct {
    uint64_t size_bytes;
    int num_cpus;          /* cpus in shared_cpu_list */
    bool has_cpu[4096];    /* membership, for cpus < 4096 */
} copy_sysfs_l3_t;

/* The level-3 cache of `cpu` from <root>/devices/system/cpu/cpuN/cache/index*;
 * false if there is none or it cannot be read. */
bool copy_sysfs_l3(int cpu, copy_sysfs_l3_t *out);

#endif
