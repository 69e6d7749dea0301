// The generic names from C++ (built with locus-oshc++): the overloads of
// shmem_cxx.h for RMA (1.6's ibget too), signals, atomics (with and without a context, the
// deprecated names too), point-to-point waits and tests, team collectives,
// reductions and shmem_sync(team). Each family is checked on several types
// (their results, not only that they compile), as Sandia OpenSHMEM's C++
// overloads let C++ codes write them.
#include "tcommon.h"

template <typename T> static T *sym(size_t n)
{
    T *p = static_cast<T *>(shmem_calloc(n, sizeof(T)));
    shmem_barrier_all();
    return p;
}

template <typename T> static void rma(shmem_ctx_t ctx)
{
    const int right = (t_me + 1) % t_npes, left = (t_me + t_npes - 1) % t_npes;
    T *d = sym<T>(16);
    T src[16];
    for (int i = 0; i < 16; i++)
        src[i] = T(t_me * 3 + i % 4);
    shmem_put(d, src, 4, right);
    shmem_put(ctx, d + 4, src + 4, 4, right);
    shmem_put_nbi(d + 8, src + 8, 2, right);
    shmem_p(&d[10], T(t_me + 1), right);
    shmem_p(ctx, &d[11], T(t_me + 2), right);
    shmem_iput(d + 12, src, 2, 1, 2, right);  // d[12], d[14] <- src[0], src[1]
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < 10; i++)
        bad += d[i] != T(left * 3 + i % 4);
    bad += d[10] != T(left + 1) || d[11] != T(left + 2) || d[12] != T(left * 3) || d[14] != T(left * 3 + 1);
    T g[4] = {};
    shmem_get(g, d, 2, right);
    shmem_get_nbi(ctx, g + 2, d + 2, 2, right);
    shmem_ctx_quiet(ctx);
    bad += g[0] != T(t_me * 3) || g[3] != T(t_me * 3 + 3);
    bad += shmem_g(&d[10], right) != T(t_me + 1) || shmem_g(ctx, &d[11], right) != T(t_me + 2);
    T s2[2] = {};
    shmem_iget(s2, d + 12, 1, 2, 2, right);
    bad += s2[0] != T(t_me * 3) || s2[1] != T(t_me * 3 + 1);
    T b4[4] = {};
    shmem_ibget(ctx, b4, d, 2, 4, 1, 2, right); // d[0], d[4] -> b4[0], b4[2] (1.6)
    bad += b4[0] != T(t_me * 3) || b4[2] != T(t_me * 3) || b4[1] != T(0);
    CHECK(!bad, "rma: %d wrong", bad);
    shmem_barrier_all();
    shmem_free(d);
}

template <typename T> static void amo(shmem_ctx_t ctx)
{
    T *w = sym<T>(8);
    shmem_atomic_add(&w[0], T(2), 0);
    shmem_atomic_inc(ctx, &w[0], 0);
    (void)shmem_atomic_fetch_add(ctx, &w[1], T(1), 0);
    (void)shmem_atomic_fetch_inc(&w[1], 0);
    shmem_atomic_or(&w[2], T(T(1) << (t_me % 16)), 0);
    shmem_atomic_xor(ctx, &w[3], T(1), 0);
    T f = 0;
    shmem_atomic_fetch_add_nbi(&f, &w[4], T(1), 0);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    int bad = 0;
    T bits = 0;
    for (int pe = 0; pe < t_npes; pe++)
        bits = T(bits | T(T(1) << (pe % 16)));
    if (t_me == 0)
        bad += w[0] != T(3 * t_npes) || w[1] != T(2 * t_npes) || w[2] != bits ||
               w[3] != T(t_npes % 2) || w[4] != T(t_npes);
    bad += f >= T(t_npes);
    shmem_barrier_all();
    // set / fetch / swap / compare_swap on my own word at my right neighbour
    const int right = (t_me + 1) % t_npes;
    shmem_atomic_set(&w[5], T(7), right);
    shmem_barrier_all();
    bad += shmem_atomic_fetch(&w[5], t_me) != T(7);
    bad += shmem_atomic_swap(ctx, &w[5], T(9), t_me) != T(7);
    bad += shmem_atomic_compare_swap(&w[5], T(9), T(11), t_me) != T(9) || w[5] != T(11);
    bad += shmem_atomic_fetch_and(&w[5], T(3), t_me) != T(11) || w[5] != T(3);
    shmem_barrier_all();
    CHECK(!bad, "amo: %d wrong", bad);
    shmem_free(w);
}

template <typename T> static void deprecated_amo()
{
    T *w = sym<T>(2);
    shmem_add(&w[0], T(2), 0);
    shmem_inc(&w[0], 0);
    (void)shmem_fadd(&w[1], T(1), 0);
    (void)shmem_finc(&w[1], 0);
    shmem_barrier_all();
    int bad = 0;
    if (t_me == 0)
        bad += w[0] != T(3 * t_npes) || w[1] != T(2 * t_npes);
    shmem_barrier_all();
    shmem_set(&w[0], T(5), t_me);
    bad += shmem_swap(&w[0], T(6), t_me) != T(5);
    bad += shmem_cswap(&w[0], T(6), T(8), t_me) != T(6) || w[0] != T(8);
    bad += shmem_fetch(&w[0], t_me) != T(8);
    shmem_barrier_all();
    CHECK(!bad, "deprecated amo: %d wrong", bad);
    shmem_free(w);
}

// deprecated shmem_wait (short, int, long, long long): wait while it is 0
template <typename T> static void deprecated_wait()
{
    T *w = sym<T>(1);
    shmem_p(w, T(1), (t_me + 1) % t_npes);
    shmem_wait(w, T(0));
    CHECK(*w == T(1), "shmem_wait");
    shmem_barrier_all();
    shmem_free(w);
}

template <typename T> static void p2p()
{
    // every PE sets flag[me] at PE 0 (a put with a signal, then a p); PE 0 waits for all
    T *flag = sym<T>(T_MAXPE);
    uint64_t *sig = sym<uint64_t>(2);
    T one = 1;
    shmem_put_signal(&flag[t_me], &one, 1, sig, 1, SHMEM_SIGNAL_ADD, 0);
    shmem_signal_add(SHMEM_CTX_DEFAULT, sig + 1, 2, 0);  // 1.6, context first
    int bad = 0;
    if (t_me == 0) {
        shmem_wait_until_all(flag, t_npes, nullptr, SHMEM_CMP_EQ, T(1));
        bad += shmem_test_all(flag, t_npes, nullptr, SHMEM_CMP_EQ, T(1)) != 1;
        size_t idx[T_MAXPE];
        bad += shmem_test_some(flag, t_npes, idx, nullptr, SHMEM_CMP_EQ, T(1)) != size_t(t_npes);
        bad += shmem_wait_until_any(flag, t_npes, nullptr, SHMEM_CMP_EQ, T(1)) >= size_t(t_npes);
        shmem_wait_until(&flag[t_npes - 1], SHMEM_CMP_EQ, T(1));
        bad += shmem_test(&flag[0], SHMEM_CMP_NE, T(0)) != 1;
        // a const array of comparison values (1.5's errata, 1.6) and a plain one
        const T ones[T_MAXPE] = {T(1), T(1), T(1), T(1)};
        T plain[T_MAXPE] = {T(1), T(1), T(1), T(1)};
        shmem_wait_until_all_vector(flag, size_t(t_npes < 4 ? t_npes : 4), nullptr, SHMEM_CMP_EQ, ones);
        bad += shmem_test_all_vector(flag, size_t(t_npes < 4 ? t_npes : 4), nullptr, SHMEM_CMP_EQ, ones) != 1;
        bad += shmem_test_any_vector(flag, size_t(t_npes < 4 ? t_npes : 4), nullptr, SHMEM_CMP_EQ, plain) >= 4;
        bad += shmem_signal_wait_until(sig, SHMEM_CMP_EQ, uint64_t(t_npes)) != uint64_t(t_npes);
        bad += shmem_signal_wait_until(sig + 1, SHMEM_CMP_EQ, uint64_t(2 * t_npes)) != uint64_t(2 * t_npes);
    }
    shmem_barrier_all();
    CHECK(!bad, "p2p: %d wrong", bad);
    shmem_free(sig);
    shmem_free(flag);
}

template <typename T> static void coll()
{
    T *src = sym<T>(T_MAXPE), *dst = sym<T>(T_MAXPE);
    src[0] = T(t_me + 1);
    shmem_barrier_all();
    int bad = 0;
    bad += shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1) != 0;
    bad += dst[0] != T(t_npes * (t_npes + 1) / 2);
    bad += shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 1) != 0 || dst[0] != T(t_npes);
    bad += shmem_fcollect(SHMEM_TEAM_WORLD, dst, src, 1) != 0;
    for (int pe = 0; pe < t_npes; pe++)
        bad += dst[pe] != T(pe + 1);
    bad += shmem_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, 0) != 0 || dst[0] != T(1);
    bad += shmem_sum_inscan(SHMEM_TEAM_WORLD, dst, src, 1) != 0 || dst[0] != T((t_me + 1) * (t_me + 2) / 2);
    bad += shmem_sum_exscan(SHMEM_TEAM_WORLD, dst, src, 1) != 0 || dst[0] != T(t_me * (t_me + 1) / 2);
    bad += shmem_sync(SHMEM_TEAM_WORLD) != 0;
    CHECK(!bad, "collectives: %d wrong", bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

template <typename T> static void bitreduce()
{
    T *src = sym<T>(1), *dst = sym<T>(1);
    src[0] = T(T(1) << (t_me % 8));
    shmem_barrier_all();
    T want = 0;
    for (int pe = 0; pe < t_npes; pe++)
        want = T(want | T(T(1) << (pe % 8)));
    int bad = shmem_or_reduce(SHMEM_TEAM_WORLD, dst, src, 1) != 0 || dst[0] != want;
    bad += shmem_and_reduce(SHMEM_TEAM_WORLD, dst, src, 1) != 0 || dst[0] != T(t_npes == 1 ? 1 : 0);
    CHECK(!bad, "bitwise reductions: %d wrong", bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

// The complex reductions from C++ (GNU C++ takes C99 _Complex): typed names,
// as Sandia OpenSHMEM's C++ tests call them.
static void complex_reduce()
{
    auto *s = static_cast<double _Complex *>(shmem_calloc(2, sizeof(double _Complex)));
    auto *d = static_cast<double _Complex *>(shmem_calloc(2, sizeof(double _Complex)));
    __real__ s[0] = t_me, __imag__ s[0] = 1;
    shmem_barrier_all();
    int bad = shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, d, s, 2) != 0;
    bad += __real__ d[0] != t_npes * (t_npes - 1) / 2.0 || __imag__ d[0] != t_npes || __real__ d[1] != 0;
    CHECK(!bad, "complexd_sum_reduce: %g%+gi", __real__ d[0], __imag__ d[0]);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(s);
}

int main()
{
    t_init();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    rma<int>(ctx), rma<double>(ctx), rma<unsigned char>(ctx), rma<long double>(ctx);
    t_section("C++ put/get/p/g/iput/iget/nbi");
    amo<int>(ctx), amo<long>(ctx), amo<unsigned long long>(ctx), amo<unsigned int>(ctx);
    t_section("C++ atomics");
    deprecated_amo<int>(), deprecated_amo<long long>(), deprecated_amo<long>(), deprecated_amo<unsigned int>();
    deprecated_wait<int>(), deprecated_wait<long>(), deprecated_wait<long long>(), deprecated_wait<short>();
    t_section("C++ deprecated atomics and shmem_wait");
    p2p<int>(), p2p<long>(), p2p<unsigned short>(), p2p<unsigned long long>();
    t_section("C++ put_signal, waits and tests");
    coll<int>(), coll<double>(), coll<long long>();
    t_section("C++ team collectives and reductions");
    bitreduce<unsigned int>(), bitreduce<int>(), bitreduce<long long>(), bitreduce<short>();
    t_section("C++ bitwise reductions");
    complex_reduce();
    t_section("C++ complex reductions");
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return t_finish();
}
