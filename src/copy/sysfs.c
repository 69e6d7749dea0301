/* The kernel's description of a cpu's L3 (see sysfs.h). */
#include "copy/sysfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *copy_sysfs_root = "/sys";

static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* "0-3,8,10-11" -> membership; false on a malformed list. */
static bool parse_cpulist(const char *s, copy_sysfs_l3_t *out)
{
    while (*s) {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo;
        if (end == s || lo < 0)
            return false;
        if (*end == '-') {
            s = end + 1;
            hi = strtol(s, &end, 10);
            if (end == s || hi < lo)
                return false;
        }
        for (long c = lo; c <= hi && c < 4096; c++)
            if (!out->has_cpu[c]) {
                out->has_cpu[c] = true;
                out->num_cpus++;
            }
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return false;
    }
    return out->num_cpus > 0;
}

bool copy_sysfs_l3(int cpu, copy_sysfs_l3_t *out)
{
    memset(out, 0, sizeof *out);
    char path[512], buf[4096];
    for (int i = 0; i < 16; i++) {
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/level", copy_sysfs_root,
                 cpu, i);
        if (!read_line(path, buf, sizeof buf))
            return false; /* no more caches */
        if (strcmp(buf, "3"))
            continue;
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/size", copy_sysfs_root, cpu, i);
        if (!read_line(path, buf, sizeof buf))
            return false;
        char *end;
        unsigned long long v = strtoull(buf, &end, 10);
        out->size_bytes = v << (*end == 'K' ? 10 : *end == 'M' ? 20 : 0);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
                 copy_sysfs_root, cpu, i);
        return read_line(path, buf, sizeof buf) && parse_cpulist(buf, out) && out->size_bytes > 0;
    }
    return false;
}
