/* locus topology: NUMA nodes (memory-only ones included), CPUs, shared L3
 * domains, node distances and the page sizes the kernel offers. Built on
 * hwloc; cache sizes a VM reports as zero or absurd are replaced from sysfs
 * (and the substitution is recorded in the notes). */
#ifndef LOCUS_TOPO_H
#define LOCUS_TOPO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_topo locus_topo_t;

/* Where a number came from. */
typedef enum locus_topo_source {
    LOCUS_TOPO_SRC_HWLOC   = 0,
    LOCUS_TOPO_SRC_SYSFS   = 1, /* hwloc reported 0 or nonsense */
    LOCUS_TOPO_SRC_DEFAULT = 2, /* neither knew; a safe default was used */
} locus_topo_source_t;

typedef struct locus_topo_node {
    int      os_index;     /* kernel node number (what mbind/move_pages use) */
    uint64_t memory_bytes; /* local memory */
    int      num_cpus;     /* 0 for a memory-only node */
    const int *cpus;       /* OS cpu numbers, ascending; owned by the topo */
} locus_topo_node_t;

typedef struct locus_topo_l3 {
    uint64_t size_bytes;
    locus_topo_source_t size_source;
    int      num_cpus;
    const int *cpus;       /* OS cpu numbers sharing this L3 */
} locus_topo_l3_t;

typedef enum locus_thp_mode {
    LOCUS_THP_UNAVAILABLE = 0,
    LOCUS_THP_NEVER       = 1,
    LOCUS_THP_MADVISE     = 2,
    LOCUS_THP_ALWAYS      = 3,
} locus_thp_mode_t;

typedef struct locus_topo_hugepool {
    uint64_t page_size;    /* 2 MiB, 1 GiB, ... */
    uint64_t total_pages;  /* nr_hugepages */
    uint64_t free_pages;   /* free_hugepages */
} locus_topo_hugepool_t;

/* This machine, from hwloc (plus sysfs for pages and odd cache sizes). */
LOCUS_API locus_status_t locus_topo_load(locus_topo_t **out);
/* A topology from an hwloc XML file (tests: synthetic multi-node, L3 = 0). */
LOCUS_API locus_status_t locus_topo_load_xml(const char *path, locus_topo_t **out);
/* A topology from an hwloc synthetic description, e.g.
 * "pack:2 [numa] l3:2 core:2 pu:1". Page information is this machine's. */
LOCUS_API locus_status_t locus_topo_load_synthetic(const char *desc, locus_topo_t **out);
LOCUS_API void locus_topo_destroy(locus_topo_t *topo);

/* NUMA nodes, in ascending os_index order; index i is NOT the os index. */
LOCUS_API int  locus_topo_num_nodes(const locus_topo_t *topo);
LOCUS_API locus_status_t locus_topo_node(const locus_topo_t *topo, int i, locus_topo_node_t *out);
/* True if the node has no cpus at all (memory-only hardware, e.g. CXL/HBM);
 * a node whose cpus are merely outside this process's affinity has
 * num_cpus 0 but is not memory-only. False for a bad index. */
LOCUS_API bool locus_topo_node_is_memory_only(const locus_topo_t *topo, int i);
/* Index (0..num_nodes-1) of the node with this os index, or -1. */
LOCUS_API int  locus_topo_node_index(const locus_topo_t *topo, int os_index);
/* ACPI SLIT distance between node indices (10 = local); -1 if unknown. */
LOCUS_API int  locus_topo_distance(const locus_topo_t *topo, int node_a, int node_b);

/* CPUs: online OS cpu numbers usable by this process. */
LOCUS_API int  locus_topo_num_cpus(const locus_topo_t *topo);
LOCUS_API int  locus_topo_cpu(const locus_topo_t *topo, int i);          /* i-th cpu's OS number */
LOCUS_API int  locus_topo_cpu_node(const locus_topo_t *topo, int os_cpu); /* node index or -1 */
LOCUS_API int  locus_topo_cpu_l3(const locus_topo_t *topo, int os_cpu);   /* L3 index or -1 */

/* L3 (last-level shared cache) domains. */
LOCUS_API int  locus_topo_num_l3(const locus_topo_t *topo);
LOCUS_API locus_status_t locus_topo_l3(const locus_topo_t *topo, int i, locus_topo_l3_t *out);
LOCUS_API bool locus_topo_share_l3(const locus_topo_t *topo, int os_cpu_a, int os_cpu_b);

/* Pages. */
LOCUS_API uint64_t locus_topo_base_page(const locus_topo_t *topo);
LOCUS_API locus_thp_mode_t locus_topo_thp_mode(const locus_topo_t *topo);
LOCUS_API uint64_t locus_topo_thp_size(const locus_topo_t *topo);        /* 0 if no THP */
LOCUS_API int  locus_topo_num_hugepools(const locus_topo_t *topo);
LOCUS_API locus_status_t locus_topo_hugepool(const locus_topo_t *topo, int i, locus_topo_hugepool_t *out);

/* Fallbacks taken while loading ("hwloc reports L3 size 0; used sysfs: 32 MiB"),
 * one per line; "" if none. */
LOCUS_API const char *locus_topo_notes(const locus_topo_t *topo);

/* Human table and JSON (the `locus topo` output). */
LOCUS_API locus_status_t locus_topo_print(const locus_topo_t *topo, FILE *out);
LOCUS_API locus_status_t locus_topo_print_json(const locus_topo_t *topo, FILE *out);

LOCUS_API const char *locus_thp_mode_name(locus_thp_mode_t mode);

#ifdef __cplusplus
}
#endif
#endif
