/* Shared by the rma benchmarks (cmd_bench_rma.c, cmd_bench_exchange.c). */
#ifndef LOCUS_TOOLS_BENCH_RMA_H
#define LOCUS_TOOLS_BENCH_RMA_H

/* "# cpu: <model name>; kernel <release>" on stdout, for the record. */
void rma_bench_print_machine(void);

#endif
