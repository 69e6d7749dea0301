/* copy's interface to the modules above it inside the library (not to users). */
#ifndef LOCUS_COPY_PREPARE_H
#define LOCUS_COPY_PREPARE_H

#include <locus/topo.h>

/* Build the default context (what locus_copy selects with) now, from a
 * topology the caller has loaded anyway, instead of loading one of its own
 * at the first copy: a module's init calls it so that no copy on a critical
 * path pays the topology load. Failures stay locus_copy's to report. */
void copy_prepare(const locus_topo_t *topo);

#endif
