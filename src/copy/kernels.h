/* Internal: the copy kernels and CPU feature detection. */
#ifndef LOCUS_COPY_KERNELS_H
#define LOCUS_COPY_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*copy_fn_t)(void *dst, const void *src, size_t n);

typedef enum { ISA_BASE = 0, ISA_ERMS = 1, ISA_SSE2 = 2, ISA_AVX2 = 3, ISA_AVX512 = 4 } copy_isa_t;

typedef struct {
    const char *name;
    const char *family; /* kernels of one family differ only in nt_dest/nt_source */
    copy_fn_t fn;
    copy_isa_t isa;
    bool nt_dest, nt_source;
} copy_kernel_t;

/* Indices of copy_kernels (also the public kernel numbers); pick_kernels
 * (copy.c) uses a family's base index + 1/2/3 for its -nt/-pf/-ntpf. Code
 * outside this module finds kernels by name, family and properties
 * (locus_copy_kernel_info/_variant), never by position. */
enum {
    K_LIBC = 0,
    K_MOVSB,
    K_SSE2, K_SSE2_NT, K_SSE2_PF, K_SSE2_NTPF,
    K_AVX2, K_AVX2_NT, K_AVX2_PF, K_AVX2_NTPF,
    K_AVX512, K_AVX512_NT, K_AVX512_PF, K_AVX512_NTPF,
    K_COUNT
};

extern const copy_kernel_t copy_kernels[K_COUNT];

/* Best ISA this CPU supports (cpuid + XCR0), before LOCUS_COPY_ISA. */
copy_isa_t copy_cpu_isa(void);
/* True if the CPU has ERMS (rep movsb is fast). */
bool copy_cpu_erms(void);
/* True if this CPU can run kernels of this ISA (cached cpuid). */
bool copy_cpu_has(copy_isa_t isa);
/* Highest ISA allowed: cpu and LOCUS_COPY_ISA; sets an error on a bad value. */
bool copy_isa_allowed(copy_isa_t isa);

#define DECLARE_KERNELS(isa)                                    \
    void copy_##isa(void *dst, const void *src, size_t n);      \
    void copy_##isa##_nt(void *dst, const void *src, size_t n); \
    void copy_##isa##_pf(void *dst, const void *src, size_t n); \
    void copy_##isa##_ntpf(void *dst, const void *src, size_t n);
DECLARE_KERNELS(sse2)
DECLARE_KERNELS(avx2)
DECLARE_KERNELS(avx512)
#undef DECLARE_KERNELS

/* Validators of LOCUS_COPY_NT_MIN[_FAR] and LOCUS_COPY_CALIBRATION (validate.c,
 * registered with core by copy.c). */
#include <locus/status.h>
#include <stdint.h>
locus_status_t copy_validate_threshold(const char *value);
locus_status_t copy_validate_calibration(const char *value);

/* The calibration file (calibration.c owns its format: "key=value" lines, '#'
 * comments; locus_copy_calibration_save writes it). has_far: nt_min_far was
 * given; nt_kernel: the name of an "X-nt" kernel, or "". */
typedef struct {
    uint64_t l3_size, l3_cpus, nt_min, nt_min_far;
    char nt_kernel[32];
    bool has_far;
} copy_calib_t;
/* Read path into *cal. False with *why set to the reason when the file is
 * unusable (malformed value, required key missing, unreadable), false with
 * *why = "" when it does not exist. */
bool copy_calibration_read(const char *path, copy_calib_t *cal, char *why, size_t whylen);

/* Root of the sysfs tree the selector reads a cpu's L3 from (copy.c): the
 * topology lists only the cpus this process may use, so a rank pinned to one
 * core would see its L3 "shared by 1 cpu"; sysfs says how many share it. */
extern const char *copy_sysfs_root;

#endif
