/* topo: load the machine description from hwloc (this machine, an XML file or
 * a synthetic description) into plain arrays the other modules query. */
#include "topo/topo_internal.h"

#include "core/error.h"

#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOPO_SYSFS "/sys"
/* Outside this window a reported L3 size is treated as a VM artefact. */
#define L3_MIN_SANE (256ull << 10)
#define L3_MAX_SANE (4ull << 30)
#define L3_DEFAULT (8ull << 20)
#define XML_EXPECTED "not a usable hwloc topology (expected the output of `lstopo --of xml`)"

/* ---------------------------------------------------------------- helpers */

static int *bitmap_to_array(hwloc_const_bitmap_t set, int *count)
{
    int n = hwloc_bitmap_weight(set);
    *count = 0;
    if (n <= 0)
        return calloc(1, sizeof(int)); /* non-NULL so callers can tell from ENOMEM */
    int *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return NULL;
    unsigned id;
    int k = 0;
    hwloc_bitmap_foreach_begin(id, set) { a[k++] = (int)id; }
    hwloc_bitmap_foreach_end();
    *count = k;
    return a;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cpu_pos(const struct locus_topo *t, int os_cpu)
{
    const int *p = bsearch(&os_cpu, t->cpus, (size_t)t->num_cpus, sizeof(int), cmp_int);
    return p ? (int)(p - t->cpus) : -1;
}

/* CPUs this process may run on: allowed (cgroup) ∩ process binding, for this
 * machine; every PU of a foreign (XML/synthetic) topology. */
static hwloc_bitmap_t usable_cpuset(hwloc_topology_t h, bool local)
{
    hwloc_bitmap_t set = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(h));
    if (!set || !local)
        return set;
    hwloc_bitmap_t bind = hwloc_bitmap_alloc();
    if (bind && hwloc_get_cpubind(h, bind, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bind))
        hwloc_bitmap_and(set, set, bind);
    hwloc_bitmap_free(bind);
    return set;
}

/* ------------------------------------------------------------------ nodes */

static int cmp_numa_os(const void *a, const void *b)
{
    hwloc_obj_t x = *(hwloc_obj_t const *)a, y = *(hwloc_obj_t const *)b;
    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* The node a PU belongs to: the lowest-os_index NUMA node attached to its
 * nearest ancestor that has memory. CPU-less nodes attached elsewhere (or
 * beside a node with a lower number) stay memory-only, as the kernel sees them. */
static hwloc_obj_t pu_home_node(hwloc_obj_t pu)
{
    for (hwloc_obj_t a = pu->parent; a; a = a->parent) {
        hwloc_obj_t best = NULL;
        for (hwloc_obj_t m = a->memory_first_child; m; m = m->next_sibling) {
            hwloc_obj_t n = m;
            while (n && n->type != HWLOC_OBJ_NUMANODE) /* memory-side caches */
                n = n->memory_first_child;
            if (n && (!best || n->os_index < best->os_index))
                best = n;
        }
        if (best)
            return best;
    }
    return NULL;
}

/* Give each node its cpus (usable ones in the list, all of them counted). */
static locus_status_t assign_node_cpus(struct locus_topo *t, hwloc_topology_t h, hwloc_obj_t *objs,
                                       hwloc_const_bitmap_t usable)
{
    int n = t->num_nodes;
    hwloc_bitmap_t *sets = calloc((size_t)n, sizeof *sets);
    if (!sets)
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: node cpusets");
    locus_status_t st = LOCUS_OK;
    for (int i = 0; i < n && st == LOCUS_OK; i++)
        if (!(sets[i] = hwloc_bitmap_alloc()))
            st = lc_err(LOCUS_ERR_NO_MEMORY, "topo: node cpusets");
    for (hwloc_obj_t pu = NULL; st == LOCUS_OK && (pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, pu));) {
        hwloc_obj_t home = pu_home_node(pu);
        for (int i = 0; home && i < n; i++)
            if (objs[i] == home) {
                t->nodes[i].hw_cpus++;
                if (hwloc_bitmap_isset(usable, pu->os_index))
                    hwloc_bitmap_set(sets[i], pu->os_index);
            }
    }
    for (int i = 0; i < n && st == LOCUS_OK; i++)
        if (!(t->nodes[i].cpus = bitmap_to_array(sets[i], &t->nodes[i].num_cpus)))
            st = lc_err(LOCUS_ERR_NO_MEMORY, "topo: node cpu list");
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(sets[i]);
    free(sets);
    return st;
}

static locus_status_t load_nodes(struct locus_topo *t, hwloc_topology_t h, hwloc_const_bitmap_t usable,
                                 hwloc_obj_t **objs_out)
{
    int n = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    if (n <= 0)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "hwloc found no NUMA node in the topology");
    hwloc_obj_t *objs = calloc((size_t)n, sizeof *objs);
    t->nodes = calloc((size_t)n, sizeof *t->nodes);
    if (!objs || !t->nodes) {
        free(objs);
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: %d nodes", n);
    }
    for (int i = 0; i < n; i++)
        objs[i] = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)i);
    qsort(objs, (size_t)n, sizeof *objs, cmp_numa_os);
    t->num_nodes = n;
    *objs_out = objs;
    for (int i = 0; i < n; i++) {
        t->nodes[i].os_index = (int)objs[i]->os_index;
        t->nodes[i].memory_bytes = objs[i]->attr ? objs[i]->attr->numanode.local_memory : 0;
    }
    return assign_node_cpus(t, h, objs, usable);
}

/* -------------------------------------------------------------- distances */

static bool distances_from_hwloc(struct locus_topo *t, hwloc_topology_t h, hwloc_obj_t *objs)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    unsigned long kind = HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY;
    if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d, kind, 0) != 0 || nr == 0)
        return false;
    int n = t->num_nodes;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int ia = hwloc_distances_obj_index(d, objs[a]);
            int ib = hwloc_distances_obj_index(d, objs[b]);
            uint64_t v = (ia >= 0 && ib >= 0) ? d->values[(unsigned)ia * d->nbobjs + (unsigned)ib] : 0;
            t->distance[a * n + b] = (v > 0 && v < 100000) ? (int)v : -1;
        }
    hwloc_distances_release(h, d);
    return true;
}

static bool distances_from_sysfs(struct locus_topo *t)
{
    int n = t->num_nodes;
    int *os_of = malloc((size_t)n * sizeof *os_of);
    if (!os_of)
        return false;
    for (int i = 0; i < n; i++)
        os_of[i] = t->nodes[i].os_index;
    bool ok = true;
    for (int a = 0; a < n && ok; a++)
        ok = topo_sysfs_distance_row(TOPO_SYSFS, os_of[a], os_of, n, t->distance + a * n);
    free(os_of);
    return ok;
}

static locus_status_t load_distances(struct locus_topo *t, hwloc_topology_t h, hwloc_obj_t *objs)
{
    int n = t->num_nodes;
    t->distance = malloc((size_t)n * (size_t)n * sizeof *t->distance);
    if (!t->distance)
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: %dx%d distance matrix", n, n);
    if (distances_from_hwloc(t, h, objs)) {
        t->distance_source = LOCUS_TOPO_SRC_HWLOC;
        return LOCUS_OK;
    }
    if (t->origin == TOPO_ORIGIN_LOCAL && distances_from_sysfs(t)) {
        t->distance_source = LOCUS_TOPO_SRC_SYSFS;
        if (n > 1)
            lc_note(&t->notes, "hwloc has no OS latency matrix for NUMA nodes; distances read from sysfs");
        return LOCUS_OK;
    }
    /* Unknown: only the diagonal is certain (10 = local by the SLIT definition). */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            t->distance[a * n + b] = a == b ? 10 : -1;
    t->distance_source = LOCUS_TOPO_SRC_DEFAULT;
    if (n > 1)
        lc_note(&t->notes, "no NUMA distance matrix (hwloc or sysfs); distances between nodes unknown (-1)");
    return LOCUS_OK;
}

/* ------------------------------------------------------------------- cpus */

static locus_status_t load_cpus(struct locus_topo *t, hwloc_topology_t h, hwloc_const_bitmap_t usable)
{
    if (!(t->cpus = bitmap_to_array(usable, &t->num_cpus)))
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: cpu list");
    if (t->num_cpus == 0)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "topo: no CPU is usable by this process");
    int online = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    if (t->num_cpus < online) {
        char list[128];
        topo_format_cpulist(t->cpus, t->num_cpus, list, sizeof list);
        lc_note(&t->notes, "cpu affinity/cgroup limits this process to %d of %d online cpus (%s); node and L3 cpu "
                  "lists show only those", t->num_cpus, online, list);
    }
    t->cpu_node = malloc((size_t)t->num_cpus * sizeof(int));
    t->cpu_l3 = malloc((size_t)t->num_cpus * sizeof(int));
    if (!t->cpu_node || !t->cpu_l3)
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: cpu maps");
    for (int i = 0; i < t->num_cpus; i++)
        t->cpu_node[i] = t->cpu_l3[i] = -1;
    for (int n = 0; n < t->num_nodes; n++)
        for (int k = 0; k < t->nodes[n].num_cpus; k++) {
            int p = cpu_pos(t, t->nodes[n].cpus[k]);
            if (p >= 0)
                t->cpu_node[p] = n;
        }
    return LOCUS_OK;
}

/* --------------------------------------------------------------------- L3 */

static bool is_data_cache(hwloc_obj_t o)
{
    return hwloc_obj_type_is_dcache(o->type) && o->attr &&
           o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION;
}

/* The objects that define the shared-cache domains: L3 caches; else the
 * highest-level data cache present (the LLC above the cores); else packages;
 * else the machine. `level` reports which (0 = no cache). */
static hwloc_obj_type_t domain_type(hwloc_topology_t h, int *level)
{
    static const hwloc_obj_type_t caches[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
                                              HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        hwloc_obj_t o = hwloc_get_next_obj_by_type(h, caches[i], NULL);
        if (o && is_data_cache(o)) {
            *level = (int)o->attr->cache.depth;
            return caches[i];
        }
    }
    *level = 0;
    return hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE) > 0 ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_MACHINE;
}

static bool size_is_sane(uint64_t s) { return s >= L3_MIN_SANE && s <= L3_MAX_SANE; }

/* Pick the domain's size: hwloc's if sane, else sysfs (level `level`, or 3
 * for a package/machine domain), else the default; note any substitution. */
static void l3_size(struct locus_topo *t, topo_l3_t *d, int idx, uint64_t hw)
{
    char cpus[128], a[32], b[32];
    topo_format_cpulist(d->cpus, d->num_cpus, cpus, sizeof cpus);
    int level = d->level ? d->level : 3;
    if (d->level && size_is_sane(hw)) {
        d->size_bytes = hw;
        d->size_source = LOCUS_TOPO_SRC_HWLOC;
        return;
    }
    if (d->level)
        snprintf(a, sizeof a, "%llu bytes", (unsigned long long)hw);
    else
        snprintf(a, sizeof a, "no cache object");
    uint64_t s = d->num_cpus ? topo_sysfs_cache_size(TOPO_SYSFS, d->cpus[0], level) : 0;
    if (size_is_sane(s)) {
        d->size_bytes = s;
        d->size_source = LOCUS_TOPO_SRC_SYSFS;
        topo_format_size(s, b, sizeof b);
        lc_note(&t->notes, "L3 domain %d (cpus %s): hwloc reports %s; used sysfs cpu%d L%d size: %s", idx, cpus, a,
                  d->cpus[0], level, b);
        return;
    }
    d->size_bytes = L3_DEFAULT;
    d->size_source = LOCUS_TOPO_SRC_DEFAULT;
    topo_format_size(L3_DEFAULT, b, sizeof b);
    lc_note(&t->notes, "L3 domain %d (cpus %s): hwloc reports %s and sysfs has no usable L%d size; assumed %s", idx,
              cpus, a, level, b);
}

static locus_status_t load_l3(struct locus_topo *t, hwloc_topology_t h, hwloc_const_bitmap_t usable)
{
    int level;
    hwloc_obj_type_t type = domain_type(h, &level);
    int n = hwloc_get_nbobjs_by_type(h, type);
    t->l3 = calloc((size_t)(n > 0 ? n : 1), sizeof *t->l3);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!t->l3 || !set) {
        hwloc_bitmap_free(set);
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: L3 domains");
    }
    if (level == 0)
        lc_note(&t->notes, "no cache objects in the topology; one shared-cache domain per %s",
                  hwloc_obj_type_string(type));
    else if (level != 3)
        lc_note(&t->notes, "no L3 cache in the topology; L%d caches used as the shared-cache domains", level);
    locus_status_t st = LOCUS_OK;
    for (int i = 0; i < n && st == LOCUS_OK; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, type, (unsigned)i);
        if (type != HWLOC_OBJ_PACKAGE && type != HWLOC_OBJ_MACHINE && !is_data_cache(o))
            continue;
        hwloc_bitmap_and(set, o->cpuset, usable);
        if (hwloc_bitmap_iszero(set))
            continue; /* none of its cpus are ours */
        topo_l3_t *d = &t->l3[t->num_l3];
        d->level = level;
        if (!(d->cpus = bitmap_to_array(set, &d->num_cpus))) {
            st = lc_err(LOCUS_ERR_NO_MEMORY, "topo: L3 cpu list");
            break;
        }
        l3_size(t, d, t->num_l3, level ? o->attr->cache.size : 0);
        for (int k = 0; k < d->num_cpus; k++) {
            int p = cpu_pos(t, d->cpus[k]);
            if (p >= 0)
                t->cpu_l3[p] = t->num_l3;
        }
        t->num_l3++;
    }
    hwloc_bitmap_free(set);
    return st;
}

/* ------------------------------------------------------------------- load */

void locus_topo_destroy(locus_topo_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->num_nodes; i++)
        free(t->nodes[i].cpus);
    for (int i = 0; i < t->num_l3; i++)
        free(t->l3[i].cpus);
    free(t->nodes);
    free(t->distance);
    free(t->cpus);
    free(t->cpu_node);
    free(t->cpu_l3);
    free(t->l3);
    free(t->hugepools);
    lc_notes_free(&t->notes);
    free(t->origin_arg);
    free(t);
}

static locus_status_t build(struct locus_topo *t, hwloc_topology_t h)
{
    hwloc_obj_t *objs = NULL;
    hwloc_bitmap_t usable = usable_cpuset(h, t->origin == TOPO_ORIGIN_LOCAL);
    if (!usable)
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: cpuset");
    locus_status_t st = load_nodes(t, h, usable, &objs);
    if (st == LOCUS_OK)
        st = load_distances(t, h, objs);
    if (st == LOCUS_OK)
        st = load_cpus(t, h, usable);
    if (st == LOCUS_OK)
        st = load_l3(t, h, usable);
    if (st == LOCUS_OK)
        topo_read_pages(t, TOPO_SYSFS);
    free(objs);
    hwloc_bitmap_free(usable);
    return st;
}

static locus_status_t hwloc_setup(hwloc_topology_t h, topo_origin_t origin, const char *arg)
{
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (origin == TOPO_ORIGIN_LOCAL) {
        /* See every PU and node, then restrict to what this process may use
         * ourselves. Never rebind the caller: hwloc's x86 discovery otherwise
         * moves the thread onto each cpu in turn to run cpuid there, and a
         * thread moved onto a cpu where a SCHED_FIFO peer of equal priority
         * spins (an shm receive waiting for this very process) never runs
         * again (`chrt -f 1 locus run -n 2 -- locus bench pingpong` hung at
         * the first copy that loaded the topology). Linux's sysfs gives the
         * same caches, cores and nodes. */
        unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
#if HWLOC_API_VERSION >= 0x00020500
        flags |= HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING;
#endif
        hwloc_topology_set_flags(h, flags);
        return LOCUS_OK;
    }
    if (origin == TOPO_ORIGIN_XML) {
        if (hwloc_topology_set_xml(h, arg) != 0)
            return errno == EINVAL ? lc_err(LOCUS_ERR_INVALID, "hwloc XML file '%s': " XML_EXPECTED, arg)
                                   : lc_err_errno(LOCUS_ERR_INVALID, errno, "hwloc XML file '%s'", arg);
        return LOCUS_OK;
    }
    if (hwloc_topology_set_synthetic(h, arg) != 0)
        return lc_err(LOCUS_ERR_INVALID,
                         "synthetic topology '%s': expected an hwloc synthetic description such as "
                         "\"pack:2 [numa] l3:2 core:2 pu:1\"",
                         arg);
    return LOCUS_OK;
}

static locus_status_t check_xml_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return lc_err_errno(errno == ENOENT ? LOCUS_ERR_NOT_FOUND : LOCUS_ERR_SYSTEM, errno,
                               "hwloc XML file '%s'", path);
    if (!S_ISREG(sb.st_mode))
        return lc_err(LOCUS_ERR_INVALID, "hwloc XML file '%s': not a regular file", path);
    return LOCUS_OK;
}

static locus_status_t load_any(topo_origin_t origin, const char *arg, locus_topo_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "topo: out pointer is NULL: expected a locus_topo_t **");
    *out = NULL;
    if (origin == TOPO_ORIGIN_XML && (!arg || !*arg))
        return lc_err(LOCUS_ERR_INVALID, "hwloc XML path is %s: expected the path of an hwloc XML file",
                         arg ? "empty" : "NULL");
    if (origin == TOPO_ORIGIN_SYNTHETIC && (!arg || !*arg))
        return lc_err(LOCUS_ERR_INVALID, "synthetic topology description is %s: expected e.g. %s",
                         arg ? "empty" : "NULL", "\"pack:2 [numa] l3:2 core:2 pu:1\"");
    if (origin == TOPO_ORIGIN_XML) {
        locus_status_t st = check_xml_path(arg);
        if (st)
            return st;
    }
    struct locus_topo *t = calloc(1, sizeof *t);
    if (!t)
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: allocating the topology");
    t->origin = origin;
    if (arg && !(t->origin_arg = strdup(arg))) {
        locus_topo_destroy(t);
        return lc_err(LOCUS_ERR_NO_MEMORY, "topo: allocating the topology");
    }
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) != 0) {
        locus_topo_destroy(t);
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "hwloc_topology_init");
    }
    locus_status_t st = hwloc_setup(h, origin, arg);
    if (st == LOCUS_OK && hwloc_topology_load(h) != 0)
        st = origin == TOPO_ORIGIN_XML
                 ? lc_err(LOCUS_ERR_INVALID, "hwloc XML file '%s': " XML_EXPECTED, arg)
                 : lc_err_errno(LOCUS_ERR_SYSTEM, errno, "hwloc_topology_load");
    if (st == LOCUS_OK)
        st = build(t, h);
    hwloc_topology_destroy(h);
    if (st != LOCUS_OK) {
        locus_topo_destroy(t);
        return st;
    }
    *out = t;
    return LOCUS_OK;
}

locus_status_t locus_topo_load(locus_topo_t **out) { return load_any(TOPO_ORIGIN_LOCAL, NULL, out); }

locus_status_t locus_topo_load_xml(const char *path, locus_topo_t **out)
{
    return load_any(TOPO_ORIGIN_XML, path, out);
}

locus_status_t locus_topo_load_synthetic(const char *desc, locus_topo_t **out)
{
    return load_any(TOPO_ORIGIN_SYNTHETIC, desc, out);
}

/* ---------------------------------------------------------------- queries */

int locus_topo_num_nodes(const locus_topo_t *t) { return t ? t->num_nodes : 0; }

locus_status_t locus_topo_node(const locus_topo_t *t, int i, locus_topo_node_t *out)
{
    if (!t || !out)
        return lc_err(LOCUS_ERR_INVALID, "locus_topo_node: %s is NULL", t ? "out" : "topo");
    if (i < 0 || i >= t->num_nodes)
        return lc_err(LOCUS_ERR_RANGE, "node index %d: expected 0..%d", i, t->num_nodes - 1);
    const topo_node_t *n = &t->nodes[i];
    *out = (locus_topo_node_t){n->os_index, n->memory_bytes, n->num_cpus, n->cpus};
    return LOCUS_OK;
}

bool locus_topo_node_is_memory_only(const locus_topo_t *t, int i)
{
    return t && i >= 0 && i < t->num_nodes && t->nodes[i].hw_cpus == 0;
}

int locus_topo_node_index(const locus_topo_t *t, int os_index)
{
    for (int i = 0; t && i < t->num_nodes; i++)
        if (t->nodes[i].os_index == os_index)
            return i;
    return -1;
}

int locus_topo_distance(const locus_topo_t *t, int a, int b)
{
    if (!t || a < 0 || b < 0 || a >= t->num_nodes || b >= t->num_nodes)
        return -1;
    return t->distance[a * t->num_nodes + b];
}

int locus_topo_num_cpus(const locus_topo_t *t) { return t ? t->num_cpus : 0; }

int locus_topo_cpu(const locus_topo_t *t, int i)
{
    return (t && i >= 0 && i < t->num_cpus) ? t->cpus[i] : -1;
}

int locus_topo_cpu_node(const locus_topo_t *t, int os_cpu)
{
    int p = t ? cpu_pos(t, os_cpu) : -1;
    return p >= 0 ? t->cpu_node[p] : -1;
}

int locus_topo_cpu_l3(const locus_topo_t *t, int os_cpu)
{
    int p = t ? cpu_pos(t, os_cpu) : -1;
    return p >= 0 ? t->cpu_l3[p] : -1;
}

int locus_topo_num_l3(const locus_topo_t *t) { return t ? t->num_l3 : 0; }

locus_status_t locus_topo_l3(const locus_topo_t *t, int i, locus_topo_l3_t *out)
{
    if (!t || !out)
        return lc_err(LOCUS_ERR_INVALID, "locus_topo_l3: %s is NULL", t ? "out" : "topo");
    if (i < 0 || i >= t->num_l3)
        return lc_err(LOCUS_ERR_RANGE, "L3 index %d: expected 0..%d", i, t->num_l3 - 1);
    const topo_l3_t *d = &t->l3[i];
    *out = (locus_topo_l3_t){d->size_bytes, d->size_source, d->num_cpus, d->cpus};
    return LOCUS_OK;
}

bool locus_topo_share_l3(const locus_topo_t *t, int a, int b)
{
    int la = locus_topo_cpu_l3(t, a);
    return la >= 0 && la == locus_topo_cpu_l3(t, b);
}

uint64_t locus_topo_base_page(const locus_topo_t *t) { return t ? t->base_page : 0; }
locus_thp_mode_t locus_topo_thp_mode(const locus_topo_t *t) { return t ? t->thp_mode : LOCUS_THP_UNAVAILABLE; }
uint64_t locus_topo_thp_size(const locus_topo_t *t) { return t ? t->thp_size : 0; }
int locus_topo_num_hugepools(const locus_topo_t *t) { return t ? t->num_hugepools : 0; }

locus_status_t locus_topo_hugepool(const locus_topo_t *t, int i, locus_topo_hugepool_t *out)
{
    if (!t || !out)
        return lc_err(LOCUS_ERR_INVALID, "locus_topo_hugepool: %s is NULL", t ? "out" : "topo");
    if (i < 0 || i >= t->num_hugepools)
        return lc_err(LOCUS_ERR_RANGE, "hugepage pool index %d: expected 0..%d", i, t->num_hugepools - 1);
    *out = t->hugepools[i];
    return LOCUS_OK;
}

const char *locus_topo_notes(const locus_topo_t *t) { return t ? lc_notes_text(&t->notes) : ""; }

const char *locus_thp_mode_name(locus_thp_mode_t mode)
{
    switch (mode) {
    case LOCUS_THP_NEVER:   return "never";
    case LOCUS_THP_MADVISE: return "madvise";
    case LOCUS_THP_ALWAYS:  return "always";
    case LOCUS_THP_UNAVAILABLE: break;
    }
    return "unavailable";
}
