/* Fuzz: the profiler's reader of the preload shim's log (prof_shimlog.c,
 * records in src/prof/preload/shim_format.h) and everything after it in
 * `locus profile` that needs no live process: the input is the one shim
 * log of a session directory; the session is read, attributed, analysed
 * (on a synthetic 4-node machine, so the multi-node paths run), written as
 * a profile and as the terminal report. Any content must give a profile,
 * never a crash, and the profile must be JSON that `locus profile --merge`
 * reads back.
 * What perf's side-band would have said, the mappings, is the one thing
 * the session gets besides the log: every process of the log has
 * fuzz_shimlog_prog mapped where its ELF file puts it (not PIE), so the
 * seeds, logs of that program (shimlog_prog.c says how they are made),
 * resolve to its functions, source lines and globals. */
#include "fuzz.h"

#include "prof/prof_internal.h"
#include "prof/prof_json.h"

#include <locus/prof.h>
#include <locus/topo.h>

#include <elf.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOCUS_FUZZ_SHIMLOG_PROG
#error "LOCUS_FUZZ_SHIMLOG_PROG: the path of fuzz_shimlog_prog (tests/fuzz/CMakeLists.txt)"
#endif

static locus_topo_t *topo;
static locus_prof_options_t opts;
static FILE *devnull;
static char dir[64], log_path[128], out_path[128];
static char *argv0[] = {"fuzz_shimlog", "--flag", NULL};

/* fuzz_shimlog_prog's segments: file-backed up to the file's bytes, the
 * .bss tail anonymous after them (as the loader maps them) */
static prof_map_t prog[16];
static int nprog;

static void prog_maps(void)
{
    FILE *f = fopen(LOCUS_FUZZ_SHIMLOG_PROG, "rb");
    Elf64_Ehdr eh;
    if (!f || fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        abort(); /* built beside the harness */
    for (int i = 0; i < eh.e_phnum && nprog + 2 <= 16; i++) {
        Elf64_Phdr ph;
        if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) || fread(&ph, sizeof ph, 1, f) != 1)
            abort();
        if (ph.p_type != PT_LOAD)
            continue;
        uint64_t start = ph.p_vaddr & ~0xfffull, file_end = (ph.p_vaddr + ph.p_filesz + 0xfff) & ~0xfffull;
        uint64_t end = (ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
        uint32_t prot = ((ph.p_flags & PF_R) ? 1 : 0) | ((ph.p_flags & PF_W) ? 2 : 0) | ((ph.p_flags & PF_X) ? 4 : 0);
        prog[nprog++] = (prof_map_t){0, 0, start, file_end, ph.p_offset & ~0xfffull, 1, 0, 1, prot, NULL};
        if (end > file_end)
            prog[nprog++] = (prof_map_t){0, 0, file_end, end, 0, 0, 0, 0, prot, NULL};
    }
    fclose(f);
}

static void add_maps(prof_session_t *s, int pid)
{
    for (size_t i = 0; i < s->maps.n; i++)
        if (s->maps.v[i].pid == pid)
            return;
    for (int i = 0; i < nprog; i++) {
        prof_map_t m = prog[i];
        m.pid = pid;
        m.name = strdup(m.ino ? LOCUS_FUZZ_SHIMLOG_PROG : "");
        VEC_PUSH(s->maps, m);
    }
    /* the kernel's names for the rest */
    prof_map_t heap = {pid, 0, 0x10000000, 0x20000000, 0, 0, 0, 0, 3, strdup("[heap]")};
    prof_map_t stack = {pid, 0, 0x7ffff0000000, 0x7ffffffff000, 0, 0, 0, 0, 3, strdup("[stack]")};
    VEC_PUSH(s->maps, heap);
    VEC_PUSH(s->maps, stack);
}

static void cleanup(void)
{
    if (getenv("FUZZ_SHIMLOG_KEEP")) { /* to look at the profile of one input */
        fprintf(stderr, "fuzz_shimlog: kept %s\n", out_path);
        return;
    }
    unlink(log_path);
    unlink(out_path);
    rmdir(dir);
}

static void setup(void)
{
    if (locus_topo_load_synthetic("pack:4 [numa] core:2 pu:1", &topo) != LOCUS_OK ||
        locus_prof_options_init(&opts) != LOCUS_OK)
        abort();
    devnull = fopen("/dev/null", "w");
    snprintf(dir, sizeof dir, "/tmp/locus-fuzz-shimlog-%d", (int)getpid());
    if (!devnull || (mkdir(dir, 0700) != 0 && access(dir, W_OK) != 0))
        abort();
    snprintf(log_path, sizeof log_path, "%s/shim.1.bin", dir);
    snprintf(out_path, sizeof out_path, "%s/profile.json", dir);
    opts.shim = "liblocus_prof_preload.so";
    opts.report = devnull;
    opts.output = out_path;
    prog_maps();
    atexit(cleanup);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b && n > 0 ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!topo)
        setup();
    FILE *f = fopen(log_path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);

    prof_session_t *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    s->opt = opts;
    s->topo = topo;
    s->nnodes = locus_topo_num_nodes(topo);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->argv = argv0;
    s->job.rank = s->job.size = -1;
    snprintf(s->job.host, sizeof s->job.host, "fuzzhost");
    s->ft_period = 1;
    s->t_start = 1000;
    s->t_end = 2000000000;
    snprintf(s->ft_detail, sizeof s->ft_detail, "off (not selected)");
    prof_shimlog_read_dir(s);
    for (size_t i = 0; i < s->starts.n && i < 8; i++)
        add_maps(s, s->starts.v[i].pid);
    /* as locus_prof_run sets them once the logs are in */
    s->acc_on = s->shim_procs && s->opt.access_rate;
    snprintf(s->acc_detail, sizeof s->acc_detail, "%s", s->acc_on ? "on" : "no data");
    if (!s->shim_procs)
        snprintf(s->shim_status, sizeof s->shim_status, "the shim did not start");
    if (s->crash.valid && s->crash.sig > 0 && s->crash.sig < 65) { /* the program died of it */
        s->exit_signal = s->crash.sig;
        s->exit_status = 128 + s->crash.sig;
        s->exit_code = -1;
    }
    if (prof_session_finish(s) != LOCUS_OK)
        abort(); /* the output is writable: any log must give a profile */
    s->topo = NULL; /* shared by every run */
    prof_session_free(s);

    /* the profile is JSON the merge reads back */
    size_t len = 0;
    char *text = slurp(out_path, &len), err[256];
    if (!text)
        abort();
    pj_t *p = pj_parse(text, len, err, sizeof err);
    if (!p) {
        fprintf(stderr, "fuzz_shimlog: the profile is not JSON: %s\n", err);
        abort();
    }
    pj_free(p);
    free(text);
    const char *paths[] = {out_path};
    if (locus_prof_merge(paths, 1, NULL, devnull) != LOCUS_OK) {
        fprintf(stderr, "fuzz_shimlog: the merge refuses the profile: %s\n", locus_last_error());
        abort();
    }
    return 0;
}
