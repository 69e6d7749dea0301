/* Internal: the topo object and the helpers shared by its source files. */
#ifndef LOCUS_TOPO_INTERNAL_H
#define LOCUS_TOPO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/topo.h>
#include "core/notes.h"

typedef enum topo_origin {
    TOPO_ORIGIN_LOCAL = 0,
    TOPO_ORIGIN_XML = 1,
    TOPO_ORIGIN_SYNTHETIC = 2,
} topo_origin_t;

typedef struct topo_node {
    int os_index;
    uint64_t memory_bytes;
    int num_cpus;       /* usable by this process */
    int *cpus;
    int hw_cpus;        /* all online cpus of the node; 0 = memory-only */
} topo_node_t;

typedef struct topo_l3 {
    uint64_t size_bytes;
    locus_topo_source_t size_source;
    int level;          /* cache level the domain came from (3, or 2 if no L3); 0 = package/machine */
    int num_cpus;
    int *cpus;
} topo_l3_t;

struct locus_topo {
    topo_origin_t origin;
    char *origin_arg;   /* XML path or synthetic description; NULL for local */

    int num_nodes;
    topo_node_t *nodes;
    int *distance;      /* num_nodes * num_nodes, -1 unknown */
    locus_topo_source_t distance_source;

    int num_cpus;
    int *cpus;          /* ascending OS numbers */
    int *cpu_node;      /* per cpus[] position: node index or -1 */
    int *cpu_l3;        /* per cpus[] position: l3 index or -1 */

    int num_l3;
    topo_l3_t *l3;

    uint64_t base_page;
    locus_thp_mode_t thp_mode;
    uint64_t thp_size;
    int num_hugepools;
    locus_topo_hugepool_t *hugepools;

    lc_notes_t notes;
};


/* sysfs readers (topo_sysfs.c); `root` is normally "/sys" (tests may pass another). */
void topo_read_pages(struct locus_topo *t, const char *root);
/* Size in bytes of the cache of `level` (data or unified) cpu `os_cpu` sees, or 0. */
uint64_t topo_sysfs_cache_size(const char *root, int os_cpu, int level);
/* Row `os_node` of the SLIT from sysfs into `row` (n entries, by the os indices
 * in `os_of`); false if unreadable. */
bool topo_sysfs_distance_row(const char *root, int os_node, const int *os_of, int n, int *row);

/* Format helpers (topo_print.c). */
void topo_format_cpulist(const int *cpus, int n, char *buf, size_t len);
void topo_format_size(uint64_t bytes, char *buf, size_t len);
const char *topo_source_name(locus_topo_source_t s);

#endif
