/* The <shmemx.h> extensions: names other implementations give beyond the
 * spec, kept apart from the standard routines. */
#include "core/clock.h"
#include "shmem/shmem_internal.h"

#include <shmemx.h>

LSHM_DEF(double, shmemx_wtime, (void)) { return lc_now_s(); }
/* Sandia OpenSHMEM's name for 1.6's shmem_query_initialized */
LSHM_DEF(void, shmemx_query_initialized, (int *initialized)) { pshmem_query_initialized(initialized); }
