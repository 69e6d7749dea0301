// reg: API behaviour, bad input, merging, LRU, invalidation paths, pin
// backend, static mode, statistics, concurrent hits vs invalidation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" {
#include <locus/heap.h>
#include <locus/reg.h>
}

namespace {

const size_t PG = 4096;

struct Live {
    std::map<uint64_t, std::pair<uintptr_t, size_t>> regs;
    uint64_t reg_events = 0, dereg_events = 0;
};

void on_event(void *arg, locus_reg_event_t ev, const locus_reg_t *r)
{
    Live *l = static_cast<Live *>(arg);
    if (ev == LOCUS_REG_EV_REGISTER) {
        l->regs[r->id] = {(uintptr_t)r->addr, r->length};
        l->reg_events++;
    } else {
        l->regs.erase(r->id);
        l->dereg_events++;
    }
}

struct Cache {
    locus_reg_cache_t *c = nullptr;
    Live live;
    explicit Cache(uint64_t max_regions = 0, uint64_t merge_max = 64 << 20, uint64_t max_bytes = 0)
    {
        locus_reg_attr_t a;
        locus_reg_attr_init(&a);
        a.backend = LOCUS_REG_BACKEND_NULL;
        a.max_regions = max_regions;
        a.max_bytes = max_bytes;
        a.merge_max = merge_max;
        a.null_event = on_event;
        a.null_event_arg = &live;
        EXPECT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK) << locus_last_error();
    }
    ~Cache() { locus_reg_cache_destroy(c); }
    locus_reg_stats_t stats()
    {
        locus_reg_stats_t s;
        EXPECT_EQ(locus_reg_stats(c, &s), LOCUS_OK);
        return s;
    }
};

void *map(size_t n, void *at = nullptr, int extra = 0)
{
    void *p = mmap(at, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    memset(p, 1, n);
    return p;
}

}  // namespace

TEST(Reg, BadInput)
{
    Cache k;
    const locus_reg_t *r;
    char buf[64];
    EXPECT_EQ(locus_reg_get(k.c, nullptr, 10, 0, &r), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("NULL"), std::string::npos);
    EXPECT_EQ(locus_reg_get(k.c, buf, 0, 0, &r), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("length 0"), std::string::npos);
    EXPECT_EQ(locus_reg_get(k.c, (void *)(UINTPTR_MAX - 100), 200, 0, &r), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("overflows"), std::string::npos);
    EXPECT_EQ(locus_reg_get(k.c, buf, 8, 0x30, &r), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("0x30"), std::string::npos);
    EXPECT_EQ(locus_reg_static(k.c, buf, 0, 0), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_reg_invalidate(k.c, buf, 0), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_reg_get(nullptr, buf, 8, 0, &r), LOCUS_ERR_INVALID);
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.failed, 4u);  // the four bad gets (static/invalidate are not gets)
    EXPECT_EQ(s.registrations, 0u);
    EXPECT_EQ(s.gets, s.hits + s.misses + s.failed);

    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = (locus_reg_backend_t)7;
    locus_reg_cache_t *c = nullptr;
    EXPECT_EQ(locus_reg_cache_create(&a, &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("backend 7"), std::string::npos);
    EXPECT_EQ(c, nullptr);
}

TEST(Reg, NoDeviceIsReported)
{
    if (!access("/sys/class/infiniband", F_OK))
        GTEST_SKIP() << "this machine has an RDMA device";
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_VERBS;
    locus_reg_cache_t *c = nullptr;
    EXPECT_EQ(locus_reg_cache_create(&a, &c), LOCUS_ERR_NO_DEVICE);
    EXPECT_NE(std::string(locus_last_error()).find("no RDMA device"), std::string::npos) << locus_last_error();
    a.device = "mlx5_7";
    EXPECT_EQ(locus_reg_cache_create(&a, &c), LOCUS_ERR_NO_DEVICE);
    EXPECT_NE(std::string(locus_last_error()).find("mlx5_7"), std::string::npos);
    // auto falls back to pin and says so
    a.backend = LOCUS_REG_BACKEND_AUTO;
    a.device = nullptr;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK);
    EXPECT_NE(std::string(locus_reg_notes(c)).find("pin backend"), std::string::npos);
    locus_reg_stats_t s;
    locus_reg_stats(c, &s);
    EXPECT_STREQ(s.backend, "pin");
    locus_reg_cache_destroy(c);
}

TEST(Reg, EnvOverridesAndBadValues)
{
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    setenv("LOCUS_REG_BACKEND", "null", 1);
    setenv("LOCUS_REG_MAX_REGIONS", "77", 1);
    setenv("LOCUS_REG_MERGE_MAX", "1M", 1);
    ASSERT_EQ(locus_reg_attr_from_env(&a), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(a.backend, LOCUS_REG_BACKEND_NULL);
    EXPECT_EQ(a.max_regions, 77u);
    EXPECT_EQ(a.merge_max, 1u << 20);
    setenv("LOCUS_REG_BACKEND", "ib", 1);
    locus_reg_attr_t b = a;
    EXPECT_EQ(locus_reg_attr_from_env(&b), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_REG_BACKEND"), std::string::npos);
    EXPECT_EQ(memcmp(&a, &b, sizeof a), 0);
    unsetenv("LOCUS_REG_BACKEND");
    setenv("LOCUS_REG_RESERVE", "95", 1);
    EXPECT_EQ(locus_reg_attr_from_env(&b), LOCUS_ERR_RANGE);
    unsetenv("LOCUS_REG_RESERVE");
    unsetenv("LOCUS_REG_MAX_REGIONS");
    unsetenv("LOCUS_REG_MERGE_MAX");
}

TEST(Reg, HitAfterMissAndStats)
{
    Cache k;
    char *p = (char *)map(16 * PG);
    const locus_reg_t *r1, *r2, *r3;
    ASSERT_EQ(locus_reg_get(k.c, p + 100, 5000, LOCUS_REG_REMOTE_READ, &r1), LOCUS_OK);
    EXPECT_EQ((uintptr_t)r1->addr, (uintptr_t)p);
    EXPECT_EQ(r1->length, 2 * PG);
    ASSERT_EQ(locus_reg_get(k.c, p + 200, 10, LOCUS_REG_REMOTE_READ, &r2), LOCUS_OK);
    EXPECT_EQ(r1, r2);
    // more access than cached: a new registration with the union
    ASSERT_EQ(locus_reg_get(k.c, p + 200, 10, LOCUS_REG_REMOTE_WRITE, &r3), LOCUS_OK);
    EXPECT_NE(r3->id, r1->id);
    EXPECT_EQ(r3->access, (unsigned)(LOCUS_REG_REMOTE_WRITE | LOCUS_REG_REMOTE_READ));
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.hits, 1u);
    EXPECT_EQ(s.misses, 2u);
    EXPECT_EQ(s.registrations, 2u);
    EXPECT_EQ(s.merges, 1u);
    EXPECT_EQ(s.regions, 2u);  // the old one is still held
    locus_reg_put(k.c, r1);
    locus_reg_put(k.c, r2);    // last holder of the detached region: deregistered
    s = k.stats();
    EXPECT_EQ(s.regions, 1u);
    EXPECT_EQ(s.deregistrations, 1u);
    EXPECT_EQ(k.live.regs.size(), 1u);
    locus_reg_put(k.c, r3);
    s = k.stats();
    EXPECT_EQ(s.regions, 1u);  // unused but cached
    EXPECT_EQ(s.cached, 1u);
    munmap(p, 16 * PG);
}

TEST(Reg, MergeAdjacentWithCap)
{
    Cache k(0, 4 * PG);
    char *p = (char *)map(16 * PG);
    const locus_reg_t *r;
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(locus_reg_get(k.c, p + i * PG, PG, 0, &r), LOCUS_OK);
        locus_reg_put(k.c, r);
    }
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.cached, 1u);
    EXPECT_EQ(s.merges, 3u);
    ASSERT_EQ(locus_reg_get(k.c, p + 3 * PG, 10, 0, &r), LOCUS_OK);
    EXPECT_EQ(r->addr, (void *)p);
    EXPECT_EQ(r->length, 4 * PG);
    locus_reg_put(k.c, r);
    // a fifth page would exceed merge_max: registered alone, the neighbour stays
    ASSERT_EQ(locus_reg_get(k.c, p + 4 * PG, PG, 0, &r), LOCUS_OK);
    EXPECT_EQ(r->length, PG);
    locus_reg_put(k.c, r);
    s = k.stats();
    EXPECT_EQ(s.cached, 2u);
    EXPECT_EQ(s.merges, 3u);
    // overlapping both without room to merge: both leave the index
    ASSERT_EQ(locus_reg_get(k.c, p + 3 * PG, 2 * PG, 0, &r), LOCUS_OK);
    EXPECT_EQ(r->length, 2 * PG);
    locus_reg_put(k.c, r);
    s = k.stats();
    EXPECT_EQ(s.replaced, 2u);
    EXPECT_EQ(s.cached, 1u);
    EXPECT_EQ(s.regions, 1u);
    munmap(p, 16 * PG);
}

TEST(Reg, LruEviction)
{
    Cache k(4);
    char *p = (char *)map(64 * PG);
    const locus_reg_t *r;
    auto get = [&](int i) {
        EXPECT_EQ(locus_reg_get(k.c, p + 2 * i * PG, PG, 0, &r), LOCUS_OK);
        uint64_t id = r->id;
        locus_reg_put(k.c, r);
        return id;
    };
    uint64_t a = get(0), b = get(1);
    get(2);
    uint64_t d = get(3);
    EXPECT_EQ(get(0), a);  // hit: A is now as recent as D
    get(4);                // over capacity: evict to 4 - 1 (slack) - 1 (new) = 2 regions
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.evictions, 2u);
    EXPECT_EQ(s.regions, 3u);
    EXPECT_EQ(get(0), a);
    EXPECT_EQ(get(3), d);
    EXPECT_NE(get(1), b);  // B was the least recently used
    // capacity holds while everything is in use
    std::vector<const locus_reg_t *> held;
    locus_status_t st = LOCUS_OK;
    for (int i = 10; i < 20 && st == LOCUS_OK; i++) {
        st = locus_reg_get(k.c, p + 2 * i * PG, PG, 0, &r);
        if (st == LOCUS_OK) held.push_back(r);
    }
    EXPECT_EQ(st, LOCUS_ERR_NO_SPACE);
    EXPECT_NE(std::string(locus_last_error()).find("full"), std::string::npos);
    EXPECT_EQ(held.size(), 4u);
    for (auto h : held) locus_reg_put(k.c, h);
    s = k.stats();
    EXPECT_LE(s.regions, 4u);
    munmap(p, 64 * PG);
}

TEST(Reg, ByteCapacity)
{
    Cache k(0, 0, 8 * PG);
    char *p = (char *)map(32 * PG);
    const locus_reg_t *r;
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(locus_reg_get(k.c, p + i * 4 * PG, 2 * PG, 0, &r), LOCUS_OK);
        locus_reg_put(k.c, r);
        EXPECT_LE(k.stats().bytes, 8 * PG);
    }
    EXPECT_GT(k.stats().evictions, 0u);
    EXPECT_EQ(locus_reg_get(k.c, p, 9 * PG, 0, &r), LOCUS_ERR_NO_SPACE);
    munmap(p, 32 * PG);
}

// Each way memory changes under a registration: the next get registers anew.
static void expect_fresh(Cache &k, void *p, size_t n, uint64_t old_id, const char *what)
{
    const locus_reg_t *r;
    ASSERT_EQ(locus_reg_get(k.c, p, n, 0, &r), LOCUS_OK) << what;
    EXPECT_NE(r->id, old_id) << what;
    locus_reg_put(k.c, r);
}

static uint64_t reg_id(Cache &k, void *p, size_t n)
{
    const locus_reg_t *r;
    EXPECT_EQ(locus_reg_get(k.c, p, n, 0, &r), LOCUS_OK);
    uint64_t id = r->id;
    locus_reg_put(k.c, r);
    return id;
}

// This test links liblocus_hooks (LOCUS_TEST_LIBS_reg): every cache must
// have subscribed, or the invalidation tests below test nothing.
TEST(Reg, HooksSubscribed)
{
    Cache k;
    EXPECT_TRUE(k.stats().hooks) << locus_reg_notes(k.c);
    EXPECT_EQ(std::string(locus_reg_notes(k.c)).find("relies on locus_reg_invalidate"), std::string::npos)
        << locus_reg_notes(k.c);
    // destroy gives the subscriber slot back (the hooks have 16): 40 caches in turn
    for (int i = 0; i < 40; i++) {
        Cache t;
        ASSERT_TRUE(t.stats().hooks) << "cache " << i << ": " << locus_reg_notes(t.c);
    }
}

TEST(Reg, InvalidationPaths)
{
    Cache k;
    size_t n = 8 * PG;
    // munmap + mmap at the same address
    char *p = (char *)map(n);
    uint64_t id = reg_id(k, p, n);
    munmap(p, n);
    char *q = (char *)map(n, p, MAP_FIXED_NOREPLACE);
    ASSERT_EQ(q, p);
    expect_fresh(k, p, n, id, "munmap");
    // mmap MAP_FIXED over a live mapping
    id = reg_id(k, p, n);
    map(n, p, MAP_FIXED);
    expect_fresh(k, p, n, id, "MAP_FIXED");
    // madvise DONTNEED of one page
    id = reg_id(k, p, n);
    ASSERT_EQ(madvise(p + PG, PG, MADV_DONTNEED), 0);
    expect_fresh(k, p, n, id, "MADV_DONTNEED");
    // MADV_FREE
    id = reg_id(k, p, n);
    ASSERT_EQ(madvise(p, PG, MADV_FREE), 0);
    expect_fresh(k, p, n, id, "MADV_FREE");
    // a harmless advice keeps the registration
    id = reg_id(k, p, n);
    ASSERT_EQ(madvise(p, n, MADV_WILLNEED), 0);
    EXPECT_EQ(reg_id(k, p, n), id);
    // mremap shrink
    id = reg_id(k, p, n);
    ASSERT_EQ(mremap(p, n, n / 2, 0), p);
    expect_fresh(k, p, n / 2, id, "mremap shrink");
    munmap(p, n / 2);
    // SysV shmdt
    int shm = shmget(IPC_PRIVATE, n, IPC_CREAT | 0600);
    ASSERT_GE(shm, 0);
    char *s = (char *)shmat(shm, nullptr, 0);
    ASSERT_NE(s, (char *)-1);
    memset(s, 2, n);
    id = reg_id(k, s, n);
    ASSERT_EQ(shmdt(s), 0);
    char *s2 = (char *)map(n, s, MAP_FIXED_NOREPLACE);
    ASSERT_EQ(s2, s);
    expect_fresh(k, s, n, id, "shmdt");
    munmap(s, n);
    shmctl(shm, IPC_RMID, nullptr);
    // explicit invalidation
    p = (char *)map(n);
    id = reg_id(k, p, n);
    ASSERT_EQ(locus_reg_invalidate(k.c, p + 3 * PG, 1), LOCUS_OK);
    expect_fresh(k, p, n, id, "locus_reg_invalidate");
    id = reg_id(k, p, n);
    ASSERT_EQ(locus_reg_invalidate(nullptr, p, n), LOCUS_OK);
    expect_fresh(k, p, n, id, "locus_reg_invalidate(all caches)");
    munmap(p, n);
    locus_reg_stats_t st = k.stats();
    EXPECT_GE(st.invalidations, 8u);
}

TEST(Reg, FreeOfMmappedChunkInvalidates)
{
    Cache k;
    size_t n = 8 << 20;  // mmapped unless glibc's dynamic threshold grew past it (checked below)
    for (int round = 0; round < 3; round++) {
        char *p = (char *)malloc(n);
        ASSERT_NE(p, nullptr);
        memset(p, 3, n);
        uint64_t id = reg_id(k, p, n);
        // was it mmapped? (bit 1 of glibc's size word)
        size_t hdr;
        memcpy(&hdr, (const char *)(uintptr_t)((uintptr_t)p - sizeof hdr), sizeof hdr);
        bool mm = hdr & 2;
        free(p);
        char *q = (char *)malloc(n);
        memset(q, 4, n);
        const locus_reg_t *r;
        ASSERT_EQ(locus_reg_get(k.c, q, n, 0, &r), LOCUS_OK);
        if (mm) {
            EXPECT_NE(r->id, id) << "free of an mmapped chunk must invalidate";
        }
        locus_reg_put(k.c, r);
        free(q);
    }
    EXPECT_GT(k.stats().invalidations, 0u);
}

TEST(Reg, SmallChunkReuseKeepsValidRegistration)
{
    Cache k;
    // small chunks stay mapped: a registration of their page stays correct
    std::vector<char *> keep;
    for (int i = 0; i < 64; i++) keep.push_back((char *)malloc(256));
    char *p = (char *)malloc(256);
    memset(p, 1, 256);
    const locus_reg_t *r;
    ASSERT_EQ(locus_reg_get(k.c, p, 256, 0, &r), LOCUS_OK);
    locus_reg_put(k.c, r);
    free(p);
    char *q = (char *)malloc(256);
    ASSERT_EQ(locus_reg_get(k.c, q, 256, 0, &r), LOCUS_OK);
    locus_reg_put(k.c, r);
    free(q);
    for (auto x : keep) free(x);
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.gets, 2u);
}

TEST(Reg, BrkShrinkInvalidates)
{
    Cache k;
    // the cache's own allocations first, so malloc does not move the break below
    char *w = (char *)map(PG);
    reg_id(k, w, PG);
    char *b = (char *)sbrk(0);
    char *grown = (char *)sbrk(4 * PG);
    ASSERT_NE(grown, (char *)-1);
    ASSERT_EQ(grown, b);
    memset(grown, 5, 4 * PG);
    char *start = (char *)(((uintptr_t)grown + PG - 1) & ~(PG - 1));
    uint64_t id = reg_id(k, start, PG);
    ASSERT_EQ((char *)sbrk(0), grown + 4 * PG) << "malloc moved the break: the shrink would not be ours";
    ASSERT_NE(sbrk(-(intptr_t)(4 * PG)), (void *)-1);
    ASSERT_EQ((char *)sbrk(4 * PG), grown);
    memset(grown, 6, 4 * PG);
    expect_fresh(k, start, PG, id, "sbrk shrink");
    if ((char *)sbrk(0) == grown + 4 * PG)  // give back only what is still ours
        sbrk(-(intptr_t)(4 * PG));
    munmap(w, PG);
}

static long vm_lck_kb()
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmLck:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

TEST(Reg, PinBackendLocksAndUnlocks)
{
    long before = vm_lck_kb();
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_PIN;
    a.merge_max = 0;
    locus_reg_cache_t *c;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK) << locus_last_error();
    size_t n = 64 * PG;
    char *p = (char *)map(n);
    const locus_reg_t *r, *r2;
    ASSERT_EQ(locus_reg_get(c, p, n, 0, &r), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(vm_lck_kb() - before, (long)(n / 1024));
    // an overlapping registration replaces it; releasing the old must not unlock the shared pages
    ASSERT_EQ(locus_reg_get(c, p + n / 2, PG, LOCUS_REG_REMOTE_WRITE, &r2), LOCUS_OK);
    locus_reg_put(c, r);
    EXPECT_EQ(vm_lck_kb() - before, 4);
    locus_reg_put(c, r2);
    // unmapped memory cannot be registered
    munmap(p, n);
    EXPECT_EQ(locus_reg_get(c, p, n, 0, &r), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("not fully mapped"), std::string::npos);
    p = (char *)map(n, p, MAP_FIXED_NOREPLACE);
    ASSERT_EQ(locus_reg_get(c, p, n, 0, &r), LOCUS_OK);
    EXPECT_EQ(vm_lck_kb() - before, (long)(n / 1024));
    // destroy with a registration still held: nothing stays pinned
    locus_reg_cache_destroy(c);
    EXPECT_EQ(vm_lck_kb(), before);
    munmap(p, n);
}

TEST(Reg, StaticMode)
{
    Cache k;
    size_t n = 256 * PG;
    char *h = (char *)map(n);
    ASSERT_EQ(locus_reg_static(k.c, h, n, LOCUS_REG_ACCESS_ALL), LOCUS_OK);
    const locus_reg_t *r;
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(locus_reg_get(k.c, h + i * 1000, 1000, LOCUS_REG_REMOTE_WRITE, &r), LOCUS_OK);
        EXPECT_EQ(r->addr, (void *)h);
        EXPECT_EQ(r->length, n);
        locus_reg_put(k.c, r);
    }
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.registrations, 1u);
    EXPECT_EQ(s.static_regions, 1u);
    EXPECT_EQ(s.static_bytes, n);
    EXPECT_EQ(s.hits, 100u);
    // beyond the static region: a dynamic registration
    char *other = (char *)map(PG);
    ASSERT_EQ(locus_reg_get(k.c, other, 10, 0, &r), LOCUS_OK);
    EXPECT_NE(r->length, n);
    locus_reg_put(k.c, r);
    munmap(other, PG);
    // unmapping the heap drops the static region
    munmap(h, n);
    s = k.stats();
    EXPECT_EQ(s.static_regions, 0u);
    EXPECT_EQ(s.regions, 0u);  // both unmapped: deregistered
    EXPECT_EQ(s.deregistrations, 2u);
}

TEST(Reg, StaticHeap)
{
    locus_heap_attr_t ha;
    locus_heap_attr_init(&ha);
    ha.size = 8 << 20;
    ha.pages = LOCUS_PAGES_4K;
    ha.threads = 1;
    ha.verify = LOCUS_VERIFY_NONE;
    locus_heap_t *heap;
    ASSERT_EQ(locus_heap_create(&ha, nullptr, &heap), LOCUS_OK) << locus_last_error();
    Cache k;
    ASSERT_EQ(locus_reg_static_heap(k.c, heap, LOCUS_REG_ACCESS_ALL), LOCUS_OK);
    const locus_reg_t *r;
    char *base = (char *)locus_heap_base(heap);
    ASSERT_EQ(locus_reg_get(k.c, base + 12345, 100000, LOCUS_REG_REMOTE_READ, &r), LOCUS_OK);
    EXPECT_EQ(r->addr, (void *)base);
    EXPECT_EQ(r->length, locus_heap_size(heap));
    locus_reg_put(k.c, r);
    EXPECT_EQ(k.stats().registrations, 1u);
    EXPECT_EQ(locus_reg_static_heap(k.c, nullptr, 0), LOCUS_ERR_INVALID);
    locus_heap_destroy(heap);
    EXPECT_EQ(k.stats().static_regions, 0u);
}

TEST(Reg, TeardownDeregistersEverything)
{
    Live live;
    {
        Cache k;
        char *p = (char *)map(64 * PG);
        const locus_reg_t *r;
        for (int i = 0; i < 16; i++) {
            ASSERT_EQ(locus_reg_get(k.c, p + 4 * i * PG, PG, 0, &r), LOCUS_OK);
            if (i % 2) locus_reg_put(k.c, r);  // half stay held
        }
        ASSERT_EQ(locus_reg_static(k.c, p + 40 * PG, PG, 0), LOCUS_OK);
        EXPECT_FALSE(k.live.regs.empty());
        locus_reg_cache_destroy(k.c);
        k.c = nullptr;
        EXPECT_TRUE(k.live.regs.empty());
        EXPECT_EQ(k.live.reg_events, k.live.dereg_events);
        munmap(p, 64 * PG);
    }
}

// Hits from two threads while a third keeps unmapping and remapping the
// buffers with new contents: a returned registration is never older than the
// mapping it covers (the null backend records the mapping generation).
TEST(Reg, ConcurrentHitsVsInvalidation)
{
    struct Gen {
        std::atomic<uint64_t> gen[8];   // raised before each remap starts
        std::atomic<uint64_t> done[8];  // raised once it returned
    };
    static Gen g;
    static std::map<uint64_t, uint64_t> reg_gen;  // id -> generation seen at registration
    static std::mutex mu;
    static char *bufs[8];
    const size_t n = 4 * PG;
    for (int i = 0; i < 8; i++) {
        bufs[i] = (char *)map(n);
        g.gen[i] = 1;
        g.done[i] = 1;
    }
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_NULL;
    a.merge_max = 0;
    a.null_event = [](void *, locus_reg_event_t ev, const locus_reg_t *r) {
        if (ev != LOCUS_REG_EV_REGISTER) return;
        for (int i = 0; i < 8; i++)
            if ((char *)r->addr == bufs[i]) {
                std::lock_guard<std::mutex> l(mu);
                reg_gen[r->id] = g.gen[i].load();
            }
    };
    locus_reg_cache_t *c;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK);
    std::atomic<bool> stop{false};
    std::atomic<long> stale{0}, gets{0};
    auto reader = [&]() {
        unsigned seed = 1;
        while (!stop.load()) {
            int i = rand_r(&seed) % 8;
            uint64_t before = g.done[i].load();
            const locus_reg_t *r;
            if (locus_reg_get(c, bufs[i], n, 0, &r) != LOCUS_OK) continue;
            uint64_t at;
            {
                std::lock_guard<std::mutex> l(mu);
                at = reg_gen.count(r->id) ? reg_gen[r->id] : 0;
            }
            // registered before the remap that had completed when the get began
            if (at < before) stale++;
            gets++;
            locus_reg_put(c, r);
        }
    };
    std::thread t1(reader), t2(reader);
    unsigned seed = 7;
    // at least 3000 remaps, and until the readers got going (a loaded machine
    // may not schedule them at once); at most ~10 s
    auto t_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (int k = 0; k < 3000 || (gets.load() < 2000 && std::chrono::steady_clock::now() < t_end); k++) {
        int i = rand_r(&seed) % 8;
        g.gen[i]++;
        void *p = mmap(bufs[i], n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        ASSERT_EQ(p, (void *)bufs[i]);
        g.done[i]++;
    }
    stop = true;
    t1.join();
    t2.join();
    EXPECT_EQ(stale.load(), 0);
    EXPECT_GT(gets.load(), 0);
    locus_reg_stats_t s;
    locus_reg_stats(c, &s);
    EXPECT_EQ(s.gets, s.hits + s.misses + s.failed);
    locus_reg_cache_destroy(c);
    for (int i = 0; i < 8; i++) munmap(bufs[i], n);
}

// Thrash: a working set within the capacity registers each buffer once; one
// beyond it follows LRU: a cyclic scan misses every time, random access hits
// about capacity / working set of the time.
TEST(Reg, Thrash)
{
    const int CAP = 64;
    Cache k(CAP, 0);
    char *p = (char *)map(2 * 200 * PG);
    auto sweep = [&](int nbuf, int rounds, bool random) {
        unsigned seed = 3;
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < nbuf; i++) {
                int b = random ? rand_r(&seed) % nbuf : i;
                const locus_reg_t *h;
                ASSERT_EQ(locus_reg_get(k.c, p + 2 * b * PG, PG, 0, &h), LOCUS_OK);
                locus_reg_put(k.c, h);
            }
    };
    sweep(CAP, 20, false);
    locus_reg_stats_t s = k.stats();
    EXPECT_EQ(s.registrations, (uint64_t)CAP);  // no re-registration
    EXPECT_EQ(s.evictions, 0u);
    sweep(CAP, 20, true);
    EXPECT_EQ(k.stats().registrations, (uint64_t)CAP);

    locus_reg_flush(k.c);
    locus_reg_stats_t s0 = k.stats();
    EXPECT_EQ(s0.regions, 0u);
    const int W = CAP * 3 / 2;
    sweep(W, 10, false);
    s = k.stats();
    EXPECT_EQ(s.registrations - s0.registrations, (uint64_t)(W * 10));  // cyclic > capacity: every get misses
    EXPECT_EQ(s.hits, s0.hits);
    EXPECT_LE(s.regions, (uint64_t)CAP);
    EXPECT_EQ(s.registrations - s.deregistrations, s.regions);
    s0 = s;
    sweep(W, 50, true);
    s = k.stats();
    double hit = (double)(s.hits - s0.hits) / (W * 50);
    printf("random over %d buffers, capacity %d: hit rate %.3f, registrations per get %.3f\n", W, CAP, hit,
           (double)(s.registrations - s0.registrations) / (W * 50));
    EXPECT_GT(hit, 0.45);  // ~ CAP / W = 0.67, less the 1/32 eviction slack
    EXPECT_LT(hit, 0.75);
    munmap(p, 2 * 200 * PG);
}

// A merge whose union cannot be registered (a neighbour's pages vanished
// behind the hooks' back, here by a raw system call) falls back to the
// request alone, and the error of a truly bad request names that request.
TEST(Reg, MergeFailureFallsBackToTheRequest)
{
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_PIN;
    locus_reg_cache_t *c;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK) << locus_last_error();
    char *p = (char *)map(3 * PG);
    const locus_reg_t *r;
    ASSERT_EQ(locus_reg_get(c, p, PG, 0, &r), LOCUS_OK);
    locus_reg_put(c, r);
    ASSERT_EQ(syscall(SYS_munmap, p, PG), 0);  // not seen by the hooks
    ASSERT_EQ(locus_reg_get(c, p + PG, PG, 0, &r), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(r->addr, (void *)(p + PG));
    EXPECT_EQ(r->length, PG);
    locus_reg_put(c, r);
    ASSERT_EQ(syscall(SYS_munmap, p + 2 * PG, PG), 0);
    EXPECT_EQ(locus_reg_get(c, p + 2 * PG, 10, 0, &r), LOCUS_ERR_INVALID);
    char want[64];
    snprintf(want, sizeof want, "%p, +4096", (void *)(p + 2 * PG));
    EXPECT_NE(std::string(locus_last_error()).find(want), std::string::npos) << locus_last_error();
    locus_reg_cache_destroy(c);
    munmap(p + PG, PG);
}
