/* The kernel table, glibc/rep-movsb kernels and cpuid dispatch. */
#include "copy/kernels.h"

#include "core/config.h"
#include "core/error.h"

#include <cpuid.h>
#include <string.h>

#include <locus/copy.h>

static void copy_libc(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

/* rep movsb: microcoded; fast for large sizes where the CPU has ERMS/FSRM. */
static void copy_movsb(void *dst, const void *src, size_t n)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

const copy_kernel_t copy_kernels[K_COUNT] = {
    [K_LIBC] = {"libc", "libc", copy_libc, ISA_BASE, false, false},
    [K_MOVSB] = {"movsb", "movsb", copy_movsb, ISA_ERMS, false, false},
#define ROW(K, isa, name, ISA)                                        \
    [K] = {name, name, copy_##isa, ISA, false, false},                \
    [K##_NT] = {name "-nt", name, copy_##isa##_nt, ISA, true, false}, \
    [K##_PF] = {name "-pf", name, copy_##isa##_pf, ISA, false, true}, \
    [K##_NTPF] = {name "-ntpf", name, copy_##isa##_ntpf, ISA, true, true},
    ROW(K_SSE2, sse2, "sse2", ISA_SSE2)
    ROW(K_AVX2, avx2, "avx2", ISA_AVX2)
    ROW(K_AVX512, avx512, "avx512", ISA_AVX512)
#undef ROW
};

static unsigned long long xgetbv0(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

/* Computed once; racing first callers compute the same value. */
static int cpu_isa_cached = -1;
static int cpu_erms_cached = -1;

static void detect(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    int isa = ISA_SSE2, erms = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        erms = (b >> 9) & 1;
    unsigned a1, b1, c1, d1;
    if (__get_cpuid(1, &a1, &b1, &c1, &d1) && (c1 & (1u << 27))) { /* OSXSAVE */
        unsigned long long xcr0 = xgetbv0();
        bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
        if (ymm && (b & (1u << 5)))
            isa = ISA_AVX2;
        if (zmm && isa == ISA_AVX2 && (b & (1u << 16)))
            isa = ISA_AVX512;
    }
    __atomic_store_n(&cpu_erms_cached, erms, __ATOMIC_RELAXED);
    __atomic_store_n(&cpu_isa_cached, isa, __ATOMIC_RELAXED);
}

copy_isa_t copy_cpu_isa(void)
{
    if (__atomic_load_n(&cpu_isa_cached, __ATOMIC_RELAXED) < 0)
        detect();
    return (copy_isa_t)__atomic_load_n(&cpu_isa_cached, __ATOMIC_RELAXED);
}

bool copy_cpu_erms(void)
{
    copy_cpu_isa();
    return __atomic_load_n(&cpu_erms_cached, __ATOMIC_RELAXED) == 1;
}

bool copy_cpu_has(copy_isa_t isa)
{
    if (isa == ISA_ERMS)
        return copy_cpu_erms();
    return isa <= copy_cpu_isa();
}

bool copy_isa_allowed(copy_isa_t isa)
{
    if (!copy_cpu_has(isa))
        return false;
    int cap = 0; /* auto|sse2|avx2|avx512 */
    if (lc_tun_enum(LC_TUN_COPY_ISA, &cap) != LOCUS_OK || cap == 0)
        return true;
    static const copy_isa_t caps[] = {ISA_AVX512, ISA_SSE2, ISA_AVX2, ISA_AVX512};
    return isa == ISA_BASE || isa == ISA_ERMS || isa <= caps[cap];
}

/* ---------- public kernel API ---------- */

int locus_copy_num_kernels(void) { return K_COUNT; }

const char *locus_copy_kernel_name(int k) { return k >= 0 && k < K_COUNT ? copy_kernels[k].name : NULL; }

int locus_copy_kernel_find(const char *name)
{
    for (int k = 0; name && k < K_COUNT; k++)
        if (!strcmp(copy_kernels[k].name, name))
            return k;
    return -1;
}

bool locus_copy_kernel_available(int k) { return k >= 0 && k < K_COUNT && copy_isa_allowed(copy_kernels[k].isa); }

bool locus_copy_kernel_nt_dest(int k) { return k >= 0 && k < K_COUNT && copy_kernels[k].nt_dest; }

bool locus_copy_kernel_nt_source(int k) { return k >= 0 && k < K_COUNT && copy_kernels[k].nt_source; }

static const char *const isa_names[] = {"base", "erms", "sse2", "avx2", "avx512"};

locus_status_t locus_copy_kernel_info(int k, locus_copy_kernel_info_t *out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "locus_copy_kernel_info: out is NULL");
    if (k < 0 || k >= K_COUNT)
        return lc_err(LOCUS_ERR_INVALID, "copy kernel %d: expected 0..%d", k, K_COUNT - 1);
    const copy_kernel_t *c = &copy_kernels[k];
    *out = (locus_copy_kernel_info_t){c->name, c->family, isa_names[c->isa], c->nt_dest, c->nt_source,
                                      locus_copy_kernel_available(k)};
    return LOCUS_OK;
}

int locus_copy_kernel_variant(int k, bool nt_dest, bool nt_source)
{
    for (int v = 0; k >= 0 && k < K_COUNT && v < K_COUNT; v++)
        if (!strcmp(copy_kernels[v].family, copy_kernels[k].family) && copy_kernels[v].nt_dest == nt_dest &&
            copy_kernels[v].nt_source == nt_source)
            return v;
    return -1;
}

locus_copy_fn_t locus_copy_kernel_fn(int k)
{
    return k >= 0 && k < K_COUNT && copy_cpu_has(copy_kernels[k].isa) ? copy_kernels[k].fn : NULL;
}
