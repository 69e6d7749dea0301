/* Setup and queries: my_pe/n_pes, pe_accessible, addr_accessible, ptr,
 * info_get_version/name, query_thread, the version and name constants. */
#include "tcommon.h"

static long global_var;
static int global_arr[16];

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes;

    CHECK(npes >= 1, "n_pes %d", npes);
    CHECK(me >= 0 && me < npes, "my_pe %d of %d", me, npes);
    CHECK(shmem_my_pe() == me && shmem_n_pes() == npes, "queries not stable");
    t_section("my_pe/n_pes");

    for (int pe = 0; pe < npes; pe++)
        CHECK(shmem_pe_accessible(pe) == 1, "pe_accessible(%d) = 0", pe);
    CHECK(shmem_pe_accessible(-1) == 0, "pe_accessible(-1) != 0");
    CHECK(shmem_pe_accessible(npes) == 0, "pe_accessible(npes) != 0");
    t_section("pe_accessible");

    long *heap = shmem_malloc(64 * sizeof(long));
    long stack_var = 0;
    long *private_mem = malloc(64);
    for (int pe = 0; pe < npes; pe++) {
        CHECK(shmem_addr_accessible(heap, pe) == 1, "heap not accessible on %d", pe);
        CHECK(shmem_addr_accessible(heap + 63, pe) == 1, "heap end not accessible on %d", pe);
        CHECK(shmem_addr_accessible(&global_var, pe) == 1, "global not accessible on %d", pe);
        CHECK(shmem_addr_accessible(&global_arr[15], pe) == 1, "global array not accessible");
        CHECK(shmem_addr_accessible(&stack_var, pe) == 0, "stack accessible on %d", pe);
        CHECK(shmem_addr_accessible(private_mem, pe) == 0, "private malloc accessible on %d", pe);
    }
    t_section("addr_accessible");

    /* shmem_ptr: self gives the address itself; a peer gives NULL or an
     * address through which stores reach that peer's object. */
    CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr(heap, self) = %p, want %p", shmem_ptr(heap, me), (void *)heap);
    for (int i = 0; i < 64; i++)
        heap[i] = -1;
    shmem_barrier_all();
    int right = (me + 1) % npes;
    long *rp = shmem_ptr(heap, right);
    if (rp)
        rp[me % 64] = 1000 + me;
    else
        shmem_long_p(&heap[me % 64], 1000 + me, right);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes;
    CHECK(heap[left % 64] == 1000 + left, "store via shmem_ptr: %ld", heap[left % 64]);
    t_section("ptr");

    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    CHECK(major == 1 && minor >= 4, "version %d.%d below 1.4", major, minor);
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof name);
    shmem_info_get_name(name);
    CHECK(memchr(name, 0, sizeof name) != NULL, "name not terminated within SHMEM_MAX_NAME_LEN");
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s' vs '%s'", name, SHMEM_VENDOR_STRING);
    t_section("info_get_version/name");

    CHECK(SHMEM_THREAD_SINGLE < SHMEM_THREAD_FUNNELED && SHMEM_THREAD_FUNNELED < SHMEM_THREAD_SERIALIZED &&
              SHMEM_THREAD_SERIALIZED < SHMEM_THREAD_MULTIPLE,
          "thread levels not increasing");
    int provided = -1;
    shmem_query_thread(&provided);
    CHECK(provided == SHMEM_THREAD_SINGLE || provided == SHMEM_THREAD_FUNNELED ||
              provided == SHMEM_THREAD_SERIALIZED || provided == SHMEM_THREAD_MULTIPLE,
          "query_thread %d", provided);
    t_section("query_thread");

    CHECK(SHMEM_CMP_EQ != SHMEM_CMP_NE && SHMEM_CMP_GT != SHMEM_CMP_LT && SHMEM_CMP_LE != SHMEM_CMP_GE,
          "comparison constants collide");
    CHECK(SHMEM_REDUCE_MIN_WRKDATA_SIZE >= 1 && SHMEM_BCAST_SYNC_SIZE >= 1 && SHMEM_BARRIER_SYNC_SIZE >= 1 &&
              SHMEM_REDUCE_SYNC_SIZE >= 1 && SHMEM_COLLECT_SYNC_SIZE >= 1 && SHMEM_ALLTOALL_SYNC_SIZE >= 1 &&
              SHMEM_ALLTOALLS_SYNC_SIZE >= 1 && SHMEM_SYNC_SIZE >= SHMEM_REDUCE_SYNC_SIZE,
          "sync sizes");
    t_section("constants");

    shmem_free(heap);
    free(private_mem);
    return t_finish();
}
