/* Node identity when the launcher does not say: every process contributes a
 * host id (hostname + kernel boot id) to one allgather; processes with equal
 * ids share a node. Nodes are numbered in the order of their lowest rank,
 * local ranks by rank within a node. */
#include "boot/boot_internal.h"

#include "core/error.h"
#include "core/sysfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void host_id(char out[BOOT_HOSTID_LEN])
{
    char host[65] = "", bid[64] = "";
    gethostname(host, sizeof host - 1);
    /* the hostname alone is not enough: containers on two machines may both
     * be "localhost"; the boot id differs per running kernel */
    if (!lc_read_line("/proc/sys/kernel/random/boot_id", bid, sizeof bid))
        snprintf(bid, sizeof bid, "no-boot-id");
    memset(out, 0, BOOT_HOSTID_LEN);
    snprintf(out, BOOT_HOSTID_LEN, "%s/%s", host, bid);
}

static int by_id_then_rank(const void *pa, const void *pb, void *ctx)
{
    const char *ids = ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    int c = memcmp(ids + (size_t)a * BOOT_HOSTID_LEN, ids + (size_t)b * BOOT_HOSTID_LEN, BOOT_HOSTID_LEN);
    return c ? c : (a > b) - (a < b);
}

locus_status_t boot_node_assign(locus_boot_t *b, const char *ids)
{
    int n = b->size;
    int *order = malloc(sizeof(int) * (size_t)n), *leader = malloc(sizeof(int) * (size_t)n);
    int *node_of = malloc(sizeof(int) * (size_t)n);
    if (!order || !leader || !node_of) {
        free(order), free(leader), free(node_of);
        return lc_err(LOCUS_ERR_NO_MEMORY, "node map of %d processes", n);
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_id_then_rank, (void *)ids);
    /* groups of equal ids; each group's first entry is its lowest rank */
    int start = 0;
    for (int k = 0; k < n; k++) {
        if (k && memcmp(ids + (size_t)order[k] * BOOT_HOSTID_LEN,
                        ids + (size_t)order[k - 1] * BOOT_HOSTID_LEN, BOOT_HOSTID_LEN))
            start = k;
        leader[order[k]] = order[start];
        if (order[k] == b->rank) {
            b->local_rank = k - start;
            int end = k;
            while (end + 1 < n && !memcmp(ids + (size_t)order[end + 1] * BOOT_HOSTID_LEN,
                                          ids + (size_t)order[k] * BOOT_HOSTID_LEN, BOOT_HOSTID_LEN))
                end++;
            b->local_size = end - start + 1;
        }
    }
    int nodes = 0;
    for (int r = 0; r < n; r++)
        node_of[r] = leader[r] == r ? nodes++ : node_of[leader[r]];
    b->node = node_of[b->rank];
    b->num_nodes = nodes;
    free(order), free(leader), free(node_of);
    return LOCUS_OK;
}

/* Collective #b->seq: called by locus_boot_init with b->mu held. */
locus_status_t boot_node_map(locus_boot_t *b)
{
    char mine[BOOT_HOSTID_LEN];
    host_id(mine);
    char *ids = malloc((size_t)b->size * BOOT_HOSTID_LEN);
    if (!ids)
        return lc_err(LOCUS_ERR_NO_MEMORY, "host ids of %d processes", b->size);
    locus_status_t st = b->ops->allgather(b, mine, BOOT_HOSTID_LEN, ids);
    b->seq++;
    if (!st)
        st = boot_node_assign(b, ids);
    free(ids);
    return st;
}
