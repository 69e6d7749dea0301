/* locus bench <what>: dispatch to the benchmarks listed in bench.def. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#define LOCUS_BENCH(name, fn, help) int fn(int argc, char **argv);
#include "bench.def"
#undef LOCUS_BENCH

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} bench_t;

static const bench_t benches[] = {
#define LOCUS_BENCH(name, fn, help) {#name, fn, help},
#include "bench.def"
#undef LOCUS_BENCH
    {NULL, NULL, NULL}
};

static void usage(FILE *out)
{
    fprintf(out, "usage: locus bench <what> [options]   (locus bench <what> --help)\n\n");
    for (const bench_t *b = benches; b->name; b++)
        fprintf(out, "  %-10s %s\n", b->name, b->help);
}

int locus_cmd_bench(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    for (const bench_t *b = benches; b->name; b++)
        if (!strcmp(argv[1], b->name))
            return b->fn(argc - 1, argv + 1);
    cli_usage_error("bench", "unknown benchmark '%s'", argv[1]);
    usage(stderr);
    return 2;
}
