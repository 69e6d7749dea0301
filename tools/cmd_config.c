/* locus config: every tunable, its current value, default and what is accepted. */
#include "cli.h"

#include <locus/locus.h>

#include <stdio.h>
#include <string.h>

int locus_cmd_config(int argc, char **argv)
{
    bool check = argc > 1 && !strcmp(argv[1], "--check");
    if (argc > 1 && !check) {
        printf("usage: locus config [--check]\n  lists LOCUS_* tunables: each one's value and where it "
               "comes from\n  (environment, tune file written by `locus tune`, default) and, where the "
               "library\n  derives an automatic value, what it is here and why (topology, self-test);\n"
               "  --check validates the environment and the tune file and exits non-zero on the\n"
               "  first bad or unknown variable\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    if (check) {
        locus_status_t st = locus_config_check();
        if (st)
            return cli_fail("config", st);
        printf("all LOCUS_* variables are valid\n");
        return 0;
    }
    int bad = 0;
    const char *module = "";
    for (size_t i = 0; i < locus_config_count(); i++) {
        locus_tunable_info_t t;
        locus_config_describe(i, &t);
        if (strcmp(module, t.module)) {
            module = t.module;
            printf("%s[%s]\n", i ? "\n" : "", module);
        }
        printf("  %-28s = %-12s (%s%s%s)\n", t.name, t.value ? t.value : t.def, t.source,
               t.value ? "; default " : "", t.value ? t.def : "");
        if (t.effective)
            printf("      here: %s\n", t.effective);
        printf("      %s; accepts %s\n", t.help, t.accepted);
        if (t.valid != LOCUS_OK) {
            printf("      ERROR: %s\n", locus_last_error());
            bad++;
        }
    }
    if (locus_config_check() != LOCUS_OK && !bad) {
        printf("\nERROR: %s\n", locus_last_error());
        bad++;
    }
    return bad ? 1 : 0;
}
