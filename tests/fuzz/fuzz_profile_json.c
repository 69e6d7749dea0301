/* Fuzz: `locus profile --merge`, the reader of the ranks' JSON profiles
 * (prof_json.c) and the merge into one job report (prof_merge.c,
 * prof_merge_out.c). The input is one profile, or two split at the first
 * NUL byte (JSON text has none); they are merged into a job report printed
 * to /dev/null and written as JSON. Any content must give a report or a
 * clear error, never a crash, and a report written must be JSON. */
#include "fuzz.h"

#include "prof/prof_json.h"

#include <locus/prof.h>

#include <stdio.h>
#include <unistd.h>

static FILE *devnull;
static char in_path[2][64], out_path[64];

static void cleanup(void)
{
    unlink(in_path[0]);
    unlink(in_path[1]);
    unlink(out_path);
}

static void put(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) {
        devnull = fopen("/dev/null", "w");
        for (int i = 0; i < 2; i++)
            snprintf(in_path[i], sizeof in_path[i], "/tmp/locus-fuzz-prof%d-%d.json", i, (int)getpid());
        snprintf(out_path, sizeof out_path, "/tmp/locus-fuzz-job-%d.json", (int)getpid());
        if (!devnull)
            abort();
        atexit(cleanup);
    }
    const uint8_t *nul = memchr(data, 0, size);
    int n = 1;
    if (nul) {
        put(in_path[0], data, (size_t)(nul - data));
        put(in_path[1], nul + 1, size - (size_t)(nul - data) - 1);
        n = 2;
    } else {
        put(in_path[0], data, size);
    }
    const char *paths[] = {in_path[0], in_path[1]};
    unlink(out_path);
    if (locus_prof_merge(paths, n, out_path, devnull) == LOCUS_OK) {
        FILE *f = fopen(out_path, "rb");
        if (!f)
            abort(); /* merged, but no job report */
        char *text = NULL;
        size_t cap = 0, len = 0, got;
        do {
            if (len == cap && !(text = realloc(text, cap = cap * 2 + 4096)))
                abort();
            got = fread(text + len, 1, cap - len, f);
            len += got;
        } while (got);
        fclose(f);
        char err[256];
        pj_t *job = pj_parse(text, len, err, sizeof err);
        if (!job) {
            fprintf(stderr, "fuzz_profile_json: the job report is not JSON: %s\n", err);
            abort();
        }
        if (strcmp(pj_str(pj_get(job, "schema"), ""), "locus-job/1"))
            abort();
        pj_free(job);
        free(text);
    }
    return 0;
}
