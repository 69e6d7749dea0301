/* A program built against an installed locus: topology, a small heap, and
 * (under `locus run -n 2`) one message each way through the shared-memory
 * transport. Prints "ok" and exits 0 when everything worked. */
#include <locus/locus.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, locus_status_t st)
{
    fprintf(stderr, "app: %s: %s: %s\n", what, locus_strerror(st), locus_last_error());
    return 1;
}

int main(void)
{
    locus_topo_t *t;
    locus_status_t st = locus_topo_load(&t);
    if (st)
        return fail("topo", st);
    printf("nodes %d cpus %d\n", locus_topo_num_nodes(t), locus_topo_num_cpus(t));
    locus_topo_destroy(t);
    if (getenv("LOCUS_JOB")) { /* under locus run */
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        locus_shm_ep_t *ep;
        if ((st = locus_shm_init(&o, &ep)))
            return fail("shm init", st);
        int me = locus_shm_rank(ep), peer = 1 - me;
        char out[32], in[32] = "";
        snprintf(out, sizeof out, "hello from %d", me);
        locus_shm_info_t info;
        if ((st = locus_shm_send(ep, peer, 7, out, strlen(out) + 1)) ||
            (st = locus_shm_recv(ep, peer, 7, in, sizeof in, &info)))
            return fail("shm", st);
        char want[32];
        snprintf(want, sizeof want, "hello from %d", peer);
        if (strcmp(in, want))
            return fprintf(stderr, "app: got '%s', want '%s'\n", in, want), 1;
        if ((st = locus_shm_finalize(ep)))
            return fail("shm finalize", st);
    }
    printf("ok\n");
    return 0;
}
