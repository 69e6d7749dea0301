/* locus topo: NUMA nodes, CPUs, shared L3 domains, distances, page sizes. */
#include "cli.h"

#include <locus/locus.h>

#include <stdio.h>
#include <string.h>

static void topo_usage(FILE *out)
{
    fprintf(out,
            "usage: locus topo [--json] [--xml FILE | --synthetic DESC]\n"
            "  prints this machine's NUMA nodes (memory-only ones included), their cpus and\n"
            "  memory, node distances, shared L3 domains (and where each size came from),\n"
            "  page sizes (THP mode, hugetlb pools) and any fallback taken.\n"
            "  --json            JSON instead of the table (keys: src/topo/topo_print.c)\n"
            "  --xml FILE        show an hwloc XML topology instead of this machine\n"
            "  --synthetic DESC  show an hwloc synthetic topology, e.g. \"pack:2 [numa] l3:2 core:2 pu:1\"\n"
            "  (for --xml/--synthetic the page information is this machine's)\n");
}

int locus_cmd_topo(int argc, char **argv)
{
    bool json = false;
    const char *xml = NULL, *synth = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--xml") || !strcmp(argv[i], "--synthetic")) {
            if (i + 1 >= argc)
                return cli_usage_error("topo", "%s needs an argument (see locus topo --help)", argv[i]);
            *(argv[i][2] == 'x' ? &xml : &synth) = argv[i + 1];
            i++;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            topo_usage(stdout);
            return 0;
        } else {
            topo_usage(stderr);
            return cli_usage_error("topo", "unknown option '%s': expected --json, --xml FILE or --synthetic DESC",
                                   argv[i]);
        }
    }
    if (xml && synth)
        return cli_usage_error("topo", "--xml and --synthetic are exclusive: give one");
    locus_topo_t *t = NULL;
    locus_status_t st = xml ? locus_topo_load_xml(xml, &t)
                      : synth ? locus_topo_load_synthetic(synth, &t)
                              : locus_topo_load(&t);
    if (st != LOCUS_OK)
        return cli_fail("topo", st);
    st = json ? locus_topo_print_json(t, stdout) : locus_topo_print(t, stdout);
    locus_topo_destroy(t);
    return st == LOCUS_OK ? 0 : cli_fail("topo", st);
}
