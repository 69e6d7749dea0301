/* The spec's environment variables (content/environment_variables.tex) and
 * their pre-1.4 SMA_* spellings (SHMEM_* wins): SHMEM_SYMMETRIC_SIZE (the
 * heap per PE -> locus rma's heap size), SHMEM_INFO (print what the library
 * reads at start-up), SHMEM_VERSION (print the library version), SHMEM_DEBUG
 * (extra checks and notes). Everything else is locus's own LOCUS_* tunables
 * (locus config). */
#include "shmem/shmem_internal.h"

#include <stdio.h>
#include <stdlib.h>

static const char *getenv2(const char *name, const char *old, const char **used)
{
    const char *v = getenv(name);
    *used = name;
    if (!v) {
        v = getenv(old);
        *used = old;
    }
    return v;
}

bool lshm_env_debug(void)
{
    const char *used;
    return getenv2("SHMEM_DEBUG", "SMA_DEBUG", &used) != NULL;
}

int lshm_env_read(lshm_env_t *env, char *err, size_t errlen)
{
    memset(env, 0, sizeof *env);
    const char *used;
    const char *v = getenv2("SHMEM_SYMMETRIC_SIZE", "SMA_SYMMETRIC_SIZE", &used);
    if (v) {
        if (!lshm_parse_symmetric_size(v, &env->heap_size)) {
            snprintf(err, errlen, "%s='%s': expected a size such as 512M, 1.5G, 65536 (a number with an "
                     "optional k, m, g or t binary multiplier)", used, v);
            return -1;
        }
        env->heap_var = used;
    }
    env->info = getenv2("SHMEM_INFO", "SMA_INFO", &used) != NULL;
    env->version = getenv2("SHMEM_VERSION", "SMA_VERSION", &used) != NULL;
    env->debug = lshm_env_debug();
    return 0;
}

void lshm_print_info(const lshm_env_t *env)
{
    char b[32], c[32];
    if (env->version || env->info)
        printf("%s, OpenSHMEM %d.%d\n", SHMEM_VENDOR_STRING, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (!env->info) {
        fflush(stdout);
        return;
    }
    char asked[96] = "locus's default, LOCUS_RMA_HEAP_SIZE";
    if (env->heap_var)
        snprintf(asked, sizeof asked, "asked %s from %s", locus_format_size(env->heap_size, c, sizeof c), env->heap_var);
    printf("OpenSHMEM environment variables (SMA_* spellings are read when SHMEM_* is unset):\n"
           "  SHMEM_SYMMETRIC_SIZE  symmetric heap per PE, e.g. 512M, 1.5G (now %s usable; %s)\n"
           "  SHMEM_INFO            print this at start-up (set)\n"
           "  SHMEM_VERSION         print the library version at start-up (%s)\n"
           "  SHMEM_DEBUG           check that collective calls agree, report choices (%s)\n"
           "locus tunables used here (locus config lists them all): LOCUS_RMA_HEAP_SIZE (the heap when\n"
           "SHMEM_SYMMETRIC_SIZE is unset), LOCUS_RMA_REG, LOCUS_RMA_ONNODE, LOCUS_HEAP_* (placement,\n"
           "pages, fault-in), LOCUS_BOOT (launcher).\n",
           locus_format_size(lshm.reg[LSHM_HEAP].len - lshm.reserve, b, sizeof b),
           asked,
           env->version ? "set" : "unset", env->debug ? "set" : "unset");
    const char *notes = locus_rma_notes(lshm.rma);
    if (notes && *notes)
        printf("locus rma: %s%s", notes, notes[strlen(notes) - 1] == '\n' ? "" : "\n");
    printf("atomics: by the %s; %d PE%s, %s\n", lshm.cpu_amo ? "CPU (job on one node)" : "NIC (job spans nodes)",
           lshm.npes, lshm.npes == 1 ? "" : "s",
           lshm.reg[LSHM_DATA].len ? "globals and statics symmetric" : "no symmetric data segment");
    fflush(stdout);
}
