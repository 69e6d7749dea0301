/* <shmemx.h>: extensions beyond OpenSHMEM 1.5 that other implementations
 * (Sandia OpenSHMEM, OSSS) give and programs written for them call. Codes
 * that include this header for the standard names get them from <shmem.h>. */
#ifndef LOCUS_SHMEMX_H
#define LOCUS_SHMEMX_H
#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary point of this process, from the monotonic
 * clock: for timing code regions (Sandia OpenSHMEM's and OSSS's name). */
#define HAVE_SHMEMX_WTIME 1
double shmemx_wtime(void);
/* Sandia OpenSHMEM's name for 1.6's shmem_query_initialized */
void shmemx_query_initialized(int *initialized);

#ifdef __cplusplus
}
#endif
#endif
