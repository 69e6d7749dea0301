/* The copy selector: contexts built from the topology (and the calibration
 * file, read by calibration.c), the process-wide default behind locus_copy(). */
/* The real functions are defined here, not the header's inline fast path. */
#define LOCUS_COPY_NO_INLINE 1
#include "copy/prepare.h"
#include "copy/kernels.h"
#include "copy/proof.h"

#include "core/config.h"
#include "core/sysfs.h"
#include "core/error.h"
#include "core/notes.h"

/* Root of the sysfs tree read for the L3 ("/sys"; tests point it at a fake tree). */
const char *copy_sysfs_root = "/sys";

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <locus/copy.h>

/* Used when neither hwloc nor sysfs knows the L3 (the topo module normally
 * substitutes; this is the last resort). */
#define FALLBACK_L3 (8ull << 20)

/* The overlap contract is checked where assertions are on (debug builds). */
#ifndef NDEBUG
#define COPY_CHECK_OVERLAP 1
#else
#define COPY_CHECK_OVERLAP 0
#endif

/* One answer of the selector: thresholds, kernels and the memcpy fast-path
 * limits that follow from them. A context has two: from the topology (or the
 * environment, tune file, calibration file), and after the self-test. */
typedef struct copy_sel {
    locus_copy_params_t p;
    size_t direct_max[4]; /* below this total length the hint's choice is glibc memcpy */
    char origin_nt[540], origin_far[540];
} copy_sel_t;

struct locus_copy_ctx {
    copy_sel_t sel[2];    /* [0] before the self-test, [1] with its answer */
    int proved;           /* 1 once sel[1] is complete (read with acquire) */
    bool auto_nt;         /* nothing fixed nt_min: the self-test decides it */
    lc_notes_t notes;
    bool hw_known;        /* sysfs describes the same L3 as the topology */
    lc_cache_t hw;        /* ... and then this is it */
};


static bool overlaps(const void *dst, const void *src, size_t len)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    return len && d < s + len && s < d + len;
}

static locus_status_t check_args(void *dst, const void *src, size_t len, size_t total,
                                 unsigned hint)
{
    if (hint > LOCUS_COPY_HINT_NT_BOTH)
        return lc_err(LOCUS_ERR_INVALID,
                         "copy hint %u: expected 0..3 (NONE, NT_DEST, NT_SOURCE, NT_BOTH)", hint);
    if (total < len)
        return lc_err(LOCUS_ERR_INVALID, "copy total_len %zu: expected >= len %zu", total, len);
    if (len && (!dst || !src))
        return lc_err(LOCUS_ERR_INVALID, "copy of %zu bytes with %s NULL: expected valid buffers",
                         len, dst ? "src" : "dst");
    if (COPY_CHECK_OVERLAP && overlaps(dst, src, len))
        return lc_err(LOCUS_ERR_INVALID,
                         "copy dst %p and src %p overlap over %zu bytes: expected disjoint buffers",
                         dst, src, len);
    return LOCUS_OK;
}

/* ---------- thresholds ---------- */

/* "auto" -> *set = false; "never" -> UINT64_MAX; a size -> *out. */
static locus_status_t read_threshold(lc_tun_id_t id, bool *set, uint64_t *out)
{
    const char *v;
    locus_status_t st = lc_tun_string(id, &v);
    if (st)
        return st;
    *set = strcmp(v, "auto") != 0;
    if (*set && !strcmp(v, "never")) {
        *out = UINT64_MAX;
        return LOCUS_OK;
    }
    return *set ? locus_parse_size(v, out) : LOCUS_OK;
}

static void apply_calibration(locus_copy_ctx_t *c)
{
    char path[512], why[128] = "";
    locus_copy_calibration_path(path, sizeof path);
    copy_calib_t cal;
    if (!*path)
        return;
    if (!copy_calibration_read(path, &cal, why, sizeof why)) {
        if (*why)
            lc_note(&c->notes, "calibration file %s ignored: %s", path, why);
        return;
    }
    if (cal.l3_size != c->sel[0].p.l3_size || cal.l3_cpus != (uint64_t)c->sel[0].p.l3_cpus) {
        lc_note(&c->notes, "calibration file %s ignored: measured on an L3 of %llu bytes shared by %llu cpus, "
                "this one is %llu bytes shared by %d", path, (unsigned long long)cal.l3_size,
             (unsigned long long)cal.l3_cpus, (unsigned long long)c->sel[0].p.l3_size, c->sel[0].p.l3_cpus);
        return;
    }
    c->sel[0].p.nt_min = cal.nt_min;
    snprintf(c->sel[0].origin_nt, sizeof c->sel[0].origin_nt, "calibration %s", path);
    if (cal.has_far) {
        c->sel[0].p.nt_min_far = cal.nt_min_far;
        snprintf(c->sel[0].origin_far, sizeof c->sel[0].origin_far, "calibration %s", path);
    }
    int k = cal.nt_kernel[0] ? locus_copy_kernel_find(cal.nt_kernel) : -1;
    if (k >= 0 && copy_kernels[k].nt_dest && !copy_kernels[k].nt_source &&
        locus_copy_kernel_available(k)) {
        c->sel[0].p.nt = k;
        c->sel[0].p.pf = locus_copy_kernel_variant(k, false, true);
        c->sel[0].p.ntpf = locus_copy_kernel_variant(k, true, true);
    } else if (cal.nt_kernel[0]) {
        lc_note(&c->notes, "calibration file %s: nt_kernel '%s' is unknown or unavailable here; kept %s",
             path, cal.nt_kernel, copy_kernels[c->sel[0].p.nt].name);
    }
}

/* ---------- context creation ---------- */

static void pick_kernels(locus_copy_ctx_t *c)
{
    /* NT and prefetch loops: 256-bit vectors where available. 512-bit NT
     * stores gained nothing measurable here; calibration may choose them. */
    int base = copy_isa_allowed(ISA_AVX2) ? K_AVX2 : K_SSE2;
    c->sel[0].p.regular = K_LIBC;
    c->sel[0].p.nt = base + 1;
    c->sel[0].p.pf = base + 2;
    c->sel[0].p.ntpf = base + 3;
}

/* The topology lists only the cpus this process may use; when sysfs shows
 * the same L3 (same size, a superset of those cpus) its sharing count is the
 * hardware's and wins: a rank pinned to one core still shares its L3. */
static void hardware_sharing(locus_copy_ctx_t *c, int cpu, const locus_topo_l3_t *l3)
{
    if (cpu < 0 || !lc_sysfs_cache(copy_sysfs_root, cpu, 3, &c->hw) || !c->hw.shared.count ||
        c->hw.size_bytes != l3->size_bytes)
        return;
    for (int i = 0; i < l3->num_cpus; i++)
        if (l3->cpus[i] < 0 || !lc_cpuset_has(&c->hw.shared, l3->cpus[i]))
            return;
    c->hw_known = true;
    if (c->hw.shared.count > c->sel[0].p.l3_cpus) {
        lc_note(&c->notes, "L3 of cpu %d is shared by %d cpus (sysfs), %d of them usable by this process; "
                "thresholds use %d", cpu, c->hw.shared.count, c->sel[0].p.l3_cpus, c->hw.shared.count);
        c->sel[0].p.l3_cpus = c->hw.shared.count;
    }
}

static void describe_l3(locus_copy_ctx_t *c, const locus_topo_t *topo, int cpu)
{
    int li = topo && cpu >= 0 ? locus_topo_cpu_l3(topo, cpu) : -1;
    if (li < 0 && topo && locus_topo_num_l3(topo) > 0) {
        if (cpu >= 0)
            lc_note(&c->notes, "cpu %d is in no L3 domain; used L3 domain 0", cpu);
        li = 0;
    }
    locus_topo_l3_t l3;
    if (li >= 0 && locus_topo_l3(topo, li, &l3) == LOCUS_OK && l3.size_bytes > 0) {
        c->sel[0].p.l3_size = l3.size_bytes;
        c->sel[0].p.l3_cpus = l3.num_cpus > 0 ? l3.num_cpus : 1;
        c->sel[0].p.l3_source = l3.size_source;
        if (l3.size_source != LOCUS_TOPO_SRC_HWLOC)
            lc_note(&c->notes, "L3 size %llu bytes comes from %s, not hwloc", (unsigned long long)l3.size_bytes,
                 l3.size_source == LOCUS_TOPO_SRC_SYSFS ? "sysfs" : "a default");
        hardware_sharing(c, cpu, &l3);
        return;
    }
    c->sel[0].p.l3_size = FALLBACK_L3;
    c->sel[0].p.l3_cpus = 1;
    c->sel[0].p.l3_source = LOCUS_TOPO_SRC_DEFAULT;
    lc_note(&c->notes, "no L3 size known (hwloc and sysfs report none); assumed %llu MiB for one cpu",
         FALLBACK_L3 >> 20);
}

static int peer_shares(locus_copy_ctx_t *c, const locus_topo_t *topo, int cpu, int peer)
{
    if (!topo || cpu < 0 || peer < 0)
        return -1;
    if (locus_topo_cpu_node(topo, peer) < 0) { /* outside this process's cpus */
        if (c->hw_known && peer < LC_MAX_CPUS)
            return lc_cpuset_has(&c->hw.shared, peer);
        lc_note(&c->notes, "peer cpu %d is not among this process's cpus and sysfs does not describe this L3: "
                "sharing unknown", peer);
        return -1;
    }
    int a = locus_topo_cpu_l3(topo, cpu), b = locus_topo_cpu_l3(topo, peer);
    if (a >= 0 && b >= 0)
        return a == b;
    int na = locus_topo_cpu_node(topo, cpu), nb = locus_topo_cpu_node(topo, peer);
    return na >= 0 && nb >= 0 && na != nb ? 0 : -1;
}

static void update_direct(copy_sel_t *s, bool auto_nt)
{
    const locus_copy_params_t *p = &s->p;
    for (unsigned h = 0; h < 4; h++) {
        uint64_t lim = p->nt_min;
        if (h && p->peer_shares_l3 != 1 && p->nt_min_far < lim)
            lim = p->nt_min_far;
        /* until the self-test has answered, copies it concerns take the slow path */
        if (auto_nt && lim > COPY_PROOF_MIN)
            lim = COPY_PROOF_MIN;
        s->direct_max[h] = COPY_CHECK_OVERLAP || p->forced_kernel >= 0 || p->regular != K_LIBC
                               ? 0 : (size_t)lim;
    }
}

/* Big copies (>= nt_min) use kernel k (an NT kernel, or rep movsb where the
 * self-test found it fastest); hinted copies k's NT-only variant (the
 * family's default NT kernel when k has none), and prefetchnta only if k
 * uses it. */
static void use_nt_kernel(locus_copy_params_t *p, int k)
{
    p->ntpf = k;
    int nt = locus_copy_kernel_variant(k, true, false);
    if (nt >= 0)
        p->nt = nt;
    p->pf = copy_kernels[k].nt_source ? locus_copy_kernel_variant(k, false, true) : p->regular;
}

/* LOCUS_COPY_NT_KERNEL: -1 auto, -2 unusable here, else the kernel. */
static int nt_kernel_set(void)
{
    int e = 0;
    if (!lc_tun_is_set(LC_TUN_COPY_NT_KERNEL) || lc_tun_enum(LC_TUN_COPY_NT_KERNEL, &e) || e == 0)
        return -1;
    int k = locus_copy_kernel_find(lc_tun_text(LC_TUN_COPY_NT_KERNEL));
    return k >= 0 && locus_copy_kernel_available(k) ? k : -2;
}

/* sel[1] = sel[0] with the self-test's answer: big copies (>= its nt_min)
 * use the NT kernel that won, the others glibc; prefetchnta is kept only if
 * the winner uses it (it lost badly on some CPUs). A self-test that could
 * not run means no NT stores for big copies: a tie with glibc, never worse. */
static void apply_proof(copy_sel_t *to, const copy_sel_t *from, const copy_proof_t *pr, int nt_kernel)
{
    *to = *from;
    locus_copy_params_t *p = &to->p;
    int k = nt_kernel >= 0 ? nt_kernel : pr->kernel;
    p->nt_min = pr->valid ? pr->nt_min : UINT64_MAX;
    /* past glibc's own NT threshold, where its NT path won or tied */
    p->libc_from = pr->valid && nt_kernel < 0 ? pr->libc_from : UINT64_MAX;
    snprintf(to->origin_nt, sizeof to->origin_nt, "%s", pr->valid ? pr->origin : pr->why);
    if (k >= 0)
        use_nt_kernel(p, k);
    p->nt_min_origin = to->origin_nt;
    p->nt_min_far_origin = to->origin_far;
    update_direct(to, false);
}

static pthread_mutex_t prove_lock = PTHREAD_MUTEX_INITIALIZER;
static void publish_default(void);
static locus_copy_ctx_t g_ctx; /* the process-wide context (see below) */

/* Run (or load) the self-test and switch c to its answer; returns the index
 * of c's selection in force. Thread-safe: the default context is shared. */
static int prove(locus_copy_ctx_t *c)
{
    const copy_proof_t *pr = copy_proof_get();
    int nt_kernel = nt_kernel_set();
    pthread_mutex_lock(&prove_lock);
    if (!c->proved) {
        apply_proof(&c->sel[1], &c->sel[0], pr, nt_kernel);
        __atomic_store_n(&c->proved, 1, __ATOMIC_RELEASE);
        if (c == &g_ctx)
            publish_default();
    }
    pthread_mutex_unlock(&prove_lock);
    return 1;
}

/* The selection in force for a copy of `total` bytes (runs the self-test the
 * first time a copy it concerns comes by). */
static const copy_sel_t *sel_for(const locus_copy_ctx_t *c, size_t total)
{
    int cur = __atomic_load_n(&c->proved, __ATOMIC_ACQUIRE);
    if (!cur && c->auto_nt && total >= COPY_PROOF_MIN)
        cur = prove((locus_copy_ctx_t *)c);
    return &c->sel[cur];
}

static locus_status_t check_cpu(const locus_topo_t *topo, int cpu, const char *what)
{
    if (cpu < -1 || (cpu >= 0 && topo && locus_topo_cpu_node(topo, cpu) < 0))
        return lc_err(LOCUS_ERR_INVALID,
                         "copy %s %d: expected -1 (unknown) or a cpu of the topology (%d cpus)",
                         what, cpu, topo ? locus_topo_num_cpus(topo) : 0);
    return LOCUS_OK;
}

static locus_status_t ctx_init(locus_copy_ctx_t *c, const locus_topo_t *topo, int cpu, int peer)
{
    memset(c, 0, sizeof *c);
    c->sel[0].p.cpu = cpu;
    c->sel[0].p.peer_cpu = peer;
    c->sel[0].p.forced_kernel = -1;
    c->sel[0].p.libc_from = UINT64_MAX;
    describe_l3(c, topo, cpu);
    c->sel[0].p.peer_shares_l3 = peer_shares(c, topo, cpu, peer);
    uint64_t share = c->sel[0].p.l3_size / (uint64_t)c->sel[0].p.l3_cpus;
    /* glibc's classic rule (3/4 of the per-cpu share of the shared cache),
     * fed with the real L3 and sharing. Half the share (source plus
     * destination fill it) won on this machine only while the other cpu was
     * busy with the L3: see research/LOG.md, copy. */
    c->sel[0].p.nt_min = share / 4 * 3;
    c->sel[0].p.nt_min_far = share / 4;
    snprintf(c->sel[0].origin_nt, sizeof c->sel[0].origin_nt, "topology");
    snprintf(c->sel[0].origin_far, sizeof c->sel[0].origin_far, "topology");
    pick_kernels(c);
    apply_calibration(c);

    bool set;
    uint64_t v;
    locus_status_t st = read_threshold(LC_TUN_COPY_NT_MIN, &set, &v);
    if (st)
        return st;
    if (set) {
        c->sel[0].p.nt_min = v;
        snprintf(c->sel[0].origin_nt, sizeof c->sel[0].origin_nt, "%s",
                 lc_tun_source(LC_TUN_COPY_NT_MIN) == LC_SRC_TUNE ? "tune file" : "LOCUS_COPY_NT_MIN");
    }
    if ((st = read_threshold(LC_TUN_COPY_NT_MIN_FAR, &set, &v)))
        return st;
    if (set) {
        c->sel[0].p.nt_min_far = v;
        snprintf(c->sel[0].origin_far, sizeof c->sel[0].origin_far, "%s",
                 lc_tun_source(LC_TUN_COPY_NT_MIN_FAR) == LC_SRC_TUNE ? "tune file" : "LOCUS_COPY_NT_MIN_FAR");
    }
    int forced = 0;
    if ((st = lc_tun_enum(LC_TUN_COPY_KERNEL, &forced)))
        return st;
    if ((st = lc_tun_enum(LC_TUN_COPY_ISA, &(int){0})))
        return st;
    if (forced > 0) {
        if (!locus_copy_kernel_available(forced - 1))
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                             "LOCUS_COPY_KERNEL=%s: this CPU (or LOCUS_COPY_ISA) lacks its "
                             "instructions", copy_kernels[forced - 1].name);
        c->sel[0].p.forced_kernel = forced - 1;
    }
    c->sel[0].p.nt_min_origin = c->sel[0].origin_nt;
    c->sel[0].p.nt_min_far_origin = c->sel[0].origin_far;
    int selftest = 0;
    if ((st = lc_tun_enum(LC_TUN_COPY_SELFTEST, &selftest)))
        return st;
    int nk = nt_kernel_set();
    if (nk == -2)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "LOCUS_COPY_NT_KERNEL=%s: this CPU (or LOCUS_COPY_ISA) lacks "
                      "its instructions", lc_tun_text(LC_TUN_COPY_NT_KERNEL));
    if (nk >= 0)
        use_nt_kernel(&c->sel[0].p, nk);
    c->auto_nt = selftest != 1 && !strcmp(c->sel[0].origin_nt, "topology");
    update_direct(&c->sel[0], c->auto_nt);
    if (c->auto_nt && copy_proof_peek()) /* another context already asked: answer now */
        prove(c);
    return LOCUS_OK;
}

locus_status_t locus_copy_ctx_create(const locus_topo_t *topo, int cpu, int peer_cpu,
                                     locus_copy_ctx_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "locus_copy_ctx_create: out is NULL");
    *out = NULL;
    locus_status_t st;
    /* The peer may run outside this process's cpus (another rank's core). */
    if ((st = check_cpu(topo, cpu, "cpu")))
        return st;
    if (peer_cpu < -1 || peer_cpu >= 4096)
        return lc_err(LOCUS_ERR_INVALID, "copy peer cpu %d: expected -1 (unknown) or 0..4095",
                         peer_cpu);
    locus_copy_ctx_t *c = malloc(sizeof *c);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "copy context: %zu bytes", sizeof *c);
    if (cpu < 0) {
        cpu = sched_getcpu();
        if (topo && cpu >= 0 && locus_topo_cpu_node(topo, cpu) < 0)
            cpu = -1;
    }
    if ((st = ctx_init(c, topo, cpu, peer_cpu))) {
        free(c);
        return st;
    }
    *out = c;
    return LOCUS_OK;
}

/* The process-wide context is static: destroying it is a no-op. */
void locus_copy_ctx_destroy(locus_copy_ctx_t *ctx)
{
    if (ctx != &g_ctx) {
        lc_notes_free(&ctx->notes);
        free(ctx);
    }
}

locus_status_t locus_copy_ctx_params(const locus_copy_ctx_t *ctx, locus_copy_params_t *out)
{
    if (!ctx || !out)
        return lc_err(LOCUS_ERR_INVALID, "locus_copy_ctx_params: NULL argument");
    *out = sel_for(ctx, COPY_PROOF_MIN)->p; /* the self-test's answer if it has one */
    return LOCUS_OK;
}

const char *locus_copy_ctx_notes(const locus_copy_ctx_t *ctx) { return ctx ? lc_notes_text(&ctx->notes) : ""; }

locus_status_t locus_copy_ctx_force(locus_copy_ctx_t *ctx, int k)
{
    if (!ctx || k < -1 || k >= K_COUNT)
        return lc_err(LOCUS_ERR_INVALID, "copy kernel %d: expected -1 (selector) or 0..%d", k,
                         K_COUNT - 1);
    if (k >= 0 && !locus_copy_kernel_available(k))
        return lc_err(LOCUS_ERR_UNSUPPORTED, "copy kernel %s: not supported by this CPU",
                         copy_kernels[k].name);
    for (int i = 0; i < 2; i++) {
        ctx->sel[i].p.forced_kernel = k;
        update_direct(&ctx->sel[i], i == 0 && ctx->auto_nt);
    }
    if (ctx == &g_ctx) /* the inline fast path must see it too */
        publish_default();
    return LOCUS_OK;
}

/* ---------- selection ---------- */

static int select_kernel(const locus_copy_ctx_t *c, size_t total, unsigned hint)
{
    const locus_copy_params_t *p = &sel_for(c, total)->p;
    if (p->forced_kernel >= 0)
        return p->forced_kernel;
    if (total >= p->libc_from) /* glibc's own NT stores are the faster ones here */
        return K_LIBC;
    bool big = total >= p->nt_min;
    /* A hint is trusted unless the peer is known to share the L3 (then the
     * reader would have found the lines there). */
    bool far = p->peer_shares_l3 != 1 && total >= p->nt_min_far;
    bool nt = big || ((hint & LOCUS_COPY_HINT_NT_DEST) && far);
    bool pf = big || ((hint & LOCUS_COPY_HINT_NT_SOURCE) && far);
    return nt ? (pf ? p->ntpf : p->nt) : (pf ? p->pf : p->regular);
}

int locus_copy_ctx_select(const locus_copy_ctx_t *ctx, size_t total_len, locus_copy_hint_t hint)
{
    if (!ctx) {
        lc_err(LOCUS_ERR_INVALID, "locus_copy_ctx_select: ctx is NULL");
        return -1;
    }
    if ((unsigned)hint > LOCUS_COPY_HINT_NT_BOTH) {
        check_args(NULL, NULL, 0, 0, (unsigned)hint);
        return -1;
    }
    return select_kernel(ctx, total_len, (unsigned)hint);
}

locus_status_t locus_copy_ctx_copy(const locus_copy_ctx_t *ctx, void *dst, const void *src,
                                   size_t len, size_t total_len, locus_copy_hint_t hint)
{
    locus_status_t st = check_args(dst, src, len, total_len, (unsigned)hint);
    if (st)
        return st;
    if (!ctx)
        return lc_err(LOCUS_ERR_INVALID, "locus_copy_ctx_copy: ctx is NULL");
    if (len)
        copy_kernels[select_kernel(ctx, total_len, (unsigned)hint)].fn(dst, src, len);
    return LOCUS_OK;
}

locus_status_t locus_copy_kernel(int k, void *dst, const void *src, size_t len)
{
    if (k < 0 || k >= K_COUNT)
        return lc_err(LOCUS_ERR_INVALID, "copy kernel %d: expected 0..%d", k, K_COUNT - 1);
    if (!copy_cpu_has(copy_kernels[k].isa))
        return lc_err(LOCUS_ERR_UNSUPPORTED, "copy kernel %s: not supported by this CPU",
                         copy_kernels[k].name);
    locus_status_t st = check_args(dst, src, len, len, 0);
    if (st)
        return st;
    if (len)
        copy_kernels[k].fn(dst, src, len);
    return LOCUS_OK;
}

/* ---------- the process-wide context ---------- */

static locus_status_t g_status;
static char g_error[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
/* Per hint: below this length locus_copy() calls memcpy directly. 0 until the
 * default context exists, which sends every call to the slow path once. */
size_t locus_copy_memcpy_below_[4];

/* A topology lent by copy_prepare for the default context's build. */
static const locus_topo_t *g_lent;

static void default_init(void)
{
    locus_topo_t *own = NULL;
    const locus_topo_t *topo = __atomic_load_n(&g_lent, __ATOMIC_ACQUIRE);
    locus_status_t tst = topo ? LOCUS_OK : locus_topo_load(&own);
    char topo_err[300] = "";
    if (tst)
        snprintf(topo_err, sizeof topo_err, "%s", locus_last_error());
    if (!topo)
        topo = own;
    int cpu = sched_getcpu();
    if (topo && cpu >= 0 && locus_topo_cpu_node(topo, cpu) < 0)
        cpu = -1;
    g_status = ctx_init(&g_ctx, topo, cpu, -1);
    if (g_status)
        snprintf(g_error, sizeof g_error, "%s", locus_last_error());
    if (tst)
        lc_note(&g_ctx.notes, "topology unavailable (%s); used defaults", topo_err);
    locus_topo_destroy(own);
    if (!g_status)
        publish_default();
}

void copy_prepare(const locus_topo_t *topo)
{
    /* pthread_once returns only once the build is done, by whichever thread
     * ran it: the lent topology outlives every use of it */
    __atomic_store_n(&g_lent, topo, __ATOMIC_RELEASE);
    pthread_once(&g_once, default_init);
    __atomic_store_n(&g_lent, NULL, __ATOMIC_RELEASE);
}

static void publish_default(void)
{
    for (int h = 0; h < 4; h++)
        __atomic_store_n(&locus_copy_memcpy_below_[h], g_ctx.sel[g_ctx.proved].direct_max[h],
                         __ATOMIC_RELEASE);
}

static locus_status_t default_ctx(const locus_copy_ctx_t **out)
{
    pthread_once(&g_once, default_init);
    if (g_status)
        return lc_err(g_status, "%s", g_error);
    *out = &g_ctx;
    return LOCUS_OK;
}

locus_status_t locus_copy_default_ctx(locus_copy_ctx_t **out)
{
    const locus_copy_ctx_t *c;
    locus_status_t st = out ? default_ctx(&c) : lc_err(LOCUS_ERR_INVALID, "out is NULL");
    if (!st)
        *out = (locus_copy_ctx_t *)c;
    return st;
}

static __attribute__((noinline)) locus_status_t copy_slow(void *dst, const void *src, size_t len,
                                                         size_t total, unsigned hint)
{
    locus_status_t st = check_args(dst, src, len, total, hint);
    if (st || !len)
        return st;
    const locus_copy_ctx_t *c;
    if ((st = default_ctx(&c)))
        return st;
    copy_kernels[select_kernel(c, total, hint)].fn(dst, src, len);
    return LOCUS_OK;
}

/* The fast path: one bounds test on the hint, one on the length, NULL and
 * (debug builds) overlap tests, then memcpy. Everything else goes through
 * copy_slow. */
#define FAST_OK(dst, src, len, total, hint)                                                   \
    (__builtin_expect((unsigned)(hint) < 4u &&                                                \
                          (total) < __atomic_load_n(&locus_copy_memcpy_below_[(unsigned)(hint)],         \
                                                    __ATOMIC_RELAXED) &&                      \
                          (dst) && (src) && !(COPY_CHECK_OVERLAP && overlaps(dst, src, len)), \
                      1))

locus_status_t locus_copy(void *dst, const void *src, size_t len, locus_copy_hint_t hint)
{
    if (FAST_OK(dst, src, len, len, hint)) {
        memcpy(dst, src, len);
        return LOCUS_OK;
    }
    return copy_slow(dst, src, len, len, (unsigned)hint);
}

locus_status_t locus_copy_part(void *dst, const void *src, size_t len, size_t total_len,
                               locus_copy_hint_t hint)
{
    if (len <= total_len && FAST_OK(dst, src, len, total_len, hint)) {
        memcpy(dst, src, len);
        return LOCUS_OK;
    }
    return copy_slow(dst, src, len, total_len, (unsigned)hint);
}


LC_TUN_VALIDATOR(COPY_NT_MIN, copy_validate_threshold)
LC_TUN_VALIDATOR(COPY_NT_MIN_FAR, copy_validate_threshold)
LC_TUN_VALIDATOR(COPY_CALIBRATION, copy_validate_calibration)

/* `locus config`: what "auto" means on this machine, and why. */
static void resolve_nt_min(char *buf, size_t len)
{
    locus_copy_ctx_t *c;
    locus_copy_params_t p;
    if (locus_copy_default_ctx(&c) || locus_copy_ctx_params(c, &p))
        return;
    char sz[32];
    snprintf(buf, len, "%s (%s)", p.nt_min == UINT64_MAX ? "never" : locus_format_size(p.nt_min, sz, sizeof sz),
             p.nt_min_origin);
}

static void resolve_nt_kernel(char *buf, size_t len)
{
    locus_copy_ctx_t *c;
    locus_copy_params_t p;
    if (locus_copy_default_ctx(&c) || locus_copy_ctx_params(c, &p))
        return;
    snprintf(buf, len, "%s (%s)", p.nt_min == UINT64_MAX ? "none: glibc memcpy at every size"
             : copy_kernels[p.ntpf].name, p.nt_min_origin);
}

LC_TUN_RESOLVER(COPY_NT_MIN, resolve_nt_min)
LC_TUN_RESOLVER(COPY_NT_KERNEL, resolve_nt_kernel)
