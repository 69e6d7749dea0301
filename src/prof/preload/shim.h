/* Internal state of the preload shim (one instance per process).
 *
 * Everything here is hidden (the library is built with hidden visibility);
 * only the interposed libc/pthread names are exported, each marked
 * SHIM_EXPORT (checked by the ProfShim.ExportsOnlyInterposedNames test). */
#ifndef LOCUS_PROF_SHIM_H
#define LOCUS_PROF_SHIM_H

#include "shim_format.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/clock.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_TLS __attribute__((tls_model("initial-exec")))

#define SHIM_BUF (256u * 1024u)
#define SHIM_MAX_LIVE 32768
#define SHIM_HASH 65536
#define SHIM_FILTER 65536        /* counting filter: may this pointer be tracked? */
#define SHIM_TOMB ((uintptr_t)1)
#define SHIM_PLACE_PAGES 4096
#define SHIM_MAX_GLOBALS 8
#define SHIM_SLOTS 64        /* pages armed at once at most */
#define SHIM_ACC_RING 65536  /* access samples buffered between flushes */
#define SHIM_DEFAULT_MIN_ALLOC 65536

/* The functions the shim forwards to: what the program would have called
 * without it (dlsym RTLD_NEXT: libc, or an allocator linked or preloaded
 * after the shim). Resolved once, on the first interposed call. */
typedef struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mmap64)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*mprotect)(void *, size_t, int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*posix_spawn)(pid_t *, const char *, const void *, const void *, char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const void *, const void *, char *const[], char *const[]);
    int (*system)(const char *);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*pthread_attr_setstack)(pthread_attr_t *, void *, size_t);
    int (*sigaltstack)(const stack_t *, stack_t *);
} shim_real_t;

extern shim_real_t shim_R;

typedef struct {
    uintptr_t addr;
    size_t size;
    uint16_t kind, prot;
    int noprotect; /* a stack, or protections the program manages itself */
} shim_region_t;

typedef struct {
    uint64_t armed, samples, dropped, io_unprotects, untracked, chained;
    _Atomic uint64_t early; /* large allocations before the shim started: not recorded */
    uint64_t log_errors;    /* writes to the log that failed (records lost) */
} shim_stats_t;

typedef struct {
    pthread_mutex_t lock;
    _Atomic int ready;    /* set last by the constructor: recording allowed */
    _Atomic int finished; /* the image is going away (exit/exec): record nothing */
    int fd;
    pid_t pid;            /* the process the state belongs to (a vfork child is not it) */
    uint64_t log_dev, log_ino;
    uintptr_t text_lo, text_hi; /* the shim's own code: frames skipped in call paths */
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
/* Non-zero while this thread is inside the shim: nested calls (the real
 * allocator's own mmap, backtrace's, a signal handler's malloc) go straight
 * to the real functions. */
extern __thread int shim_guard SHIM_TLS;

/* real functions (shim_real.c) */
void shim_resolve(void);
void *shim_boot_alloc(size_t n, size_t align);
int shim_is_boot(const void *p);
size_t shim_boot_size(const void *p);

/* allocation tracking (shim_alloc.c) */
int shim_recording(void); /* ready, not finished, this process */
/* With shim_guard set: a block the program got (named by its call stack)
 * and one it gives back (pages placed, then forgotten). */
void shim_record_alloc(void *p, size_t size, int kind, int prot);
void shim_record_free(void *p);
void shim_track_reset_locked(void);
void shim_place_live_locked(void);

/* log and lifecycle (shim.c) */
int shim_lock(void);
void shim_unlock(void);
void shim_log_locked(const void *rec, size_t size);
void shim_flush_locked(void);
void shim_place_locked(uintptr_t base, size_t len, uintptr_t alloc);
int shim_pick_page_locked(uint64_t rnd, uintptr_t *page, int *prot);
void shim_mark_noprotect_locked(uintptr_t lo, uintptr_t hi);
int shim_real_mprotect(void *a, size_t n, int prot);
pid_t shim_getpid(void);
/* One complete record written at once, without the lock (crash path). */
void shim_log_direct(const void *rec, size_t size);

/* access sampler (shim_access.c) */
void shim_access_init(void);
void shim_access_start(void);
void shim_access_stop(void);
void shim_access_after_fork(void);
void shim_access_flush_locked(void);
/* Unprotect every armed page overlapping [lo, lo+len) (no sample);
 * lock-free (slots are atomics), callable without the lock. */
void shim_disarm_range_locked(uintptr_t lo, size_t len);
/* Keep the sampler from arming anything for the next `ns` (a vfork child
 * about to exec, a spawn in flight): the kernel reads argv/envp. */
void shim_pause_arming(uint64_t ns);
/* +1 / -1: a spawn is in flight (nothing is armed while any is). */
void shim_block_arming(int delta);
/* I/O calls: unprotect the buffer and keep the sampler from arming while
 * the kernel may touch user memory (shim_io.c). */
void shim_io_begin(const void *buf, size_t len);
void shim_io_begin_iov(const void *iov, int n);
void shim_io_end(void);
void shim_io_resolve(void);
void shim_io_after_fork(void);
int shim_io_overlaps_locked(uintptr_t lo, uintptr_t hi);

#endif
