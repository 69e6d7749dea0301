/* <shmemx.h>: locus has no extensions beyond OpenSHMEM 1.5 yet; codes that
 * include this header for the standard names get them from <shmem.h>. */
#ifndef LOCUS_SHMEMX_H
#define LOCUS_SHMEMX_H
#include <shmem.h>
#endif
