// reg: randomized test against a reference model, >= 10^6 operations mixing
// get/put (some held across other operations), malloc/free, mmap/munmap,
// mmap MAP_FIXED at the same address with new contents, madvise(DONTNEED),
// mremap and explicit invalidation.
//
// The model keeps a generation per page, raised whenever the test changes
// what backs the page (new mapping, replaced mapping, DONTNEED, unmap, a brk
// trim it observes). The null backend's observer records the generations of
// a region's pages when it is registered; every get checks that the returned
// region's pages still have those generations (the cache never returns a
// registration for memory that changed), covers the request and has the
// access asked for. At the end: statistics balance and teardown deregisters
// everything.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <locus/reg.h>
}

namespace {

const uint64_t PG = 4096;
const size_t MMAP_THRESHOLD = 128 * 1024;

struct Model {
    std::unordered_map<uint64_t, uint64_t> gen;  // page number -> generation (absent = 0)
    uint64_t next = 1;
    std::unordered_map<uint64_t, std::vector<uint64_t>> reg;  // id -> page generations at registration
    std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> span;
    uint64_t reg_events = 0, dereg_events = 0;

    const char *why = "";
    std::unordered_map<uint64_t, const char *> last_why;  // page -> what last changed it (diagnostics)
    void bump(uint64_t a, uint64_t len)
    {
        uint64_t g = next++;
        for (uint64_t p = a / PG; p < (a + len + PG - 1) / PG; p++) {
            gen[p] = g;
            last_why[p] = why;
        }
    }
    uint64_t at(uint64_t page) const
    {
        auto it = gen.find(page);
        return it == gen.end() ? 0 : it->second;
    }
};

Model *model;

void on_event(void *, locus_reg_event_t ev, const locus_reg_t *r)
{
    uint64_t a = (uintptr_t)r->addr;
    if (ev == LOCUS_REG_EV_REGISTER) {
        std::vector<uint64_t> g;
        for (uint64_t p = a / PG; p < (a + r->length) / PG; p++) g.push_back(model->at(p));
        model->reg[r->id] = std::move(g);
        model->span[r->id] = {a, r->length};
        model->reg_events++;
    } else {
        model->reg.erase(r->id);
        model->span.erase(r->id);
        model->dereg_events++;
    }
}

// Whether glibc gave this chunk its own mapping (bit 1 of its size word): a
// large request can also be carved from free heap space, sharing pages.
bool own_mapping(const void *p) { return ((const size_t *)p)[-1] & 2; }

struct Buf {
    char *p;
    size_t n;
    bool is_mmap;  // our own mapping (else malloc)
};

}  // namespace

TEST(RegModel, RandomizedAgainstReferenceModel)
{
    const long OPS = 1000000;
    // a fixed mmap threshold makes glibc's choice predictable: chunks of at
    // least 128 KiB are mmapped (the dynamic threshold is switched off)
    mallopt(M_MMAP_THRESHOLD, (int)MMAP_THRESHOLD);
    Model m;
    model = &m;
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_NULL;
    a.max_regions = 64;       // eviction happens
    a.merge_max = 256 * 1024;  // merging happens, bounded
    a.null_event = on_event;
    locus_reg_cache_t *c;
    ASSERT_EQ(locus_reg_cache_create(&a, &c), LOCUS_OK) << locus_last_error();

    std::mt19937_64 rng(12345);
    auto rnd = [&](uint64_t n) { return (uint64_t)(rng() % n); };
    std::vector<Buf> bufs;
    bufs.reserve(256);
    std::vector<const locus_reg_t *> held;
    held.reserve(64);
    long gets = 0, checked_pages = 0, bad = 0, puts = 0;
    long n_malloc = 0, n_free = 0, n_mmap = 0, n_munmap = 0, n_fixed = 0, n_dontneed = 0,
         n_mremap = 0, n_inval = 0, trims = 0;

    auto new_buf = [&]() {
        Buf b;
        if (rnd(2)) {
            b.n = (1 + rnd(16)) * PG;
            b.p = (char *)mmap(nullptr, b.n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(b.p, MAP_FAILED);
            m.why = "mmap";
            m.bump((uintptr_t)b.p, b.n);  // a fresh mapping, maybe at a reused address
            b.is_mmap = true;
            n_mmap++;
        } else {
            b.n = rnd(4) ? 16 + rnd(16384) : MMAP_THRESHOLD + rnd(256 * 1024);
            b.p = (char *)malloc(b.n);
            ASSERT_NE(b.p, nullptr);
            m.why = "malloc (own mapping)";
            if (own_mapping(b.p))  // a fresh mapping
                m.bump((uintptr_t)b.p & ~(PG - 1), ((uintptr_t)b.p & (PG - 1)) + b.n);
            b.is_mmap = false;
            n_malloc++;
        }
        memset(b.p, (int)rnd(256), b.n < PG ? b.n : PG);  // contents are not what is checked: keep page faults few
        bufs.push_back(b);
    };
    auto drop_buf = [&](size_t i) {
        Buf b = bufs[i];
        bufs[i] = bufs.back();
        bufs.pop_back();
        if (b.is_mmap) {
            // the pages change when unmapped; record before the call returns
            m.why = "munmap";
            m.bump((uintptr_t)b.p, b.n);
            ASSERT_EQ(munmap(b.p, b.n), 0);
            n_munmap++;
        } else {
            uintptr_t b0 = (uintptr_t)sbrk(0);
            m.why = "free (own mapping)";
            if (own_mapping(b.p))
                m.bump((uintptr_t)b.p & ~(PG - 1), ((uintptr_t)b.p & (PG - 1)) + b.n);
            free(b.p);
            m.why = "brk trim";
            uintptr_t b1 = (uintptr_t)sbrk(0);
            if (b1 < b0) {  // glibc trimmed the heap top
                m.bump(b1, b0 - b1);
                trims++;
            }
            n_free++;
        }
    };

    for (int i = 0; i < 64; i++) new_buf();
    for (long op = 0; op < OPS; op++) {
        uint64_t k = rnd(1000);
        if (k < 700 && !bufs.empty()) {  // get (+ put now or later)
            Buf &b = bufs[rnd(bufs.size())];
            uint64_t off = rnd(b.n), len = 1 + rnd(b.n - off);
            unsigned acc = (unsigned)rnd(16);
            const locus_reg_t *r;
            locus_status_t st = locus_reg_get(c, b.p + off, len, acc, &r);
            gets++;
            if (st == LOCUS_ERR_NO_SPACE) continue;  // everything held: allowed
            ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
            uint64_t ra = (uintptr_t)r->addr, want = (uintptr_t)b.p + off;
            if (ra > want || ra + r->length < want + len || (acc & ~r->access)) bad++;
            auto it = m.reg.find(r->id);
            if (it == m.reg.end()) {
                bad++;  // a registration the backend does not hold
            } else {
                const std::vector<uint64_t> &g = it->second;
                for (size_t p = 0; p < g.size(); p++, checked_pages++)
                    if (m.at(ra / PG + p) != g[p]) {
                        bad++;
                        ADD_FAILURE() << "stale registration id " << r->id << " [" << (void *)ra << ", +"
                                      << r->length << ") page " << p << " at op " << op << ", page changed by "
                                      << m.last_why[ra / PG + p] << "; buffer " << (void *)b.p << " +" << b.n
                                      << (b.is_mmap ? " mmap" : " malloc");
                        break;
                    }
            }
            if (held.size() < 48 && rnd(8) == 0) {
                held.push_back(r);
            } else {
                locus_reg_put(c, r);
                puts++;
            }
            if (bad > 5) break;
        } else if (k < 760 && !held.empty()) {  // put a held one
            size_t i = rnd(held.size());
            locus_reg_put(c, held[i]);
            held[i] = held.back();
            held.pop_back();
            puts++;
        } else if (k < 840) {  // new buffer
            if (bufs.size() < 200) new_buf();
        } else if (k < 920 && bufs.size() > 8) {  // free / munmap
            drop_buf(rnd(bufs.size()));
        } else if (k < 950 && !bufs.empty()) {  // same address, new contents
            Buf &b = bufs[rnd(bufs.size())];
            if (b.is_mmap) {
                m.why = "MAP_FIXED";
                m.bump((uintptr_t)b.p, b.n);
                void *q = mmap(b.p, b.n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
                ASSERT_EQ(q, (void *)b.p);
                memset(b.p, (int)rnd(256), b.n < PG ? b.n : PG);  // contents are not what is checked: keep page faults few
                n_fixed++;
            } else {  // free + malloc again (often the same address)
                Buf nb = b;
                size_t i = &b - &bufs[0];
                drop_buf(i);
                char *q = (char *)malloc(nb.n);
                ASSERT_NE(q, nullptr);
                m.why = "re-malloc (own mapping)";
                if (own_mapping(q))
                    m.bump((uintptr_t)q & ~(PG - 1), ((uintptr_t)q & (PG - 1)) + nb.n);
                memset(q, 7, nb.n < PG ? nb.n : PG);
                bufs.push_back({q, nb.n, false});
                n_malloc++;
            }
        } else if (k < 980 && !bufs.empty()) {  // madvise DONTNEED part of a mapping
            Buf &b = bufs[rnd(bufs.size())];
            if (!b.is_mmap) continue;
            uint64_t p0 = rnd(b.n / PG), np = 1 + rnd(b.n / PG - p0);
            m.why = "DONTNEED";
            m.bump((uintptr_t)b.p + p0 * PG, np * PG);
            ASSERT_EQ(madvise(b.p + p0 * PG, np * PG, MADV_DONTNEED), 0);
            n_dontneed++;
        } else if (k < 990 && !bufs.empty()) {  // mremap: grow (may move) or shrink
            Buf &b = bufs[rnd(bufs.size())];
            if (!b.is_mmap) continue;
            size_t nn = (1 + rnd(16)) * PG;
            // pages stay where mremap keeps them in place; a moved mapping
            // leaves the old range, a shrunk one its tail, a grown one adds new pages
            uint64_t lo = nn < b.n ? nn : b.n, hi = nn < b.n ? b.n : nn;
            void *q = mremap(b.p, b.n, nn, MREMAP_MAYMOVE);
            ASSERT_NE(q, MAP_FAILED);
            if (q == b.p) {
                m.why = "mremap in place";
                m.bump((uintptr_t)b.p + lo, hi - lo);
            } else {
                m.why = "mremap move";
                m.bump((uintptr_t)b.p, b.n);
                m.bump((uintptr_t)q, nn);
            }
            b.p = (char *)q;
            b.n = nn;
            n_mremap++;
        } else if (!bufs.empty()) {  // explicit invalidation of a range
            Buf &b = bufs[rnd(bufs.size())];
            ASSERT_EQ(locus_reg_invalidate(c, b.p, b.n), LOCUS_OK);
            n_inval++;
        }
    }
    for (auto r : held) {
        locus_reg_put(c, r);
        puts++;
    }
    EXPECT_EQ(bad, 0);

    locus_reg_stats_t s;
    ASSERT_EQ(locus_reg_stats(c, &s), LOCUS_OK);
    EXPECT_EQ(s.gets, (uint64_t)gets);
    EXPECT_EQ(s.gets, s.hits + s.misses + s.failed);
    EXPECT_EQ(s.registrations, s.misses);  // every miss registers once (no statics here)
    EXPECT_EQ(s.registrations - s.deregistrations, s.regions);
    EXPECT_EQ(s.registrations, m.reg_events);
    EXPECT_EQ(s.deregistrations, m.dereg_events);
    EXPECT_EQ(m.reg.size(), s.regions);
    EXPECT_LE(s.regions, 64u);
    EXPECT_GT(s.hits, 0u);
    EXPECT_GT(s.merges, 0u);
    EXPECT_GT(s.evictions, 0u);
    EXPECT_GT(s.invalidations, 0u);
    printf("ops %ld: gets %ld (hits %llu misses %llu failed %llu), pages checked %ld, merges %llu, "
           "evictions %llu, invalidations %llu; malloc %ld free %ld (brk trims seen %ld) mmap %ld munmap %ld "
           "MAP_FIXED %ld DONTNEED %ld mremap %ld invalidate %ld\n",
           OPS, gets, (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.failed,
           checked_pages, (unsigned long long)s.merges, (unsigned long long)s.evictions,
           (unsigned long long)s.invalidations, n_malloc, n_free, trims, n_mmap, n_munmap, n_fixed, n_dontneed,
           n_mremap, n_inval);
    locus_reg_cache_destroy(c);
    EXPECT_TRUE(m.reg.empty()) << m.reg.size() << " registrations left after teardown";
    EXPECT_EQ(m.reg_events, m.dereg_events);
    for (auto &b : bufs) {
        if (b.is_mmap) munmap(b.p, b.n);
        else free(b.p);
    }
}
