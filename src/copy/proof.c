/* The copy self-test (see proof.h): measure, cache, load. */
#include "copy/proof.h"

#include "copy/kernels.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/sysfs.h"
#include "core/tune.h"

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <locus/copy.h>

#define BUF_BYTES (64ull << 20)
/* NT must beat glibc by this much to be chosen: a tie is glibc's (no risk). */
#define MARGIN 1.05
/* ... and by this much where source and destination fit in this cpu's share
 * of the L3. There a wrong choice is expensive (NT stores at 0.67x glibc on a
 * quiet Zen 5 at 4-8 MiB) and a right one gains little; and there the race
 * is easiest to mislead: another process using the L3 slows glibc's cached
 * copies, not NT stores (the same Zen 5 measured NT 1.07-1.12x glibc at
 * 4-8 MiB while the machine was busy). */
#define MARGIN_IN_CACHE 1.15
/* A self-test run while other tasks were runnable is used, and saved as
 * provisional: a later process that starts on a quiet machine measures
 * again, up to this many times in all. */
#define PROVISIONAL_MAX 4
/* The test maps 2 x 64 MiB: not where memory is that short. */
#define MIN_AVAILABLE (512ull << 20)

static copy_proof_t g_proof;
static bool g_known;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* ---------- measuring ---------- */

/* Sizes up to this are copied once untimed before the timed copy, as
 * `locus bench copy` does: the kernel raced before may have left the
 * destination out of the cache (NT stores evict it), which slowed glibc's
 * cached copies by 40 % at 8 MiB on a Zen 5 and made NT look faster there. */
#define WARM_MAX (32ull << 20)

static double gbps(int k, char *dst, const char *src, size_t n)
{
    if (n <= WARM_MAX)
        copy_kernels[k].fn(dst, src, n);
    uint64_t t0 = lc_now_ns();
    copy_kernels[k].fn(dst, src, n);
    uint64_t dt = lc_now_ns() - t0;
    return dt ? (double)n / (double)dt : 0;
}

/* The kernels worth trying for big copies here: plain NT stores of each
 * usable vector width, NT + prefetchnta of the 256-bit family (the previous
 * default), and rep movsb where the CPU has ERMS (on a Zen 5 it beat every
 * NT loop from 16 MiB: the microcode streams big copies itself). */
static int candidates(int *out)
{
    int n = 0;
    if (copy_isa_allowed(ISA_ERMS))
        out[n++] = K_MOVSB;
    if (copy_isa_allowed(ISA_AVX512))
        out[n++] = K_AVX512_NT;
    if (copy_isa_allowed(ISA_AVX2)) {
        out[n++] = K_AVX2_NT;
        out[n++] = K_AVX2_NTPF;
    } else {
        out[n++] = K_SSE2_NT;
        out[n++] = K_SSE2_NTPF;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of `reps` rounds for each kernel of ks[] at size n, the kernels
 * interleaved and their order rotated each round, so that a burst of
 * interference from elsewhere falls on all of them alike. */
static void race(const int *ks, int nk, double *med, char *dst, const char *src, size_t n, int reps)
{
    double g[8][16];
    if (reps > 16)
        reps = 16;
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nk; j++) {
            int i = (j + r) % nk;
            g[i][r] = gbps(ks[i], dst, src, n);
        }
    for (int i = 0; i < nk; i++) {
        qsort(g[i], (size_t)reps, sizeof g[i][0], cmp_double);
        med[i] = g[i][reps / 2];
    }
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    uint64_t avail = kb << 10;
    /* a cgroup limit below the machine's free memory is the real bound */
    f = fopen("/sys/fs/cgroup/memory.max", "re");
    unsigned long long max = 0, cur = 0;
    if (f && fscanf(f, "%llu", &max) == 1) {
        FILE *c = fopen("/sys/fs/cgroup/memory.current", "re");
        if (c && fscanf(c, "%llu", &cur) == 1 && max > cur && max - cur < avail)
            avail = max - cur;
        if (c)
            fclose(c);
    }
    if (f)
        fclose(f);
    return avail;
}

/* Runnable tasks on the machine other than the caller (/proc/stat's
 * procs_running counts every runnable thread, the caller included); 0 when
 * it cannot be read. */
const char *copy_proc_stat = "/proc/stat";

static int others_running(void)
{
    FILE *f = fopen(copy_proc_stat, "re");
    char line[256];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "procs_running %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n > 1 ? n - 1 : 0;
}

static void note_busy(copy_proof_t *out)
{
    int o = others_running();
    if (o > out->busy)
        out->busy = o;
}

/* This cpu's share of the L3 (bytes), 0 when unknown. */
static uint64_t l3_share(void)
{
    lc_cache_t c;
    int cpu = sched_getcpu();
    if (!lc_sysfs_cache("/sys", cpu < 0 ? 0 : cpu, 3, &c) || !c.size_bytes)
        return 0;
    return c.size_bytes / (uint64_t)(c.shared.count > 0 ? c.shared.count : 1);
}

static double margin_at(uint64_t n, uint64_t share) { return 2 * n <= share ? MARGIN_IN_CACHE : MARGIN; }

static void stamp(copy_proof_t *out)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out->origin, sizeof out->origin, "self-test %Y-%m-%dT%H:%MZ", &tm);
}

/* From the largest size down: NT is chosen from the smallest size at which it
 * won by MARGIN there and at every larger size. */
static void crossover(copy_proof_t *out, char *dst, const char *src, int reps)
{
    int ks[2] = {K_LIBC, out->kernel};
    uint64_t share = l3_share();
    for (int i = COPY_PROOF_SIZES - 1; i >= 0; i--) {
        double g[2];
        if (i == COPY_PROOF_SIZES - 1) {
            g[0] = out->glibc_gbps[i];
            g[1] = out->nt_gbps[i];
        } else {
            race(ks, 2, g, dst, src, copy_proof_size(i), reps);
            note_busy(out);
            out->glibc_gbps[i] = g[0];
            out->nt_gbps[i] = g[1];
        }
        if (g[1] < margin_at(copy_proof_size(i), share) * g[0])
            break;
        out->nt_min = copy_proof_size(i);
    }
}

/* Where glibc's memcpy starts its own NT stores: GLIBC_TUNABLES's
 * glibc.cpu.x86_non_temporal_threshold if set, else glibc's rule — 3/4 of the
 * L3 share of one cpu (2.26-2.37; from 2.38 at least a quarter of the whole
 * L3) — from glibc's own L3 figure and the kernel's sharing count.
 * UINT64_MAX when it cannot be told. */
static uint64_t glibc_nt_threshold(void)
{
    const char *t = getenv("GLIBC_TUNABLES"), *k = "glibc.cpu.x86_non_temporal_threshold=";
    const char *at = t ? strstr(t, k) : NULL;
    if (at) {
        char *end;
        unsigned long long v = strtoull(at + strlen(k), &end, 0);
        if (end != at + strlen(k) && (*end == ':' || !*end))
            return v;
    }
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    lc_cache_t c;
    int share = lc_sysfs_cache("/sys", 0, 3, &c) && c.shared.count > 0 ? c.shared.count : 1;
    int major = 0, minor = 0;
    if (l3 <= 0 || sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major != 2 || minor < 26)
        return UINT64_MAX;
    uint64_t v = (uint64_t)l3 / (uint64_t)share / 4 * 3;
    if (minor >= 38 && (uint64_t)l3 / 4 > v)
        v = (uint64_t)l3 / 4;
    return v;
}

/* Past glibc's threshold (when the table stopped below it): the NT kernel
 * against glibc's own NT path, 5 % above the threshold, the buffers mapped
 * for this race only. */
static void race_past_glibc(copy_proof_t *out, int reps, uint64_t avail)
{
    uint64_t th = glibc_nt_threshold();
    if (out->kernel < 0 || th == UINT64_MAX || th < copy_proof_size(COPY_PROOF_SIZES - 1))
        return;
    uint64_t n = (th + th / 20 + (2u << 20) - 1) & ~((2ull << 20) - 1);
    if (avail < 2 * n + MIN_AVAILABLE)
        return; /* not where memory is short: glibc's path stays unmeasured (our NT kernel) */
    char *buf = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return;
    memset(buf, 0x5a, 2 * n);
    int ks[2] = {K_LIBC, out->kernel};
    double g[2];
    race(ks, 2, g, buf + n, buf, n, reps < 3 ? reps : 3);
    note_busy(out);
    munmap(buf, 2 * n);
    out->libc_big_gbps = g[0];
    out->nt_big_gbps = g[1];
    if (g[1] < MARGIN * g[0])
        out->libc_from = n;
}

void copy_proof_measure(copy_proof_t *out, int reps)
{
    memset(out, 0, sizeof *out);
    out->kernel = -1;
    out->nt_min = UINT64_MAX;
    out->libc_from = UINT64_MAX;
    if (reps < 1)
        reps = 1;
    uint64_t avail = mem_available();
    if (avail < MIN_AVAILABLE) {
        snprintf(out->why, sizeof out->why, "self-test skipped: %llu MiB of memory available, it needs %llu",
                 (unsigned long long)(avail >> 20), (unsigned long long)(MIN_AVAILABLE >> 20));
        return;
    }
    char *buf = mmap(NULL, 2 * BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        snprintf(out->why, sizeof out->why, "self-test skipped: mmap of %llu MiB: %s",
                 (unsigned long long)(2 * BUF_BYTES >> 20), strerror(errno));
        return;
    }
    char *src = buf, *dst = buf + BUF_BYTES;
    memset(buf, 0x5a, 2 * BUF_BYTES); /* fault in: page faults are not copy speed */
    int ks[8];
    ks[0] = K_LIBC;
    out->ncandidates = candidates(ks + 1);
    double g[8];
    int top = COPY_PROOF_SIZES - 1;
    note_busy(out);
    race(ks, out->ncandidates + 1, g, dst, src, copy_proof_size(top), reps);
    note_busy(out);
    out->glibc_gbps[top] = g[0];
    int win = -1;
    for (int i = 0; i < out->ncandidates; i++) {
        out->candidates[i] = ks[i + 1];
        out->family_gbps[i] = g[i + 1];
        if (win < 0 || g[i + 1] > g[win + 1])
            win = i;
    }
    out->kernel = ks[win + 1];
    out->nt_gbps[top] = g[win + 1];
    crossover(out, dst, src, reps);
    if (out->nt_min == UINT64_MAX)
        out->kernel = -1;
    munmap(buf, 2 * BUF_BYTES);
    race_past_glibc(out, reps, avail);
    out->valid = true;
    stamp(out);
}

/* ---------- the cache file ---------- */

static const char *isa_name(void)
{
    return copy_isa_allowed(ISA_AVX512) ? "avx512" : copy_isa_allowed(ISA_AVX2) ? "avx2" : "sse2";
}

/* "selftest 2": the candidates changed (rep movsb) and the margin in the
 * cache grew: answers of the first version are measured again. */
static void cache_key(char *buf, size_t len)
{
    char host[512];
    snprintf(buf, len, "%s; glibc %s; isa %s; selftest 2", lc_tune_host(host, sizeof host),
             gnu_get_libc_version(), isa_name());
}

static const char *cache_path(char *buf, size_t len)
{
    return lc_cache_file("copy-selftest.conf", buf, len);
}

int copy_proof_save(const copy_proof_t *pr)
{
    char path[512], tmp[600], key[700];
    if (!pr->valid || !*cache_path(path, sizeof path))
        return -1;
    lc_make_parent(path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f)
        return -1;
    cache_key(key, sizeof key);
    fprintf(f, "# locus copy self-test: where NT stores beat glibc memcpy on this machine\n");
    fprintf(f, "key=%s\nkernel=%s\n", key, pr->kernel >= 0 ? copy_kernels[pr->kernel].name : "libc");
    if (pr->nt_min == UINT64_MAX)
        fprintf(f, "nt_min=never\n");
    else
        fprintf(f, "nt_min=%llu\n", (unsigned long long)pr->nt_min);
    if (pr->libc_from == UINT64_MAX)
        fprintf(f, "libc_from=never\n");
    else
        fprintf(f, "libc_from=%llu\n", (unsigned long long)pr->libc_from);
    if (pr->busy)
        fprintf(f, "provisional=%d\n# measured while %d other task(s) ran: measured again on a quiet machine\n",
                pr->provisional, pr->busy);
    fprintf(f, "origin=%s\n# MiB   glibc GB/s   NT GB/s\n", pr->origin);
    for (int i = 0; i < COPY_PROOF_SIZES; i++)
        if (pr->glibc_gbps[i] > 0)
            fprintf(f, "# %4llu %10.2f %10.2f\n", (unsigned long long)(copy_proof_size(i) >> 20),
                    pr->glibc_gbps[i], pr->nt_gbps[i]);
    for (int i = 0; i < pr->ncandidates; i++)
        fprintf(f, "# candidate %-12s %6.2f GB/s at %llu MiB\n", copy_kernels[pr->candidates[i]].name,
                pr->family_gbps[i], (unsigned long long)(copy_proof_size(COPY_PROOF_SIZES - 1) >> 20));
    if (pr->libc_big_gbps > 0)
        fprintf(f, "# past glibc's NT threshold: glibc %.2f, NT %.2f GB/s\n", pr->libc_big_gbps, pr->nt_big_gbps);
    int bad = fclose(f) != 0 || rename(tmp, path) != 0;
    if (bad)
        unlink(tmp);
    return bad ? -1 : 0;
}

static int kernel_by_name(const char *name)
{
    for (int k = 0; k < K_COUNT; k++)
        if (!strcmp(copy_kernels[k].name, name))
            return k;
    return -2;
}

/* The cache if it was measured on this machine with this glibc and ISA. */
static bool load(copy_proof_t *out)
{
    char path[512], key[700], line[900];
    if (!*cache_path(path, sizeof path))
        return false;
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    cache_key(key, sizeof key);
    bool key_ok = false, have_kernel = false, have_min = false, have_libc = false;
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *v = strchr(line, '=');
        if (line[0] == '#' || !v)
            continue;
        *v++ = '\0';
        if (!strcmp(line, "key"))
            key_ok = !strcmp(v, key);
        else if (!strcmp(line, "kernel")) {
            out->kernel = strcmp(v, "libc") ? kernel_by_name(v) : -1;
            have_kernel = out->kernel == -1 || (out->kernel >= 0 &&
                                                (copy_kernels[out->kernel].nt_dest || out->kernel == K_MOVSB) &&
                                                locus_copy_kernel_available(out->kernel));
        } else if (!strcmp(line, "nt_min")) {
            char *end;
            out->nt_min = strcmp(v, "never") ? strtoull(v, &end, 10) : UINT64_MAX;
            have_min = !strcmp(v, "never") || (*v && !*end && out->nt_min > 0);
        } else if (!strcmp(line, "libc_from")) { /* absent in caches before it existed: measured again */
            char *end;
            out->libc_from = strcmp(v, "never") ? strtoull(v, &end, 10) : UINT64_MAX;
            have_libc = !strcmp(v, "never") || (*v && !*end && out->libc_from > 0);
        } else if (!strcmp(line, "provisional")) {
            out->provisional = atoi(v);
            out->busy = 1;
        }
    }
    fclose(f);
    if (!key_ok || !have_kernel || !have_min || !have_libc || (out->kernel < 0) != (out->nt_min == UINT64_MAX))
        return false;
    snprintf(out->origin, sizeof out->origin, "self-test cache %.130s%s", path,
             out->busy ? ", provisional" : "");
    out->valid = true;
    return true;
}

/* ---------- once per process ---------- */

/* A cached answer to keep: final, or provisional with no quiet moment to
 * replace it (measured PROVISIONAL_MAX times, or the machine busy now). */
static bool keep(const copy_proof_t *pr) { return !pr->busy || pr->provisional >= PROVISIONAL_MAX || others_running(); }

static void proof_once(void)
{
    int mode = 0; /* auto|off|rerun */
    lc_tun_enum(LC_TUN_COPY_SELFTEST, &mode);
    if (mode != 2 && load(&g_proof) && keep(&g_proof)) {
        __atomic_store_n(&g_known, true, __ATOMIC_RELEASE);
        return;
    }
    /* One process measures; the others of a job started together wait for
     * its answer instead of measuring on a machine it is loading. */
    char path[512], lock[600];
    int fd = -1;
    if (*cache_path(path, sizeof path)) {
        lc_make_parent(path);
        snprintf(lock, sizeof lock, "%s.lock", path);
        fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            flock(fd, LOCK_EX);
    }
    if (mode == 2 || !load(&g_proof) || !keep(&g_proof)) {
        int before = g_proof.valid && g_proof.busy ? g_proof.provisional : 0;
        copy_proof_measure(&g_proof, 5);
        g_proof.provisional = g_proof.busy ? before + 1 : 0;
        copy_proof_save(&g_proof);
    }
    if (fd >= 0)
        close(fd);
    __atomic_store_n(&g_known, true, __ATOMIC_RELEASE);
}

const copy_proof_t *copy_proof_get(void)
{
    pthread_once(&g_once, proof_once);
    return &g_proof;
}

const copy_proof_t *copy_proof_peek(void)
{
    return __atomic_load_n(&g_known, __ATOMIC_ACQUIRE) ? &g_proof : NULL;
}

locus_status_t locus_copy_selftest(int reps, bool save, locus_copy_selftest_t *out)
{
    if (!out || reps < 1 || reps > 16)
        return lc_err(LOCUS_ERR_INVALID, "copy self-test: reps %d: expected 1..16 and an output", reps);
    copy_proof_t pr;
    copy_proof_measure(&pr, reps);
    pr.provisional = pr.busy ? 1 : 0;
    if (!pr.valid)
        return lc_err(LOCUS_ERR_NO_MEMORY, "%s", pr.why);
    memset(out, 0, sizeof *out);
    out->kernel = pr.kernel;
    out->nt_min = pr.nt_min;
    out->nsizes = COPY_PROOF_SIZES;
    for (int i = 0; i < COPY_PROOF_SIZES; i++) {
        out->sizes[i] = copy_proof_size(i);
        out->glibc_gbps[i] = pr.glibc_gbps[i];
        out->nt_gbps[i] = pr.nt_gbps[i];
    }
    out->ncandidates = pr.ncandidates;
    for (int i = 0; i < pr.ncandidates; i++) {
        out->candidates[i] = pr.candidates[i];
        out->candidate_gbps[i] = pr.family_gbps[i];
    }
    if (save && copy_proof_save(&pr) != 0)
        return lc_err(LOCUS_ERR_SYSTEM, "copy self-test: cannot write the cache file");
    return LOCUS_OK;
}
