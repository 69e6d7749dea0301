/* The tune file (see tune.h). Read once, lazily, under a lock; never
 * allocates after that, so lookups are cheap and thread-safe. */
#include "core/tune.h"

#include "core/sysfs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENTRIES 128

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded;
static int nentries;
static char names[MAX_ENTRIES][48], values[MAX_ENTRIES][128];
static char status[768];

const char *lc_cache_file(const char *name, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, len, "%s/locus/%s", xdg, name);
    else if (home && *home)
        snprintf(buf, len, "%s/.cache/locus/%s", home, name);
    else
        snprintf(buf, len, "%s", "");
    return buf;
}

const char *lc_tune_path(char *buf, size_t len)
{
    const char *v = getenv("LOCUS_TUNE_FILE");
    if (v && !strcmp(v, "none"))
        snprintf(buf, len, "%s", "");
    else if (v && *v && strcmp(v, "auto"))
        snprintf(buf, len, "%s", v);
    else
        lc_cache_file("tune.conf", buf, len);
    return buf;
}

const char *lc_tune_host(char *buf, size_t len)
{
    char vendor[64], family[16], model[16], stepping[16], name[160];
    lc_cpuinfo_field("vendor_id", vendor, sizeof vendor);
    lc_cpuinfo_field("cpu family", family, sizeof family);
    lc_cpuinfo_field("model", model, sizeof model);
    lc_cpuinfo_field("stepping", stepping, sizeof stepping);
    lc_cpuinfo_field("model name", name, sizeof name);
    lc_cache_t l3 = {0};
    if (!lc_sysfs_cache(NULL, 0, 3, &l3))
        l3.size_bytes = 0;
    snprintf(buf, len, "%s %s/%s/%s, %s, %ld cpus, L3 %llu", vendor, family, model, stepping, name,
             sysconf(_SC_NPROCESSORS_ONLN), (unsigned long long)l3.size_bytes);
    return buf;
}

/* Parse the file; false (and `status` says why) if it is unusable. */
static bool parse(FILE *f, const char *path)
{
    char line[512], host[512], want[512];
    bool host_ok = false;
    lc_tune_host(want, sizeof want);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !eq)
            continue;
        *eq = '\0';
        if (!strcmp(line, "host")) {
            snprintf(host, sizeof host, "%s", eq + 1);
            host_ok = !strcmp(host, want);
            if (!host_ok) {
                snprintf(status, sizeof status, "tune file %.200s ignored: measured on '%.160s', this is '%.160s'",
                         path, host, want);
                return false;
            }
        } else if (!strncmp(line, "LOCUS_", 6) && nentries < MAX_ENTRIES) {
            snprintf(names[nentries], sizeof names[0], "%.47s", line);
            snprintf(values[nentries], sizeof values[0], "%.127s", eq + 1);
            nentries++;
        }
    }
    if (!host_ok) {
        snprintf(status, sizeof status, "tune file %.200s ignored: no host line", path);
        nentries = 0;
    }
    return host_ok;
}

static void load_locked(void)
{
    char path[512];
    loaded = true;
    nentries = 0;
    status[0] = '\0';
    if (!*lc_tune_path(path, sizeof path))
        return;
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno != ENOENT)
            snprintf(status, sizeof status, "tune file %.200s unreadable: %.100s", path, strerror(errno));
        return;
    }
    if (!parse(f, path))
        nentries = 0;
    fclose(f);
}

const char *lc_tune_value(const char *name)
{
    pthread_mutex_lock(&lock);
    if (!loaded)
        load_locked();
    const char *v = NULL;
    for (int i = 0; i < nentries && !v; i++)
        if (!strcmp(names[i], name))
            v = values[i];
    pthread_mutex_unlock(&lock);
    return v;
}

const char *lc_tune_status(void)
{
    lc_tune_value("");
    return status;
}

void lc_tune_reset(void)
{
    pthread_mutex_lock(&lock);
    loaded = false;
    nentries = 0;
    pthread_mutex_unlock(&lock);
}

void lc_make_parent(const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0755);
        *p = '/';
    }
}

int lc_tune_write(const char *path, const lc_tune_entry_t *e, size_t n, char *err, size_t errlen)
{
    char def[512], tmp[600], host[512];
    if (!path && !*(path = lc_tune_path(def, sizeof def))) {
        snprintf(err, errlen, "no tune file path (LOCUS_TUNE_FILE=none, or neither XDG_CACHE_HOME nor HOME set)");
        return -1;
    }
    lc_make_parent(path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# written by `locus tune`; values measured on the host below, used only there\n");
    fprintf(f, "host=%s\n", lc_tune_host(host, sizeof host));
    for (size_t i = 0; i < n; i++) {
        if (e[i].comment && *e[i].comment)
            fprintf(f, "# %s\n", e[i].comment);
        fprintf(f, "%s=%s\n", e[i].name, e[i].value);
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    lc_tune_reset();
    return 0;
}
