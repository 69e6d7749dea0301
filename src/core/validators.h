/* Prototypes of the STRING-tunable validators named in tunables.def.
 * Each lives in its module and accepts or rejects a value with a message
 * that says what is accepted. */
#ifndef LOCUS_CORE_VALIDATORS_H
#define LOCUS_CORE_VALIDATORS_H

#include <locus/status.h>

/* heap */
locus_status_t locus_heap_validate_policy(const char *value);

/* copy */
locus_status_t locus_copy_validate_threshold(const char *value);
locus_status_t locus_copy_validate_calibration(const char *value);

/* shm */
locus_status_t locus_shm_validate_job(const char *value);

/* prof */
locus_status_t locus_prof_validate_samplers(const char *value);

#endif
