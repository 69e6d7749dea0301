/* Ordering: fence orders puts (blocking and nbi) and AMOs to one PE before
 * a later flag; quiet completes them so that a third PE, told by a flag,
 * reads the data. Each check is a protocol whose result is fixed. */
#include "tcommon.h"

#define NDATA (64 * 1024 / 8)
#define ROUNDS 10

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *data = shmem_malloc(NDATA * sizeof(long));
    long *flag = shmem_malloc(4 * sizeof(long));
    long *cnt = shmem_malloc(sizeof(long));
    long *src = malloc(NDATA * sizeof(long));
    for (int i = 0; i < 4; i++)
        flag[i] = 0;
    *cnt = 0;
    shmem_barrier_all();

    /* fence: data then flag to the right; the right sees the whole data
     * when it sees the flag. Rounds are separated by an ack. */
    int bad = 0;
    for (long r = 1; r <= ROUNDS; r++) {
        for (int i = 0; i < NDATA; i++)
            src[i] = r * 1000000 + me * 1000 + i;
        shmem_long_put(data, src, NDATA, right);
        shmem_long_atomic_add(cnt, 1, right);
        shmem_fence();
        shmem_long_p(&flag[0], r, right);
        shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, r);
        for (int i = 0; i < NDATA; i++)
            bad += data[i] != r * 1000000 + left * 1000 + i;
        bad += *cnt != r;
        /* ack: the left may overwrite data only after I checked it */
        shmem_long_atomic_set(&flag[1], r, left);
        shmem_long_wait_until(&flag[1], SHMEM_CMP_EQ, r);
    }
    CHECK(!bad, "fence: %d values seen before their flag", bad);
    t_section("fence: put, add, fence, p flag");

    /* fence with put_nbi */
    bad = 0;
    for (long r = 1; r <= ROUNDS; r++) {
        for (int i = 0; i < NDATA; i++)
            src[i] = -(r * 1000000 + me * 1000 + i);
        shmem_long_put_nbi(data, src, NDATA, right);
        shmem_fence();
        shmem_long_atomic_set(&flag[2], r, right);
        shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, r);
        for (int i = 0; i < NDATA; i++)
            bad += data[i] != -(r * 1000000 + left * 1000 + i);
        shmem_quiet(); /* src reusable */
        shmem_long_atomic_set(&flag[3], r, left);
        shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, r);
    }
    CHECK(!bad, "fence nbi: %d values seen before their flag", bad);
    t_section("fence: put_nbi, fence, atomic set flag");
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        flag[i] = 0;
    shmem_barrier_all();

    /* quiet: PE me writes data into its right, quiet, then tells the PE
     * after that (right of right), which reads the data from `right`. */
    int rr = (right + 1) % npes, ll = (left + npes - 1) % npes;
    bad = 0;
    for (long r = 1; r <= ROUNDS; r++) {
        for (int i = 0; i < NDATA; i++)
            src[i] = r * 7 + me * 100000 + i;
        shmem_long_put(data, src, NDATA, right);
        shmem_quiet();
        shmem_long_atomic_set(&flag[0], r, rr);
        shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, r); /* from ll, who wrote into left */
        long got[64];
        shmem_long_get(got, data + NDATA - 64, 64, left);
        for (int i = 0; i < 64; i++)
            bad += got[i] != r * 7 + ll * 100000 + NDATA - 64 + i;
        shmem_barrier_all(); /* everyone read before the next round writes */
    }
    CHECK(!bad, "quiet: %d values missing at a third PE", bad);
    t_section("quiet: put, quiet, flag to a third PE");

    /* barrier_all completes puts (it quiets the default context). */
    for (long r = 1; r <= 3; r++) {
        for (int i = 0; i < NDATA; i++)
            src[i] = r + me + i;
        shmem_long_put_nbi(data, src, NDATA, right);
        shmem_barrier_all();
        bad = 0;
        for (int i = 0; i < NDATA; i++)
            bad += data[i] != r + left + i;
        CHECK(!bad, "barrier_all: %d values missing", bad);
        shmem_barrier_all();
    }
    t_section("barrier_all completes put_nbi");

    free(src);
    shmem_free(cnt);
    shmem_free(flag);
    shmem_free(data);
    return t_finish();
}
