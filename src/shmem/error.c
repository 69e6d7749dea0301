/* Bad input and failures: the spec defines no error codes for most
 * routines, so a call that cannot do what was asked says which call, which
 * PE and which address, and ends the whole job the way shmem_global_exit
 * does (the launcher tears every PE down: no hang, nothing left behind). */
#include "shmem/shmem_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void lshm_fatal(const char *call, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[1024];
    if (lshm.me >= 0 && lshm.npes > 0) /* also inside shmem_finalize */
        snprintf(line, sizeof line, "locus shmem: PE %d: %s: %s", lshm.me, call, msg);
    else
        snprintf(line, sizeof line, "locus shmem: %s: %s", call, msg);
    fflush(NULL); /* what the program printed so far is kept */
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    lshm.exiting = true;
    if (lshm.boot)
        locus_boot_abort(lshm.boot, 1, line);
    _exit(1);
}

void lshm_fatal_status(const char *call, locus_status_t st, const char *what)
{
    lshm_fatal(call, "%s: %s (%s)", what, locus_last_error(), locus_strerror(st));
}

void lshm_require_init(const char *call)
{
    if (lshm.init_count <= 0)
        lshm_fatal(call, "%s",
                   lshm.finalized ? "called after shmem_finalize: the library is shut down (shmem_init starts it again)"
                                  : "called before shmem_init: call shmem_init first");
}

/* shmem_my_pe / shmem_n_pes outside init..finalize answer -1 (1.5 leaves it
 * undefined; Open MPI aborts). -1 used as a PE or an index is how such a
 * program goes wrong later, far from the cause, so SHMEM_DEBUG (read now:
 * init has not read the environment yet) says where, once. */
int lshm_query_uninit(const char *call)
{
    static bool said;
    if (!said && lshm_env_debug()) {
        said = true;
        fprintf(stderr, "locus shmem: %s: called %s; returns -1 (SHMEM_DEBUG)\n", call,
                lshm.finalized ? "after shmem_finalize" : "before shmem_init");
    }
    return -1;
}
