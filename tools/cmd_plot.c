/* locus plot: draw benchmark records (--json of the benchmarks) into a PNG or
 * SVG. The plotting is Python (python/locus/plot.py, matplotlib); this finds
 * the package and a Python to run it with, and says what is missing:
 *   package  <prefix>/share/locus/python (cmake --install), else the source
 *            tree this locus was built from (<source>/python)
 *   Python   $LOCUS_PYTHON, else the source tree's .venv (scripts/deps.sh)
 *            when the package is the source tree's, else python3 on PATH */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOCUS_SOURCE_DIR
#define LOCUS_SOURCE_DIR ""
#endif

static bool has_package(const char *dir)
{
    char p[PATH_MAX + 128];
    snprintf(p, sizeof p, "%s/locus/plot.py", dir);
    return access(p, R_OK) == 0;
}

/* The directory holding the locus package, or NULL; *from_source: it is the source tree's. */
static const char *find_package(char *buf, size_t cap, bool *from_source, char *tried, size_t tcap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    *from_source = false;
    tried[0] = 0;
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, cap, "%s/../share/locus/python", exe);
            snprintf(tried, tcap, "%s", buf);
            if (has_package(buf))
                return buf;
        }
    }
    if (*LOCUS_SOURCE_DIR) {
        snprintf(buf, cap, "%s/python", LOCUS_SOURCE_DIR);
        size_t t = strlen(tried);
        snprintf(tried + t, tcap - t, "%s%s", t ? ", " : "", buf);
        if (has_package(buf)) {
            *from_source = true;
            return buf;
        }
    }
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus plot RESULT.json... -o OUT.png|OUT.svg [--metric M]... [--series REGEX] [--title T]\n"
            "                  [--check]\n"
            "  draws benchmark records (--json of locus bench, heap, stream, tune; docs/bench-schema.json):\n"
            "  one panel per metric, sizes on a log scale, peers dashed, several files overlaid\n"
            "  (hosts named in the legend and title). --check only validates the files.\n"
            "  Runs python -m locus.plot with matplotlib: LOCUS_PYTHON names the Python to use\n"
            "  (default: the source tree's .venv from scripts/deps.sh, else python3).\n");
}

int locus_cmd_plot(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    char pkg[PATH_MAX + 64], tried[2 * PATH_MAX + 256];
    bool from_source;
    if (!find_package(pkg, sizeof pkg, &from_source, tried, sizeof tried)) {
        fprintf(stderr, "locus plot: the Python package 'locus' (python/locus) is not installed: looked in %s; "
                        "install it with cmake --install, or use the locus of a build tree\n", tried);
        return 127;
    }
    char venv[PATH_MAX + 32];
    const char *py = getenv("LOCUS_PYTHON");
    if (!py || !*py) {
        py = "python3";
        snprintf(venv, sizeof venv, "%s/.venv/bin/python", LOCUS_SOURCE_DIR);
        if (from_source && access(venv, X_OK) == 0)
            py = venv;
    }
    const char *old = getenv("PYTHONPATH");
    char path[sizeof pkg + 4096];
    snprintf(path, sizeof path, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", path, 1);
    setenv("LOCUS_PLOT_PROG", "locus plot", 1);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return cli_fail("plot", LOCUS_ERR_NO_MEMORY);
    args[0] = (char *)py;
    args[1] = "-m";
    args[2] = "locus.plot";
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    execvp(py, args);
    fprintf(stderr, "locus plot: cannot run %s: %s (set LOCUS_PYTHON to a Python 3 with matplotlib and "
                    "jsonschema, or run scripts/deps.sh for the source tree's .venv)\n", py, strerror(errno));
    free(args);
    return 127;
}
