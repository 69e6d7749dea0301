/* Heap placement checks run inside a multi-NUMA QEMU guest (tests/vm).
 *
 *   heap_placement interleave 4k|thp   every node pair within one page of the kind,
 *                                      and page k on the ((node of page 0) + k) mod n-th node
 *   heap_placement bind               bind:<last node with cpus>, faulted from node-0 CPUs only
 *   heap_placement firsttouch         unfaulted until touched, then on the toucher's node
 *   heap_placement local              block per node, each on its node
 *   heap_placement memnode            interleave over and bind to the memory-only node
 *   heap_placement reserve            shared heaps reserved (fallocate) from node-0 CPUs: their
 *                                      pages where the policy put them at create
 *
 * Exit 0 = pass, 1 = fail (each failed check prints a line), 77 = this guest
 * lacks what the check needs (e.g. fewer than 2 nodes). */
#include <locus/locus.h>

#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                    \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static const unsigned long long MiB = 1ull << 20;

static locus_heap_t *make(const locus_topo_t *topo, const char *policy, locus_heap_pages_t pages,
                          uint64_t size, locus_heap_stats_t *s)
{
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    a.size = size;
    a.pages = pages;
    a.verify = LOCUS_VERIFY_ALL;
    if (locus_heap_parse_policy(policy, &a) != LOCUS_OK) {
        printf("FAIL policy %s: %s\n", policy, locus_last_error());
        exit(1);
    }
    locus_heap_t *h;
    if (locus_heap_create(&a, topo, &h) != LOCUS_OK) {
        printf("FAIL create %s %s: %s\n", policy, locus_heap_pages_name(pages), locus_last_error());
        exit(1);
    }
    locus_heap_stats(h, s);
    return h;
}

static void show(const char *what, const locus_heap_stats_t *s)
{
    printf("%s: %llu MiB %s unit %llu KiB, threads %d, resident %llu MiB (huge %llu MiB), checked %llu:",
           what, (unsigned long long)(s->size / MiB), locus_heap_pages_name(s->pages),
           (unsigned long long)(s->unit_size >> 10), s->threads, (unsigned long long)(s->resident_bytes / MiB),
           (unsigned long long)(s->huge_bytes / MiB), (unsigned long long)s->units_checked);
    for (int i = 0; i < s->num_nodes; i++)
        printf(" n%d=%llu", s->node_os[i], (unsigned long long)s->node_units[i]);
    printf(" unfaulted=%llu zero=%llu other=%llu\n", (unsigned long long)s->not_faulted,
           (unsigned long long)s->zero_page, (unsigned long long)s->other_status);
    if (*s->notes)
        printf("notes: %s", s->notes);
}

/* Node (OS number) of each page of [p, p + n*unit). */
static int *nodes_of(const char *p, uint64_t n, uint64_t unit)
{
    void **pages = malloc(n * sizeof *pages);
    int *st = malloc(n * sizeof *st);
    for (uint64_t i = 0; i < n; i++)
        pages[i] = (void *)(p + i * unit);
    if (move_pages(0, n, pages, NULL, st, 0)) {
        printf("FAIL move_pages: %s\n", strerror(errno));
        exit(1);
    }
    free(pages);
    return st;
}

static int index_of_os(const locus_heap_stats_t *s, int os)
{
    for (int i = 0; i < s->num_nodes; i++)
        if (s->node_os[i] == os)
            return i;
    return -1;
}

static void pin_to_node(const locus_topo_t *topo, int k)
{
    locus_topo_node_t nd;
    locus_topo_node(topo, k, &nd);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < nd.num_cpus; c++)
        CPU_SET(nd.cpus[c], &set);
    if (sched_setaffinity(0, sizeof set, &set))
        printf("FAIL sched_setaffinity node %d: %s\n", nd.os_index, strerror(errno)), exit(1);
}

static int test_interleave(const locus_topo_t *topo, const char *kind)
{
    locus_heap_pages_t pk = !strcmp(kind, "thp") ? LOCUS_PAGES_THP : LOCUS_PAGES_4K;
    locus_heap_stats_t s;
    locus_heap_t *h = make(topo, "interleave", pk, pk == LOCUS_PAGES_THP ? 256 * MiB : 64 * MiB, &s);
    show("interleave", &s);
    CHECK(s.resident_bytes == s.size, "resident %llu != size %llu", (unsigned long long)s.resident_bytes,
          (unsigned long long)s.size);
    CHECK(s.pages == pk && s.huge_bytes == (pk == LOCUS_PAGES_THP ? s.size : 0),
          "page kind %s requested, %s obtained with %llu huge bytes", kind, locus_heap_pages_name(s.pages),
          (unsigned long long)s.huge_bytes);
    /* every node with memory takes part: balanced to one page of the kind */
    int n = 0, mem[64];
    for (int i = 0; i < locus_topo_num_nodes(topo); i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, i, &nd);
        if (nd.memory_bytes)
            mem[n++] = i;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            long long d = (long long)s.node_units[mem[i]] - (long long)s.node_units[mem[j]];
            CHECK(d <= 1 && d >= -1, "nodes %d and %d differ by %lld pages of %llu KiB", s.node_os[mem[i]],
                  s.node_os[mem[j]], d, (unsigned long long)(s.unit_size >> 10));
        }
    /* the rule the fault-in plan relies on: strict round-robin by page, page 0 anywhere */
    uint64_t units = s.size / s.unit_size;
    const char *base = locus_heap_base(h);
    int *st = nodes_of(base, units, s.unit_size);
    uint64_t phase = 0, wrong = 0;
    for (int i = 0; i < n; i++)
        if (s.node_os[mem[i]] == st[0])
            phase = (uint64_t)i;
    for (uint64_t k = 0; k < units; k++)
        wrong += st[k] != s.node_os[mem[(phase + k) % (uint64_t)n]];
    CHECK(wrong == 0, "%llu of %llu pages break the round-robin over %d nodes", (unsigned long long)wrong,
          (unsigned long long)units, n);
    free(st);
    locus_heap_destroy(h);
    return 0;
}

static int test_bind(const locus_topo_t *topo)
{
    int nn = locus_topo_num_nodes(topo), target = -1;
    for (int k = nn - 1; k > 0 && target < 0; k--) {
        locus_topo_node_t nd;
        locus_topo_node(topo, k, &nd);
        if (nd.num_cpus)
            target = k;
    }
    if (target < 0)
        return 77;
    locus_topo_node_t nd;
    locus_topo_node(topo, target, &nd);
    /* only node-0 CPUs may run: every fault comes from node 0 */
    pin_to_node(topo, 0);
    locus_topo_t *t0;
    if (locus_topo_load(&t0) != LOCUS_OK)
        return printf("FAIL topo: %s\n", locus_last_error()), 1;
    char pol[32];
    snprintf(pol, sizeof pol, "bind:%d", nd.os_index);
    for (int kind = 0; kind < 2; kind++) {
        locus_heap_stats_t s;
        locus_heap_t *h = make(t0, pol, kind ? LOCUS_PAGES_THP : LOCUS_PAGES_4K, 64 * MiB, &s);
        show(pol, &s);
        int ix = index_of_os(&s, nd.os_index);
        CHECK(ix >= 0 && s.node_units[ix] == s.units_total && s.units_checked == s.units_total,
              "%s: %llu of %llu pages on node %d", pol, ix >= 0 ? (unsigned long long)s.node_units[ix] : 0ull,
              (unsigned long long)s.units_total, nd.os_index);
        cpu_set_t now;
        sched_getaffinity(0, sizeof now, &now);
        CHECK(!CPU_ISSET(nd.cpus[0], &now), "affinity still allows node %d", nd.os_index);
        locus_heap_destroy(h);
    }
    locus_topo_destroy(t0);
    return 0;
}

static int test_firsttouch(const locus_topo_t *topo)
{
    if (locus_topo_num_nodes(topo) < 2)
        return 77;
    locus_heap_stats_t s;
    locus_heap_t *h = make(topo, "firsttouch", LOCUS_PAGES_4K, 64 * MiB, &s);
    show("firsttouch, untouched", &s);
    CHECK(s.not_faulted == s.units_total && s.resident_bytes == 0, "untouched heap has %llu faulted pages",
          (unsigned long long)(s.units_total - s.not_faulted));
    char *p = locus_heap_base(h);
    locus_topo_node_t n0, n1;
    locus_topo_node(topo, 0, &n0);
    locus_topo_node(topo, 1, &n1);
    pin_to_node(topo, 1);
    for (uint64_t off = 0; off < s.size / 2; off += 4096)
        p[off] = 1;
    locus_heap_verify(h, LOCUS_VERIFY_ALL);
    locus_heap_stats(h, &s);
    show("firsttouch, first half touched from node 1", &s);
    CHECK(s.node_units[1] == s.units_total / 2 && s.not_faulted == s.units_total / 2,
          "after touching half from node %d: %llu on it, %llu unfaulted", n1.os_index,
          (unsigned long long)s.node_units[1], (unsigned long long)s.not_faulted);
    pin_to_node(topo, 0);
    for (uint64_t off = s.size / 2; off < s.size; off += 4096)
        p[off] = 1;
    locus_heap_verify(h, LOCUS_VERIFY_ALL);
    locus_heap_stats(h, &s);
    show("firsttouch, second half touched from node 0", &s);
    CHECK(s.node_units[0] == s.units_total / 2 && s.node_units[1] == s.units_total / 2 && s.not_faulted == 0,
          "halves not on nodes %d/%d", n0.os_index, n1.os_index);
    locus_heap_destroy(h);
    return 0;
}

static int test_local(const locus_topo_t *topo)
{
    if (locus_topo_num_nodes(topo) < 2)
        return 77;
    locus_heap_stats_t s;
    locus_heap_t *h = make(topo, "local", LOCUS_PAGES_4K, 64 * MiB, &s);
    show("local", &s);
    /* blocks in node order, sized by the node's fault-in threads (equal cpus here) */
    uint64_t units = s.size / s.unit_size, wrong = 0;
    int *st = nodes_of(locus_heap_base(h), units, s.unit_size);
    int with_cpus[64], n = 0;
    for (int k = 0; k < locus_topo_num_nodes(topo); k++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, k, &nd);
        if (nd.num_cpus)
            with_cpus[n++] = nd.os_index;
    }
    for (uint64_t k = 0; k < units; k++)
        wrong += st[k] != with_cpus[k * (uint64_t)n / units];
    CHECK(wrong == 0, "%llu of %llu pages outside their node's block", (unsigned long long)wrong,
          (unsigned long long)units);
    free(st);
    locus_heap_destroy(h);
    return 0;
}

static int test_memnode(const locus_topo_t *topo)
{
    int mk = -1;
    for (int k = 0; k < locus_topo_num_nodes(topo); k++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, k, &nd);
        if (!nd.num_cpus && nd.memory_bytes)
            mk = k;
    }
    if (mk < 0)
        return printf("no memory-only node in this guest\n"), 77;
    locus_topo_node_t m;
    locus_topo_node(topo, mk, &m);
    int rc = test_interleave(topo, "4k");
    char pol[32];
    snprintf(pol, sizeof pol, "bind:%d", m.os_index);
    locus_heap_stats_t s;
    locus_heap_t *h = make(topo, pol, LOCUS_PAGES_4K, 64 * MiB, &s);
    show(pol, &s);
    CHECK(s.node_units[mk] == s.units_total, "bind to memory-only node %d: %llu of %llu pages there",
          m.os_index, (unsigned long long)s.node_units[mk], (unsigned long long)s.units_total);
    locus_heap_destroy(h);
    snprintf(pol, sizeof pol, "interleave:%d", m.os_index);
    h = make(topo, pol, LOCUS_PAGES_THP, 64 * MiB, &s);
    show(pol, &s);
    CHECK(s.node_units[mk] == s.units_checked && s.units_checked > 0,
          "interleave over memory-only node %d alone: not all pages there", m.os_index);
    locus_heap_destroy(h);
    return rc;
}

/* Reserve: a shared heap fallocated at create under its policy (mbind on the
 * mapping comes first), created and written from node-0 CPUs only: the pages
 * of an interleaved one alternate over the nodes, those of one bound to the
 * last node are all there; fallocate took huge folios, nothing was mapped
 * before the write. Had the policy come after fallocate, all would be on
 * node 0. */
static int test_reserve(const locus_topo_t *topo)
{
    int nn = locus_topo_num_nodes(topo), target = nn - 1, mem[64], n = 0;
    for (int i = 0; i < nn; i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, i, &nd);
        if (nd.memory_bytes)
            mem[n++] = i;
    }
    locus_topo_node_t tn;
    locus_topo_node(topo, target, &tn);
    pin_to_node(topo, 0);
    for (int b = 0; b < 2; b++) {
        locus_heap_attr_t a;
        locus_heap_attr_init(&a);
        char pol[32], name[64];
        snprintf(pol, sizeof pol, b ? "bind:%d" : "interleave", tn.os_index);
        snprintf(name, sizeof name, "heap-placement-%d", (int)getpid());
        a.size = 64 * MiB;
        a.pages = LOCUS_PAGES_THP;
        a.verify = LOCUS_VERIFY_ALL;
        a.share_name = name;
        a.populate = LOCUS_POPULATE_RESERVE;
        locus_heap_parse_policy(pol, &a);
        locus_heap_t *h;
        locus_status_t st = locus_heap_create(&a, topo, &h);
        if (st) { /* unsupported: no shared THP here (no namespaces for the private tmpfs) */
            printf("%s %s: %s\n", st == LOCUS_ERR_UNSUPPORTED ? "SKIP reserve" : "FAIL reserve", pol,
                   locus_last_error());
            return st == LOCUS_ERR_UNSUPPORTED ? 77 : 1;
        }
        locus_heap_stats_t s;
        locus_heap_stats(h, &s);
        CHECK(s.populate == LOCUS_POPULATE_RESERVE && s.resident_bytes == 0,
              "%s: populate %s, %llu bytes resident after create", pol, locus_heap_populate_name(s.populate),
              (unsigned long long)s.resident_bytes);
        memset(locus_heap_base(h), 1, s.size);
        locus_heap_verify(h, LOCUS_VERIFY_ALL);
        locus_heap_stats(h, &s);
        show(b ? "reserve bind" : "reserve interleave", &s);
        CHECK(s.huge_bytes == s.size, "%s: %llu of %llu bytes huge", pol, (unsigned long long)s.huge_bytes,
              (unsigned long long)s.size);
        int ix = index_of_os(&s, tn.os_index);
        if (b)
            CHECK(ix >= 0 && s.node_units[ix] == s.units_total, "%s: %llu of %llu pages on node %d", pol,
                  ix >= 0 ? (unsigned long long)s.node_units[ix] : 0ull, (unsigned long long)s.units_total,
                  tn.os_index);
        for (int i = 0; !b && i < n; i++)
            for (int j = i + 1; j < n; j++) {
                long long d = (long long)s.node_units[mem[i]] - (long long)s.node_units[mem[j]];
                CHECK(d <= 1 && d >= -1, "%s: nodes %d and %d differ by %lld pages", pol, s.node_os[mem[i]],
                      s.node_os[mem[j]], d);
            }
        locus_heap_destroy(h);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: heap_placement interleave 4k|thp | bind | firsttouch | local | memnode\n");
        return 2;
    }
    locus_topo_t *topo;
    if (locus_topo_load(&topo) != LOCUS_OK)
        return printf("FAIL topo: %s\n", locus_last_error()), 1;
    printf("guest: %d NUMA nodes, %d cpus\n", locus_topo_num_nodes(topo), locus_topo_num_cpus(topo));
    if (locus_topo_num_nodes(topo) < 2)
        return printf("SKIP: fewer than 2 NUMA nodes\n"), 77;
    int rc;
    if (!strcmp(argv[1], "interleave") && argc > 2)
        rc = test_interleave(topo, argv[2]);
    else if (!strcmp(argv[1], "bind"))
        rc = test_bind(topo);
    else if (!strcmp(argv[1], "firsttouch"))
        rc = test_firsttouch(topo);
    else if (!strcmp(argv[1], "local"))
        rc = test_local(topo);
    else if (!strcmp(argv[1], "memnode"))
        rc = test_memnode(topo);
    else if (!strcmp(argv[1], "reserve"))
        rc = test_reserve(topo);
    else
        return fprintf(stderr, "heap_placement: unknown check '%s'\n", argv[1]), 2;
    locus_topo_destroy(topo);
    if (rc == 77)
        return printf("SKIP\n"), 77;
    printf("%s: %d failed checks\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : rc;
}
