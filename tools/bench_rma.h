/* Shared by the rma benchmarks (cmd_bench_rma.c, cmd_bench_exchange.c). */
#ifndef LOCUS_TOOLS_BENCH_RMA_H
#define LOCUS_TOOLS_BENCH_RMA_H

#include <locus/locus.h>

#include <stddef.h>

#include "bench_json.h"

/* "# cpu: <model name>; kernel <release>" on stdout, for the record. */
void rma_bench_print_machine(void);

/* The layer's notes (locus_rma_notes: '\n'-terminated lines), one record note
 * each; with seen (a '\n'-separated buffer of seen_size bytes, "" at first)
 * a line already given is left out, so that several handles note it once. */
void rma_bench_json_notes(bench_json_t *j, const char *notes, char *seen, size_t seen_size);

/* "cache", "static", "none". */
const char *rma_bench_reg_name(locus_rma_reg_t reg);

#endif
