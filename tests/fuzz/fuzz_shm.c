/* Fuzz: a peer's bytes in the shared segment. Two endpoints of one job live
 * in this process (one thread each for the collective init); the input is a
 * sequence of messages that "rank 1" writes raw into rank 0's ring — any
 * header (type, source, length, tag, aux) and payload, as a hostile or broken
 * peer could. Rank 0 receives through the public API only: each call must
 * return LOCUS_OK or an error (LOCUS_ERR_CORRUPT names the check), never read
 * or write outside the segment, crash or hang (a time-limited progress loop).
 * Input: repeated [16 bytes: len(4) src(2) type(1) flags(1) tag(4) aux(4)]
 * [payload byte count (1)] [payload]. */
#include "fuzz.h"

#include <locus/shm.h>

#include "shm/shm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
    int rank;
    char job[64];
    locus_shm_ep_t *ep;
    locus_status_t st;
} side_t;

static void *init_side(void *arg)
{
    side_t *s = arg;
    locus_shm_opts_t o;
    locus_shm_opts_init(&o);
    o.rank = s->rank;
    o.size = 2;
    o.job = s->job;
    o.queue_bytes = 64 << 10;
    o.heap_bytes = 64 << 10;
    s->st = locus_shm_init(&o, &s->ep);
    return NULL;
}

static void *fini_side(void *arg)
{
    side_t *s = arg;
    locus_shm_finalize(s->ep);
    return NULL;
}

static void raw_copy(void *d, const void *s, size_t n, shmq_dir_t dir)
{
    (void)dir;
    memcpy(d, s, n);
}

/* Post the input's messages; false when the ring is full. */
static void post_all(locus_shm_ep_t *ep1, const uint8_t *p, size_t n)
{
    unsigned char payload[256];
    uint64_t cached = 0;
    while (n >= 17) {
        shmq_hdr_t h;
        memset(&h, 0, sizeof h);
        uint32_t tag, aux;
        memcpy(&h.len, p, 4);
        memcpy(&h.src, p + 4, 2);
        h.type = p[6];
        h.flags = p[7];
        memcpy(&tag, p + 8, 4);
        memcpy(&aux, p + 12, 4);
        h.tag = tag;
        h.aux = aux;
        size_t plen = p[16];
        p += 17, n -= 17;
        if (plen > n)
            plen = n;
        memset(payload, 0, sizeof payload);
        memcpy(payload, p, plen);
        p += plen, n -= plen;
        /* the ring only carries what fits a cell run; len is the peer's claim */
        if (h.len > sizeof payload)
            h.len = (uint32_t)(h.len % (sizeof payload + 1));
        if (!shmq_send(&ep1->q[0], &cached, &h, payload, raw_copy))
            return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned counter;
    side_t s[2] = {{.rank = 0}, {.rank = 1}};
    for (int i = 0; i < 2; i++)
        snprintf(s[i].job, sizeof s[i].job, "fuzz%d-%u", (int)getpid(), counter);
    counter++;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, init_side, &s[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (s[0].st || s[1].st)
        abort(); /* a clean two-rank init must work */
    post_all(s[1].ep, data, size);

    char buf[4096];
    locus_shm_req_t *req;
    if (locus_shm_irecv(s[0].ep, LOCUS_SHM_ANY_SOURCE, LOCUS_SHM_ANY_TAG, buf, sizeof buf, &req) == LOCUS_OK) {
        bool done = false;
        for (int i = 0; i < 2000 && !done; i++) {
            if (locus_shm_progress(s[0].ep) != LOCUS_OK)
                break;
            locus_shm_progress(s[1].ep); /* answers what a real peer would */
            if (locus_shm_test(s[0].ep, req, &done, NULL) != LOCUS_OK)
                break;
        }
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, fini_side, &s[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
