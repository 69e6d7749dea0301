// reg: the lock-free hit path under concurrency, without the memory hooks
// (explicit locus_reg_invalidate only), so that the same test also runs
// under ThreadSanitizer (reg_threads_tsan, src/reg/module.cmake, which does
// not link liblocus_hooks): sanitizer runtimes and the hooks' munmap/free
// interposition do not mix.
//
// Four threads hit, hold across other operations, hand registrations to
// another thread for the put, and miss (a capacity of 48 regions for 64
// buffers keeps evicting), while one thread keeps invalidating buffers and
// bumping their generation. Checked: a get never returns a registration made
// before an invalidation of its buffer that had completed when the get began
// (the null backend's observer records the generation at registration);
// never a deregistered one; at the end the statistics balance, a flush
// leaves no region registered (no lost release) and teardown deregisters
// everything that was registered.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

extern "C" {
#include <locus/reg.h>
}

namespace {

const size_t PG = 4096;
const int NBUF = 64;
const int NTHR = 4;

struct World {
    char *area = nullptr;
    std::atomic<uint64_t> gen[NBUF];   // raised before each invalidation starts
    std::atomic<uint64_t> done[NBUF];  // raised once it returned
    std::mutex mu;
    std::unordered_map<uint64_t, uint64_t> reg_gen;  // id -> generation at registration
    std::unordered_map<uint64_t, bool> live;         // id -> registered now
    uint64_t regs = 0, deregs = 0;
};
World *w;

int buf_of(const locus_reg_t *r)
{
    return (int)(((char *)r->addr - w->area) / (2 * PG));
}

void on_event(void *, locus_reg_event_t ev, const locus_reg_t *r)
{
    std::lock_guard<std::mutex> l(w->mu);
    if (ev == LOCUS_REG_EV_REGISTER) {
        w->reg_gen[r->id] = w->gen[buf_of(r)].load();
        w->live[r->id] = true;
        w->regs++;
    } else {
        w->live[r->id] = false;
        w->deregs++;
    }
}

}  // namespace

TEST(RegThreads, HitsHandoffsEvictionVsInvalidation)
{
    World world;
    w = &world;
    w->area = (char *)mmap(nullptr, 2 * NBUF * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(w->area, MAP_FAILED);
    for (int i = 0; i < NBUF; i++) {
        w->gen[i] = 1;
        w->done[i] = 1;
    }
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_NULL;
    a.merge_max = 0;
    a.max_regions = 48;
    a.null_event = on_event;
    locus_reg_cache_t *c;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK);

    std::atomic<bool> stop{false};
    std::atomic<long> stale{0}, dead{0}, gets{0}, fails{0};
    // one mailbox per thread: a registration handed to the next thread for its put
    std::atomic<const locus_reg_t *> box[NTHR];
    for (auto &b : box) b = nullptr;

    auto check = [&](const locus_reg_t *r, int i, uint64_t before) {
        std::lock_guard<std::mutex> l(w->mu);
        auto g = w->reg_gen.find(r->id);
        if (g == w->reg_gen.end() || g->second < before) stale++;
        if (!w->live[r->id]) dead++;
        if (buf_of(r) != i) stale++;
    };
    auto worker = [&](int t) {
        uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
        std::vector<const locus_reg_t *> held;
        while (!stop.load(std::memory_order_relaxed)) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            int i = (int)(x % NBUF);
            uint64_t before = w->done[i].load();
            const locus_reg_t *r;
            if (locus_reg_get(c, w->area + 2 * i * PG + (x >> 40) % PG, 1 + (x >> 20) % 512, 0, &r) != LOCUS_OK) {
                fails++;  // NO_SPACE when every region is held: allowed
                continue;
            }
            gets++;
            check(r, i, before);
            switch ((x >> 32) % 8) {
            case 0:  // hold it across a few operations
                held.push_back(r);
                if (held.size() > 4) {
                    locus_reg_put(c, held.front());
                    held.erase(held.begin());
                }
                break;
            case 1: {  // hand it to the next thread, which puts it
                const locus_reg_t *old = box[(t + 1) % NTHR].exchange(r);
                if (old) locus_reg_put(c, old);
                break;
            }
            default:
                locus_reg_put(c, r);
            }
            if (const locus_reg_t *m = box[t].exchange(nullptr)) locus_reg_put(c, m);
        }
        for (auto *r : held) locus_reg_put(c, r);
    };
    std::vector<std::thread> th;
    for (int t = 0; t < NTHR; t++) th.emplace_back(worker, t);
    uint64_t x = 12345;
    auto t_end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int k = 0; k < 20000 || (gets.load() < 100000 && std::chrono::steady_clock::now() < t_end); k++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        int i = (int)(x % NBUF);
        w->gen[i]++;
        ASSERT_EQ(locus_reg_invalidate(c, w->area + 2 * i * PG, PG), LOCUS_OK);
        w->done[i]++;
        if (k % 64 == 0) std::this_thread::yield();
    }
    stop = true;
    for (auto &t : th) t.join();
    for (auto &b : box)
        if (const locus_reg_t *m = b.exchange(nullptr)) locus_reg_put(c, m);

    EXPECT_EQ(stale.load(), 0);
    EXPECT_EQ(dead.load(), 0);
    EXPECT_GT(gets.load(), 0);
    locus_reg_stats_t s;
    ASSERT_EQ(locus_reg_stats(c, &s), LOCUS_OK);
    EXPECT_EQ(s.gets, s.hits + s.misses + s.failed);
    EXPECT_EQ(s.registrations - s.deregistrations, s.regions);
    EXPECT_LE(s.regions, 48u);
    // nothing is held any more: every region can go (a lost release would stay)
    ASSERT_EQ(locus_reg_flush(c), LOCUS_OK);
    ASSERT_EQ(locus_reg_invalidate(c, w->area, 2 * NBUF * PG), LOCUS_OK);
    ASSERT_EQ(locus_reg_stats(c, &s), LOCUS_OK);
    EXPECT_EQ(s.regions, 0u);
    EXPECT_EQ(s.registrations, s.deregistrations);
    printf("gets %ld (hits %llu, misses %llu, failed %ld), evictions %llu, invalidations %llu\n", gets.load(),
           (unsigned long long)s.hits, (unsigned long long)s.misses, fails.load(),
           (unsigned long long)s.evictions, (unsigned long long)s.invalidations);
    locus_reg_cache_destroy(c);
    EXPECT_EQ(w->regs, w->deregs);
    munmap(w->area, 2 * NBUF * PG);
}
