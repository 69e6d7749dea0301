/* The <shmemx.h> extensions: names other implementations give beyond the
 * spec, kept apart from the standard routines. */
#include "core/clock.h"
#include "shmem/shmem_internal.h"

#include <shmemx.h>

LSHM_DEF(double, shmemx_wtime, (void)) { return lc_now_s(); }
LSHM_DEF(void, shmemx_query_initialized, (int *initialized))
{
    if (initialized)
        *initialized = lshm.init_count > 0;
}
