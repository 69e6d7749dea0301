/* The symmetric allocator. Its bookkeeping lives in private memory, never
 * in the heap, and depends only on the sequence of calls: every PE making
 * the same calls gets the same offsets, which is what makes a block
 * symmetric. First fit over free ranges sorted by offset (coalesced at
 * free); blocks are multiples of 64 bytes at 64-byte (or larger requested)
 * alignment, so two blocks never share a cache line. */
#include "shmem/shmem_internal.h"

#include <stdlib.h>

#define GRAIN 64u

typedef struct range {
    uint64_t off, len;
} range_t;

typedef struct slotent {
    uint64_t off, len; /* off UINT64_MAX: empty; len 0 and off set: deleted */
} slotent_t;

struct lshm_alloc {
    uint64_t start, end;
    range_t *free;      /* sorted by off, never adjacent (coalesced) */
    size_t nfree, capfree;
    slotent_t *tab;     /* allocated blocks: off -> len (open addressing) */
    size_t cap, used, live;
    uint64_t in_use;
};

static uint64_t up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }
static size_t hash(uint64_t off, size_t cap) { return (size_t)((off / GRAIN) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static bool tab_grow(lshm_alloc_t *a)
{
    size_t ncap = a->cap ? a->cap * 2 : 256;
    slotent_t *n = malloc(ncap * sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < ncap; i++)
        n[i].off = UINT64_MAX;
    for (size_t i = 0; i < a->cap; i++)
        if (a->tab[i].off != UINT64_MAX && a->tab[i].len) {
            size_t h = hash(a->tab[i].off, ncap);
            while (n[h].off != UINT64_MAX)
                h = (h + 1) & (ncap - 1);
            n[h] = a->tab[i];
        }
    free(a->tab);
    a->tab = n;
    a->cap = ncap;
    a->used = a->live;
    return true;
}

static slotent_t *tab_find(const lshm_alloc_t *a, uint64_t off)
{
    if (!a->cap)
        return NULL;
    for (size_t h = hash(off, a->cap);; h = (h + 1) & (a->cap - 1)) {
        if (a->tab[h].off == UINT64_MAX)
            return NULL;
        if (a->tab[h].off == off && a->tab[h].len)
            return &a->tab[h];
    }
}

static bool tab_put(lshm_alloc_t *a, uint64_t off, uint64_t len)
{
    if ((a->used + 1) * 2 > a->cap && !tab_grow(a))
        return false;
    size_t h = hash(off, a->cap);
    while (a->tab[h].off != UINT64_MAX && a->tab[h].len)
        h = (h + 1) & (a->cap - 1);
    if (a->tab[h].off == UINT64_MAX)
        a->used++;
    a->tab[h].off = off;
    a->tab[h].len = len;
    a->live++;
    return true;
}

static bool free_insert_at(lshm_alloc_t *a, size_t i, uint64_t off, uint64_t len)
{
    if (a->nfree == a->capfree) {
        size_t nc = a->capfree ? a->capfree * 2 : 64;
        range_t *n = realloc(a->free, nc * sizeof *n);
        if (!n)
            return false;
        a->free = n;
        a->capfree = nc;
    }
    memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof *a->free);
    a->free[i] = (range_t){off, len};
    a->nfree++;
    return true;
}

static void free_remove_at(lshm_alloc_t *a, size_t i)
{
    memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
    a->nfree--;
}

/* First index whose range starts at or after off. */
static size_t free_lower(const lshm_alloc_t *a, uint64_t off)
{
    size_t lo = 0, hi = a->nfree;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Return [off, off+len) to the free ranges, merged with its neighbours. */
static bool give_back(lshm_alloc_t *a, uint64_t off, uint64_t len)
{
    size_t i = free_lower(a, off);
    bool left = i > 0 && a->free[i - 1].off + a->free[i - 1].len == off;
    bool right = i < a->nfree && off + len == a->free[i].off;
    if (left && right) {
        a->free[i - 1].len += len + a->free[i].len;
        free_remove_at(a, i);
    } else if (left) {
        a->free[i - 1].len += len;
    } else if (right) {
        a->free[i].off = off;
        a->free[i].len += len;
    } else {
        return free_insert_at(a, i, off, len);
    }
    return true;
}

lshm_alloc_t *lshm_alloc_create(uint64_t start, uint64_t end)
{
    lshm_alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->start = up(start, GRAIN);
    a->end = end & ~(uint64_t)(GRAIN - 1);
    if (a->end > a->start && !free_insert_at(a, 0, a->start, a->end - a->start)) {
        free(a);
        return NULL;
    }
    return a;
}

void lshm_alloc_destroy(lshm_alloc_t *a)
{
    if (!a)
        return;
    free(a->free);
    free(a->tab);
    free(a);
}

uint64_t lshm_alloc(lshm_alloc_t *a, uint64_t size, uint64_t align)
{
    if (!size || size > a->end - a->start)
        return UINT64_MAX;
    if (align < GRAIN)
        align = GRAIN;
    size = up(size, GRAIN);
    for (size_t i = 0; i < a->nfree; i++) {
        range_t f = a->free[i];
        uint64_t s = up(f.off, align);
        if (s < f.off || s - f.off > f.len || f.len - (s - f.off) < size)
            continue;
        if (!tab_put(a, s, size))
            return UINT64_MAX;
        /* split: [f.off, s) stays free, [s+size, end) stays free */
        uint64_t tail_off = s + size, tail_len = f.off + f.len - tail_off;
        if (s > f.off) {
            a->free[i].len = s - f.off;
            if (tail_len && !free_insert_at(a, i + 1, tail_off, tail_len))
                return UINT64_MAX;
        } else if (tail_len) {
            a->free[i] = (range_t){tail_off, tail_len};
        } else {
            free_remove_at(a, i);
        }
        a->in_use += size;
        return s;
    }
    return UINT64_MAX;
}

uint64_t lshm_alloc_size(const lshm_alloc_t *a, uint64_t off)
{
    slotent_t *e = tab_find(a, off);
    return e ? e->len : 0;
}

bool lshm_alloc_free(lshm_alloc_t *a, uint64_t off)
{
    slotent_t *e = tab_find(a, off);
    if (!e)
        return false;
    uint64_t len = e->len;
    e->len = 0; /* deleted */
    a->live--;
    a->in_use -= len;
    return give_back(a, off, len);
}

bool lshm_alloc_resize(lshm_alloc_t *a, uint64_t off, uint64_t size)
{
    slotent_t *e = tab_find(a, off);
    if (!e || !size)
        return false;
    size = up(size, GRAIN);
    if (size <= e->len) {
        uint64_t spare = e->len - size;
        if (spare && !give_back(a, off + size, spare))
            return false;
        a->in_use -= spare;
        e->len = size;
        return true;
    }
    uint64_t need = size - e->len, end = off + e->len;
    size_t i = free_lower(a, end);
    if (i == a->nfree || a->free[i].off != end || a->free[i].len < need)
        return false;
    if (a->free[i].len == need)
        free_remove_at(a, i);
    else
        a->free[i].off += need, a->free[i].len -= need;
    e->len = size;
    a->in_use += need;
    return true;
}

uint64_t lshm_alloc_in_use(const lshm_alloc_t *a) { return a->in_use; }
