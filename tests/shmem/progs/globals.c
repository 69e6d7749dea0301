/* Symmetric data objects outside the heap: initialised globals (.data),
 * zeroed ones (.bss), file-static and function-static variables, a 4 MiB
 * array; RMA, atomics and wait_until on them; shmem_ptr either NULL or a
 * working address. (Their addresses may differ between PEs: PIE + ASLR.) */
#include "tcommon.h"

long g_data = 42;                    /* .data */
int g_data_arr[100] = {1, 2, 3};     /* .data */
long g_bss;                          /* .bss */
double g_bss_arr[1000];              /* .bss */
static long s_file = 7;              /* file static, .data */
static uint64_t s_big[512 * 1024];   /* 4 MiB .bss */
static long s_flag;

static long *func_static(void)
{
    static long fs[16] = {5};
    return fs;
}

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* initial values are each PE's own */
    CHECK(g_data == 42 && g_data_arr[2] == 3 && s_file == 7 && func_static()[0] == 5, "initial values");
    long v = shmem_long_g(&g_data, right);
    CHECK(v == 42, "g of .data: %ld", v);
    shmem_barrier_all();
    t_section("initialised globals readable remotely");

    shmem_long_p(&g_data, 1000 + me, right);
    shmem_int_put(g_data_arr, (int[3]){me, me + 1, me + 2}, 3, right);
    shmem_long_p(&g_bss, 2000 + me, right);
    double dv[1000];
    for (int i = 0; i < 1000; i++)
        dv[i] = me + i * 0.5;
    shmem_double_put(g_bss_arr, dv, 1000, right);
    shmem_long_p(&s_file, 3000 + me, right);
    shmem_long_put(func_static(), (long[16]){me, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, me}, 16, right);
    shmem_barrier_all();
    CHECK(g_data == 1000 + left, ".data long: %ld", g_data);
    CHECK(g_data_arr[0] == left && g_data_arr[2] == left + 2, ".data array");
    CHECK(g_bss == 2000 + left, ".bss long");
    int bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += g_bss_arr[i] != left + i * 0.5;
    CHECK(!bad, ".bss array: %d wrong", bad);
    CHECK(s_file == 3000 + left, "file static");
    CHECK(func_static()[0] == left && func_static()[15] == left, "function static");
    t_section("put/p to globals and statics");

    /* 4 MiB: put from the heap, get into a private buffer */
    uint64_t *h = shmem_malloc(sizeof s_big);
    for (size_t i = 0; i < 512 * 1024; i++)
        h[i] = t_pat(me, i);
    shmem_barrier_all();
    shmem_uint64_put(s_big, h, 512 * 1024, right);
    shmem_barrier_all();
    bad = 0;
    for (size_t i = 0; i < 512 * 1024; i++)
        bad += s_big[i] != t_pat(left, i);
    CHECK(!bad, "4 MiB global: %d wrong", bad);
    uint64_t *p = malloc(sizeof s_big);
    shmem_uint64_get(p, s_big, 512 * 1024, left);
    int ll = (left + npes - 1) % npes;
    bad = 0;
    for (size_t i = 0; i < 512 * 1024; i++)
        bad += p[i] != t_pat(ll, i);
    CHECK(!bad, "4 MiB get from global: %d wrong", bad);
    free(p);
    shmem_free(h);
    shmem_barrier_all();
    t_section("4 MiB global array");

    /* atomics on a global, from every PE to every PE */
    g_bss = 0;
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        for (int k = 0; k < 50; k++)
            shmem_long_atomic_fetch_add(&g_bss, 1, pe);
    shmem_barrier_all();
    CHECK(g_bss == 50L * npes, "atomics on a global: %ld", g_bss);
    t_section("atomics on globals");

    /* wait_until on a global set by the left neighbour */
    shmem_long_atomic_set(&s_flag, me + 1, right);
    shmem_long_wait_until(&s_flag, SHMEM_CMP_EQ, left + 1);
    CHECK(s_flag == left + 1, "wait_until on a global");
    t_section("wait_until on a global");

    /* shmem_ptr: NULL is allowed for globals; non-NULL must work */
    shmem_barrier_all();
    long *rp = shmem_ptr(&g_data, right);
    if (rp)
        *rp = 5000 + me;
    else
        shmem_long_p(&g_data, 5000 + me, right);
    shmem_barrier_all();
    CHECK(g_data == 5000 + left, "store via shmem_ptr to a global");
    CHECK(shmem_ptr(&g_data, me) == &g_data, "shmem_ptr(global, self)");
    t_section("shmem_ptr on globals");
    return t_finish();
}
