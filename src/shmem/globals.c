/* Global and static variables are symmetric (the spec's "symmetric data
 * objects"): the executable's writable data (.data and .bss), found from its
 * program headers (the writable PT_LOAD less PT_GNU_RELRO, which becomes
 * read-only after relocation), page-rounded. PIE and ASLR place it at a
 * different address in every PE, so a global is translated by its offset,
 * like a heap object.
 *
 * On-node access: at init the segment is moved, in place, onto a memfd
 * (its pages copied into the memfd, then the memfd mapped MAP_FIXED over the
 * same addresses), and every PE of the node maps the others' memfds (through
 * /proc/<pid>/fd, which needs the same user, not ptrace rights). Puts, gets
 * and CPU atomics then reach another PE's globals with plain loads and
 * stores, and shmem_ptr works for them. Threads that write globals while
 * shmem_init runs may lose those writes (start them after init). A forked
 * child gets a private copy back (pthread_atfork), so a child never writes
 * into its parent's globals.
 *
 * Other nodes: the segment is also exposed to locus rma as a region
 * (locus_rma_region_add), which registers it with the NIC and exchanges it
 * as one more remote window of each endpoint (src/rma/region.c), so puts,
 * gets and atomics on globals reach PEs of other nodes too. */

#include "shmem/shmem_internal.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern char __data_start[] __attribute__((weak));
/* (No _end: in this library the linker defines _end as its own end, a
 * local symbol, never the program's; the program's writable segment,
 * .bss included, is the PT_LOAD dl_iterate_phdr reports.) */

typedef struct {
    uintptr_t start, end; /* writable part, page-rounded */
    bool found;
} seg_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    seg_t *s = arg;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t relro_end = 0, ws = 0, we = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = (a + ph->p_memsz) & ~(page - 1);
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t e = a + ph->p_memsz;
            if (!ws || (__data_start && (uintptr_t)__data_start >= a && (uintptr_t)__data_start < e))
                ws = a, we = e;
        }
    }
    if (ws) {
        ws &= ~(page - 1);
        if (relro_end > ws && relro_end < we)
            ws = relro_end;
        s->start = ws;
        s->end = (we + page - 1) & ~(page - 1);
        s->found = s->end > s->start;
    }
    return 1; /* the first object is the executable */
}

typedef struct {
    int32_t pid, fd;
    uint64_t len;
} peer_info_t;

/* The segment moves whole, the padding between the program's variables
 * included. A program built with AddressSanitizer has that padding poisoned
 * (its global redzones), and its runtime intercepts every memcpy in the
 * process, ours too: so the segment is copied word by word, by a loop that
 * is neither instrumented nor a memcpy call (volatile keeps the compiler from
 * turning it back into one). Only pages that hold data are copied, once, at
 * init and in a forked child. */
#if defined(__SANITIZE_ADDRESS__)
#define SEG_RAW __attribute__((no_sanitize_address, noinline))
#else
#define SEG_RAW
#endif
static SEG_RAW void seg_copy(void *dst, const void *src, size_t len)
{
    volatile uint64_t *d = dst;
    const volatile uint64_t *s = src;
    for (size_t i = 0; i < len / 8; i++)
        d[i] = s[i];
}

static int own_fd = -1;
static char *seg_base;
static size_t seg_len;

static void privatize_in_child(void)
{
    if (!seg_base)
        return;
    void *tmp = mmap(NULL, seg_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp == MAP_FAILED)
        return;
    seg_copy(tmp, seg_base, seg_len);
    if (mmap(seg_base, seg_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
        seg_copy(seg_base, tmp, seg_len);
    munmap(tmp, seg_len);
    if (own_fd >= 0)
        close(own_fd), own_fd = -1;
}

static SEG_RAW bool page_is_zero(const char *p, size_t page)
{
    const uint64_t *w = (const uint64_t *)p;
    for (size_t i = 0; i < page / 8; i++)
        if (w[i])
            return false;
    return true;
}

/* Move [base, base+len) onto a memfd at the same addresses. */
static bool share_segment(char *base, size_t len, char *why, size_t whylen)
{
    int fd = memfd_create("locus-shmem-data", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        snprintf(why, whylen, "memfd of %zu bytes: %m", len);
        if (fd >= 0)
            close(fd);
        return false;
    }
    char *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (tmp == MAP_FAILED) {
        snprintf(why, whylen, "mapping the memfd: %m");
        close(fd);
        return false;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t o = 0; o < len; o += page) /* zero pages stay holes */
        if (!page_is_zero(base + o, page))
            seg_copy(tmp + o, base + o, page);
    if (mmap(base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        snprintf(why, whylen, "mapping the memfd over the data segment: %m");
        munmap(tmp, len);
        close(fd);
        return false;
    }
    munmap(tmp, len);
    own_fd = fd;
    return true;
}

/* Globals are symmetric only if every PE runs the same executable. */
static void check_sizes(const peer_info_t *all, uint64_t len)
{
    for (int pe = 0; pe < lshm.npes; pe++)
        if (all[pe].len != len)
            lshm_fatal("shmem_init", "PE %d's global and static data is %llu bytes, this PE's %llu: every PE must "
                       "run the same executable for globals to be symmetric", pe, (unsigned long long)all[pe].len,
                       (unsigned long long)len);
}

/* The node's peers' data segments through their memfds; a peer not mapped
 * is reached by copies (locus rma's CMA path) instead. */
static void map_peers(lshm_region_t *g, const peer_info_t *all)
{
    for (int pe = 0; pe < lshm.npes; pe++) {
        if (pe == lshm.me || all[pe].fd < 0 || !locus_rma_is_local(lshm.rma, pe))
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", all[pe].pid, all[pe].fd);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        void *m = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m != MAP_FAILED)
            g->peer[pe] = m;
    }
}

void lshm_globals_init(void)
{
    lshm_region_t *g = &lshm.reg[LSHM_DATA];
    g->rma_id = -1;
    g->peer = calloc((size_t)lshm.npes, sizeof *g->peer);
    peer_info_t *all = calloc((size_t)lshm.npes, sizeof *all);
    if (!g->peer || !all)
        lshm_fatal("shmem_init", "out of memory for %d PEs", lshm.npes);
    seg_t s = {0};
    dl_iterate_phdr(find_cb, &s);
    char why[256] = "";
    bool local_peers = locus_boot_local_size(lshm.boot) > 1;
    bool shared = s.found && local_peers &&
                  share_segment((char *)s.start, s.end - s.start, why, sizeof why);
    if (s.found && local_peers && !shared && lshm.debug)
        fprintf(stderr, "locus shmem: PE %d: globals not shared with the node (%s): reached by copies\n", lshm.me, why);
    peer_info_t me = {getpid(), shared ? own_fd : -1, s.found ? s.end - s.start : 0};
    locus_status_t st = locus_boot_allgather(lshm.boot, &me, sizeof me, all);
    if (st)
        lshm_fatal_status("shmem_init", st, "exchanging the data segments' sizes");
    check_sizes(all, me.len);
    if (!s.found) {
        free(all);
        return;
    }
    g->base = (char *)s.start;
    g->len = me.len;
    seg_base = g->base;
    seg_len = g->len;
    g->peer[lshm.me] = g->base;
    map_peers(g, all);
    free(all);
    /* everyone opened the others' memfds: ours may close (the mappings keep it) */
    if ((st = locus_boot_barrier(lshm.boot)))
        lshm_fatal_status("shmem_init", st, "waiting for the node's PEs to map the data segments");
    if (own_fd >= 0)
        close(own_fd), own_fd = -1;
    if (shared)
        pthread_atfork(NULL, NULL, privatize_in_child);
    int id = -1;
    if (locus_rma_region_add(lshm.rma, g->base, g->len, &id) == LOCUS_OK)
        g->rma_id = id;
    else if (lshm.debug)
        fprintf(stderr, "locus shmem: PE %d: data segment not exposed to locus rma: %s\n", lshm.me, locus_last_error());
}

void lshm_globals_fini(void)
{
    lshm_region_t *g = &lshm.reg[LSHM_DATA];
    for (int pe = 0; g->peer && pe < lshm.npes; pe++)
        if (pe != lshm.me && g->peer[pe])
            munmap(g->peer[pe], g->len);
    free(g->peer);
    g->peer = NULL;
}
