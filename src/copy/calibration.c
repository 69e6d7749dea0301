/* The calibration file: where it lives, reading it (for the selector in
 * copy.c) and writing it (locus_copy_calibration_save, called by
 * `locus bench copy --calibrate`). This file alone knows its format:
 * "key=value" lines (l3_size, l3_cpus, nt_min, nt_min_far, nt_kernel), '#'
 * comments, unknown keys ignored so newer files stay readable. */
#include "copy/kernels.h"

#include "core/config.h"
#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <locus/copy.h>

const char *locus_copy_calibration_path(char *buf, size_t len)
{
    const char *v = "auto";
    if (lc_tun_string(LC_TUN_COPY_CALIBRATION, &v) != LOCUS_OK || !strcmp(v, "none")) {
        snprintf(buf, len, "%s", "");
        return buf;
    }
    if (strcmp(v, "auto")) {
        snprintf(buf, len, "%s", v);
        return buf;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, len, "%s/locus/copy.conf", xdg);
    else if (home && *home)
        snprintf(buf, len, "%s/.cache/locus/copy.conf", home);
    else
        snprintf(buf, len, "%s", "");
    return buf;
}

/* Malformed values reject the whole file. */
bool copy_calibration_read(const char *path, copy_calib_t *cal, char *why, size_t whylen)
{
    memset(cal, 0, sizeof *cal);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "%s", errno == ENOENT ? "" : strerror(errno));
        return false;
    }
    char line[256];
    bool ok = true, has_nt_min = false;
    while (ok && fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !eq)
            continue;
        *eq = '\0';
        char *val = eq + 1;
        val[strcspn(val, "\r\n")] = '\0';
        uint64_t v = 0;
        if (!strcmp(line, "nt_kernel")) {
            snprintf(cal->nt_kernel, sizeof cal->nt_kernel, "%s", val);
            continue;
        }
        uint64_t *dst = !strcmp(line, "l3_size") ? &cal->l3_size
                        : !strcmp(line, "l3_cpus") ? &cal->l3_cpus
                        : !strcmp(line, "nt_min") ? &cal->nt_min
                        : !strcmp(line, "nt_min_far") ? &cal->nt_min_far : NULL;
        if (!dst)
            continue;
        if (locus_parse_size(val, &v) != LOCUS_OK) {
            snprintf(why, whylen, "bad value %.40s='%.60s'", line, val);
            ok = false;
        }
        *dst = v;
        has_nt_min |= dst == &cal->nt_min;
        cal->has_far |= dst == &cal->nt_min_far;
    }
    fclose(f);
    if (ok && (!cal->l3_size || !cal->l3_cpus || !has_nt_min)) {
        snprintf(why, whylen, "missing l3_size, l3_cpus or nt_min");
        ok = false;
    }
    return ok;
}

/* mkdir -p of path's directory. */
static locus_status_t make_parent_dirs(const char *path)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return lc_err(LOCUS_ERR_INVALID, "calibration path of %zu bytes: expected < %zu", strlen(path),
                      sizeof buf);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST)
            return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot create directory %s for the copy calibration",
                                buf);
        *p = '/';
    }
    return LOCUS_OK;
}

static locus_status_t check_calibration(const locus_copy_calibration_t *cal)
{
    if (!cal)
        return lc_err(LOCUS_ERR_INVALID, "locus_copy_calibration_save: cal is NULL");
    if (!cal->l3_size || cal->l3_cpus < 1 || !cal->nt_min)
        return lc_err(LOCUS_ERR_INVALID,
                      "copy calibration l3_size %llu, l3_cpus %d, nt_min %llu: expected all > 0",
                      (unsigned long long)cal->l3_size, cal->l3_cpus, (unsigned long long)cal->nt_min);
    int k = cal->nt_kernel;
    if (k != -1 && (k < 0 || k >= K_COUNT || !copy_kernels[k].nt_dest || copy_kernels[k].nt_source))
        return lc_err(LOCUS_ERR_INVALID,
                      "copy calibration nt_kernel %d (%s): expected -1 or an NT-store kernel without "
                      "prefetch (\"<family>-nt\")", k, locus_copy_kernel_name(k) ? locus_copy_kernel_name(k) : "none");
    return LOCUS_OK;
}

locus_status_t locus_copy_calibration_save(const char *path, const locus_copy_calibration_t *cal)
{
    locus_status_t st = check_calibration(cal);
    if (st)
        return st;
    char def[512];
    if (!path)
        path = locus_copy_calibration_path(def, sizeof def);
    if (!*path)
        return lc_err(LOCUS_ERR_INVALID, "copy calibration: no file to write (LOCUS_COPY_CALIBRATION is "
                      "'none', or HOME and XDG_CACHE_HOME are unset): expected a path");
    if ((st = make_parent_dirs(path)))
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot write the copy calibration %s", path);
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fprintf(f, "# locus copy calibration, written at %s (locus bench copy --calibrate)\n"
               "# applies only to an L3 of l3_size bytes shared by l3_cpus cpus\n"
               "l3_size=%llu\nl3_cpus=%d\nnt_min=%llu\n",
            when, (unsigned long long)cal->l3_size, cal->l3_cpus, (unsigned long long)cal->nt_min);
    if (cal->nt_min_far)
        fprintf(f, "nt_min_far=%llu\n", (unsigned long long)cal->nt_min_far);
    if (cal->nt_kernel >= 0)
        fprintf(f, "nt_kernel=%s\n", copy_kernels[cal->nt_kernel].name);
    bool bad = ferror(f);
    if (fclose(f) || bad)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot write the copy calibration %s", path);
    return LOCUS_OK;
}
