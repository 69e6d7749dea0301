/* PMU address sampling: AMD IBS op, Intel PEBS load latency, Arm SPE.
 * Each gives the data address of sampled loads and a data source (local or
 * remote DRAM, cache level). This machine has none (no hardware PMU in the
 * VM), so the path detects absence and says so in the report; when present,
 * prof_pmu_attr() builds the event the samplers open per CPU exactly like
 * the first-touch event (inherit + enable_on_exec on the child), and
 * prof_pmu_data_src() turns PERF_SAMPLE_DATA_SRC into local/remote. */
#include "prof/prof_internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int read_int(const char *path, int *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fscanf(f, "%d", out) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

typedef enum { PMU_NONE, PMU_IBS, PMU_PEBS, PMU_SPE } pmu_kind_t;

/* Which PMU this machine has for data-address sampling, and its type. */
static pmu_kind_t pmu_find(int *type, char *why, size_t cap)
{
    if (read_int("/sys/bus/event_source/devices/ibs_op/type", type) == 0)
        return PMU_IBS;
    if (exists("/sys/bus/event_source/devices/cpu/events/mem-loads") &&
        read_int("/sys/bus/event_source/devices/cpu/type", type) == 0)
        return PMU_PEBS;
    if (read_int("/sys/bus/event_source/devices/arm_spe_0/type", type) == 0)
        return PMU_SPE;
    snprintf(why, cap,
             "no PMU for data-address sampling: no /sys/bus/event_source/devices/ibs_op (AMD IBS), "
             "no cpu/events/mem-loads (Intel PEBS), no arm_spe_0 (Arm SPE)%s",
             exists("/sys/bus/event_source/devices/cpu") ? "" : "; no hardware cpu PMU at all (virtual machine?)");
    return PMU_NONE;
}

/* The sampling event for a PMU (period in operations/loads). */
static void prof_pmu_attr(int kind, int type, struct perf_event_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = (uint32_t)type;
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
    a->disabled = 1;
    a->inherit = 1;
    a->enable_on_exec = 1;
    a->exclude_kernel = 1;
    a->exclude_hv = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->sample_id_all = 1;
    switch (kind) {
    case PMU_IBS:
        a->config = 0;             /* op sampling on cycles */
        a->sample_period = 0x10000; /* IBS wants a multiple of 16 */
        break;
    case PMU_PEBS:
        a->config = 0x1cd;   /* mem-loads: MEM_TRANS_RETIRED.LOAD_LATENCY */
        a->config1 = 30;     /* ldlat: loads of >= 30 cycles */
        a->precise_ip = 2;
        a->sample_period = 2000;
        break;
    case PMU_SPE:
        a->config = (1ull << 0) /* ts_enable */ | (1ull << 33) /* load_filter */;
        a->sample_period = 4096;
        break;
    default:
        break;
    }
}

/* 1 remote DRAM/cache, 0 local, -1 unknown. */
int prof_pmu_data_src(uint64_t data_src)
{
    union perf_mem_data_src d = {.val = data_src};
    if (d.mem_remote || (d.mem_lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2 | PERF_MEM_LVL_REM_CCE1 |
                                      PERF_MEM_LVL_REM_CCE2)))
        return 1;
    if (d.mem_lvl & (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_L1 | PERF_MEM_LVL_L2 | PERF_MEM_LVL_L3 | PERF_MEM_LVL_LFB))
        return 0;
    return -1;
}

bool prof_pmu_event(struct perf_event_attr *a)
{
    int type = -1;
    char why[256];
    pmu_kind_t k = pmu_find(&type, why, sizeof why);
    if (k == PMU_NONE)
        return false;
    prof_pmu_attr(k, type, a);
    return true;
}

void prof_pmu_detect(prof_session_t *s)
{
    if (s->pmu_on) {
        snprintf(s->pmu_status, sizeof s->pmu_status, "on");
        snprintf(s->pmu_detail, sizeof s->pmu_detail, "%llu address samples with data source",
                 (unsigned long long)s->pmu_samples);
        return;
    }
    int type = -1;
    char why[256] = "";
    pmu_kind_t k = pmu_find(&type, why, sizeof why);
    if (k == PMU_NONE) {
        snprintf(s->pmu_status, sizeof s->pmu_status, "unavailable");
        snprintf(s->pmu_detail, sizeof s->pmu_detail, "%s", why);
        return;
    }
    /* Present: check that this user may open it on its own process. */
    struct perf_event_attr a;
    prof_pmu_attr(k, type, &a);
    a.inherit = 0;
    a.enable_on_exec = 0;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    const char *name = k == PMU_IBS ? "AMD IBS op" : k == PMU_PEBS ? "Intel PEBS load latency" : "Arm SPE";
    if (fd < 0) {
        snprintf(s->pmu_status, sizeof s->pmu_status, "unavailable");
        snprintf(s->pmu_detail, sizeof s->pmu_detail, "%s present but perf_event_open failed: %s", name,
                 strerror(errno));
        return;
    }
    close(fd);
    snprintf(s->pmu_status, sizeof s->pmu_status, "available");
    snprintf(s->pmu_detail, sizeof s->pmu_detail,
             "%s present and usable but not selected (--samplers pmu or auto)", name);
}
