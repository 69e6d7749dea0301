/* Internal state of the preload shim (one instance per process). */
#ifndef LOCUS_PROF_SHIM_H
#define LOCUS_PROF_SHIM_H

#include "shim_format.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "core/clock.h"

#define SHIM_BUF (256u * 1024u)
#define SHIM_MAX_LIVE 32768
#define SHIM_HASH 65536
#define SHIM_TOMB ((uintptr_t)1)
#define SHIM_PLACE_PAGES 4096
#define SHIM_MAX_GLOBALS 8
#define SHIM_SLOTS 64        /* pages armed at once at most */
#define SHIM_ACC_RING 65536  /* access samples buffered between flushes */

typedef struct {
    uintptr_t addr;
    size_t size;
    uint16_t kind, prot;
    int noprotect; /* a stack, or protections the program manages itself */
} shim_region_t;

typedef struct {
    uint64_t armed, samples, dropped, io_unprotects, untracked, chained;
} shim_stats_t;

typedef struct {
    pthread_mutex_t lock;
    int fd, ready, finished, disabled;
    size_t page;
    uint64_t min_alloc, access_rate, depth;
    char *buf;
    size_t buf_used;
    shim_region_t *live;
    int nlive;
    uintptr_t *hkey;
    int *hval;
    struct { uintptr_t addr; size_t size; } glob[SHIM_MAX_GLOBALS];
    int nglob;
    void **place_addr;
    int *place_status;
    shim_stats_t stats;
} shim_state_t;

extern shim_state_t S;
extern __thread int shim_guard __attribute__((tls_model("initial-exec")));

int shim_lock(void);
void shim_unlock(void);
void shim_log_locked(const void *rec, size_t size);
void shim_flush_locked(void);
void shim_place_locked(uintptr_t base, size_t len, uintptr_t alloc);
int shim_pick_page_locked(uint64_t rnd, uintptr_t *page, int *prot);
void shim_mark_noprotect_locked(uintptr_t lo, uintptr_t hi);
int shim_real_mprotect(void *a, size_t n, int prot);

/* access sampler (shim_access.c) */
void shim_access_init(void);
void shim_access_start(void);
void shim_access_stop(void);
void shim_access_after_fork(void);
void shim_access_flush_locked(void);
/* Unprotect every armed page overlapping [lo, lo+len) (no sample). */
void shim_disarm_range_locked(uintptr_t lo, size_t len);
/* I/O calls: unprotect the buffer and keep the sampler from arming while
 * the kernel may touch user memory (shim_io.c). */
void shim_io_begin(const void *buf, size_t len);
void shim_io_begin_iov(const void *iov, int n);
void shim_io_end(void);
void shim_io_resolve(void);

#endif
