/* Joins the job through locus_boot under whatever launcher started it and
 * checks what every rank says is consistent: ranks 0..N-1 once each, one job
 * id, one size, local ranks 0..L-1 on each node. Then allgathers and
 * barriers for --rounds rounds (blobs of different sizes per rank and round).
 *   --expect-source S   fail unless locus_boot_source() is S
 *   --die-rank R        rank R exits with status 3 after the first exchange;
 *                       the others must see a barrier fail naming rank R
 *   --abort-rank R      rank R calls locus_boot_abort(7, ...)
 * Prints one "boot rank=..." line per rank. Exit 0 when all is well. */
#include <locus/locus.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int rank, size, local_rank, local_size, node, num_nodes;
    char job[64];
} info_t;

static int check_infos(const info_t *all, int n, const info_t *me)
{
    int *per_node = calloc((size_t)me->num_nodes, sizeof *per_node);
    for (int r = 0; r < n; r++) {
        const info_t *x = &all[r];
        if (x->rank != r || x->size != n || strcmp(x->job, me->job) || x->num_nodes != me->num_nodes ||
            x->node < 0 || x->node >= me->num_nodes || x->local_rank < 0 ||
            x->local_rank >= x->local_size) {
            fprintf(stderr, "rank %d: rank %d says rank=%d size=%d job=%s node=%d/%d local=%d/%d\n",
                    me->rank, r, x->rank, x->size, x->job, x->node, x->num_nodes, x->local_rank,
                    x->local_size);
            return 1;
        }
        per_node[x->node]++;
    }
    for (int r = 0; r < n; r++) { /* local ranks on a node: 0..L-1, each once */
        const info_t *x = &all[r];
        if (per_node[x->node] != x->local_size) {
            fprintf(stderr, "rank %d: node %d has %d ranks, rank %d says local size %d\n", me->rank,
                    x->node, per_node[x->node], r, x->local_size);
            return 1;
        }
        for (int q = 0; q < r; q++)
            if (all[q].node == x->node && all[q].local_rank == x->local_rank) {
                fprintf(stderr, "rank %d: ranks %d and %d share local rank %d\n", me->rank, q, r,
                        x->local_rank);
                return 1;
            }
    }
    free(per_node);
    return 0;
}

static int rounds_of_allgather(locus_boot_t *b, int rounds)
{
    int n = locus_boot_size(b), me = locus_boot_rank(b);
    for (int i = 0; i < rounds; i++) {
        size_t len = (size_t)(i * 37) % 5000;
        unsigned char *mine = malloc(len + 1), *all = malloc(len * (size_t)n + 1);
        for (size_t k = 0; k < len; k++)
            mine[k] = (unsigned char)(me * 31 + i * 7 + k);
        if (locus_boot_allgather(b, mine, len, all) || locus_boot_barrier(b)) {
            fprintf(stderr, "rank %d: round %d: %s\n", me, i, locus_last_error());
            return 1;
        }
        for (int r = 0; r < n; r++)
            for (size_t k = 0; k < len; k++)
                if (all[(size_t)r * len + k] != (unsigned char)(r * 31 + i * 7 + k)) {
                    fprintf(stderr, "rank %d: round %d: byte %zu of rank %d wrong\n", me, i, k, r);
                    return 1;
                }
        free(mine);
        free(all);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *expect = NULL;
    int rounds = 10, die = -1, abort_rank = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--expect-source")) expect = argv[i + 1];
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--die-rank")) die = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--abort-rank")) abort_rank = atoi(argv[i + 1]);
        else { fprintf(stderr, "boot_check: unknown option %s\n", argv[i]); return 2; }
    }
    locus_boot_t *b;
    if (locus_boot_init(NULL, &b)) {
        fprintf(stderr, "boot_check: init: %s\n", locus_last_error());
        return 10;
    }
    info_t me = {locus_boot_rank(b), locus_boot_size(b), locus_boot_local_rank(b),
                 locus_boot_local_size(b), locus_boot_node(b), locus_boot_num_nodes(b), ""};
    snprintf(me.job, sizeof me.job, "%s", locus_boot_job(b));
    printf("boot rank=%d size=%d local=%d/%d node=%d/%d source=%s job=%s\n", me.rank, me.size,
           me.local_rank, me.local_size, me.node, me.num_nodes, locus_boot_source(b), me.job);
    if (*locus_boot_notes(b))
        printf("rank %d notes: %s", me.rank, locus_boot_notes(b));
    fflush(stdout);
    if (expect && strcmp(expect, locus_boot_source(b))) {
        fprintf(stderr, "rank %d: source %s, expected %s\n", me.rank, locus_boot_source(b), expect);
        return 11;
    }
    info_t *all = calloc((size_t)me.size, sizeof *all);
    if (locus_boot_allgather(b, &me, sizeof me, all)) {
        fprintf(stderr, "rank %d: allgather: %s\n", me.rank, locus_last_error());
        return 12;
    }
    if (check_infos(all, me.size, &me))
        return 12;
    if (me.rank == die)
        _exit(3);
    if (me.rank == abort_rank)
        locus_boot_abort(b, 7, "boot_check: rank asked to abort");
    if (die >= 0 || abort_rank >= 0) {
        sleep(abort_rank >= 0 ? 30 : 0); /* an abort ends us before this returns */
        char want[32];
        snprintf(want, sizeof want, "rank %d ", die);
        if (!locus_boot_barrier(b) || !strstr(locus_last_error(), want)) {
            fprintf(stderr, "rank %d: barrier after rank %d died: '%s'\n", me.rank, die,
                    locus_last_error());
            return 13;
        }
        printf("rank %d: barrier failed as expected: %s\n", me.rank, locus_last_error());
        return 0;
    }
    if (rounds_of_allgather(b, rounds))
        return 14;
    if (locus_boot_fini(b)) {
        fprintf(stderr, "rank %d: fini: %s\n", me.rank, locus_last_error());
        return 15;
    }
    free(all);
    return 0;
}
