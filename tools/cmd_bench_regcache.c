/* locus bench regcache: the registration-cache benchmark is its own executable
 * (bench/regcache.c -> locus-bench-regcache), so the CLI never links UCX and
 * the benchmark uses only the public reg API. This finds it beside the CLI
 * (build tree: bin/) or in <prefix>/libexec/locus (install) and runs it with
 * the same arguments. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define REGCACHE_EXE "locus-bench-regcache"

static const char *find_regcache(char *buf, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    static const char *rel[] = {"", "../libexec/locus/"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, cap, "%s/%s%s", exe, rel[i], REGCACHE_EXE);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return NULL;
}

int locus_bench_regcache(int argc, char **argv)
{
    char path[PATH_MAX + 64];
    if (!find_regcache(path, sizeof path)) {
        fprintf(stderr, "locus bench regcache: %s not found beside the locus executable or in "
                        "../libexec/locus (build the locus_bench_regcache target)\n", REGCACHE_EXE);
        return 127;
    }
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "locus bench regcache: cannot execute %s: %s\n", path, strerror(errno));
    return 126;
}
