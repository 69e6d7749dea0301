/* locus: node-level memory and communication for HPC runtimes.
 * Umbrella header; each module has its own header. */
#ifndef LOCUS_LOCUS_H
#define LOCUS_LOCUS_H

#include <locus/version.h>
#include <locus/status.h>
#include <locus/config.h>
#include <locus/boot.h>
#include <locus/topo.h>
#include <locus/shm.h>
#include <locus/copy.h>
#include <locus/heap.h>
#include <locus/reg.h>
#include <locus/rma.h>
#include <locus/prof.h>

#endif
