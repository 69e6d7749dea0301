/* The kernel's description of the machine (see sysfs.h). */
#include "core/sysfs.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lc_read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* One field of /proc/cpuinfo's first processor ("" if absent). */
void lc_cpuinfo_field(const char *key, char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];
    snprintf(out, len, "%s", "");
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, key, klen) && (line[klen] == ' ' || line[klen] == '\t')) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon += colon[1] == ' ' ? 2 : 1;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(out, len, "%s", colon);
            }
            break;
        }
    }
    if (f)
        fclose(f);
}

bool lc_read_u64(const char *path, uint64_t *out)
{
    char buf[64], *end;
    if (!lc_read_line(path, buf, sizeof buf))
        return false;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf)
        return false;
    *out = v;
    return true;
}

uint64_t lc_parse_kernel_size(const char *text)
{
    char *end;
    if (!text || !isdigit((unsigned char)*text))
        return 0;
    unsigned long long v = strtoull(text, &end, 10);
    switch (toupper((unsigned char)*end)) {
    case '\0': return v;
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default:  return 0;
    }
}

int lc_parse_cpulist(const char *text, int *out, int max)
{
    int n = 0;
    const char *p = text;
    while (p && *p && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a > INT_MAX)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b > INT_MAX)
                return -1;
            p = end;
        }
        for (long c = a; c <= b; c++) {
            if (n >= max)
                return -1;
            out[n++] = (int)c;
        }
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    return n;
}

static void read_shared(const char *dir, lc_cpuset_t *set)
{
    char path[512], buf[4096];
    memset(set, 0, sizeof *set);
    snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
    if (!lc_read_line(path, buf, sizeof buf))
        return;
    /* 16 KB of scratch: on the heap, not the stack (small thread stacks) nor
     * in TLS (every thread of every program linking liblocus would carry it) */
    int *cpus = malloc(LC_MAX_CPUS * sizeof *cpus);
    int n = cpus ? lc_parse_cpulist(buf, cpus, LC_MAX_CPUS) : 0;
    for (int i = 0; i < n; i++) {
        if (cpus[i] >= LC_MAX_CPUS || lc_cpuset_has(set, cpus[i]))
            continue;
        set->bits[cpus[i] / 64] |= 1ull << (cpus[i] % 64);
        set->count++;
    }
    free(cpus);
}

bool lc_sysfs_cache(const char *root, int cpu, int level, lc_cache_t *out)
{
    char dir[384], path[512], buf[64];
    for (int idx = 0; idx < 16; idx++) {
        uint64_t lv;
        snprintf(dir, sizeof dir, "%s/devices/system/cpu/cpu%d/cache/index%d", root ? root : "/sys",
                 cpu, idx);
        snprintf(path, sizeof path, "%s/level", dir);
        if (!lc_read_u64(path, &lv))
            return false; /* index directories are numbered contiguously */
        if ((int)lv != level)
            continue;
        snprintf(path, sizeof path, "%s/type", dir);
        if (lc_read_line(path, buf, sizeof buf) && !strcmp(buf, "Instruction"))
            continue;
        out->level = level;
        snprintf(path, sizeof path, "%s/size", dir);
        out->size_bytes = lc_read_line(path, buf, sizeof buf) ? lc_parse_kernel_size(buf) : 0;
        uint64_t id;
        snprintf(path, sizeof path, "%s/id", dir);
        out->id = lc_read_u64(path, &id) ? (int)id : -1;
        read_shared(dir, &out->shared);
        return true;
    }
    return false;
}

int lc_sysfs_l3_id(int cpu)
{
    lc_cache_t c;
    return lc_sysfs_cache(NULL, cpu, 3, &c) ? c.id : -1;
}
