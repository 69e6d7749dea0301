/* locus plan shm --procs N [--queue SIZE] [--heap SIZE] [--json]: the shm
 * footprint model, i.e. every byte of the segment locus_shm_init maps. */
#include "cli.h"

#include <locus/locus.h>

#include "core/config.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus plan shm --procs N [--queue SIZE] [--heap SIZE] [--json]\n"
            "  prints the shm segment breakdown (control, queues, eager cells, heaps, per\n"
            "  process, per node) for N local processes; the segment is sized from it.\n"
            "  --queue  ring bytes per process (default LOCUS_SHM_QUEUE, 0 = auto)\n"
            "  --heap   shared heap per process (default LOCUS_SHM_HEAP)\n");
}

int locus_cmd_plan(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "shm"))
        return cli_usage_error("plan", "unknown model '%s': expected shm", argv[1]);
    int64_t n = -1;
    bool json = false;
    locus_shm_opts_t o;
    locus_shm_opts_init(&o);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--procs") && v) {
            if (lc_parse_int(v, 1, 65536, &n))
                return cli_usage_error("plan", "--procs %s", locus_last_error());
            i++;
        } else if ((!strcmp(a, "--queue") || !strcmp(a, "--heap")) && v) {
            uint64_t s;
            if (locus_parse_size(v, &s))
                return cli_usage_error("plan", "%s %s", a, locus_last_error());
            *(a[2] == 'q' ? &o.queue_bytes : &o.heap_bytes) = s;
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            return cli_usage_error("plan", "unknown option '%s' (locus plan --help)", a);
        }
    }
    if (n < 1)
        return cli_usage_error("plan", "missing --procs N: expected the number of local processes");
    locus_shm_plan_t p;
    locus_status_t st = locus_shm_plan((int)n, &o, &p);
    if (st)
        return cli_fail("plan", st);
    locus_shm_plan_print(&p, stdout, json);
    return 0;
}
