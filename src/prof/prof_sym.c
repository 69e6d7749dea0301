/* Attribution through elfutils libdw: for each process image (pid, exec
 * generation) a Dwfl is built from the mappings the perf side-band reported,
 * written in /proc/PID/maps format and fed to dwfl_linux_proc_maps_report,
 * so it works after the process is gone. IP -> function, file:line
 * (dwfl_module_getsrc); data address -> global symbol (dwfl_module_addrinfo). */
#include "prof/prof_internal.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int pid, gen;
    Dwfl *dwfl;
    prof_map_t *seg; /* the address space: non-overlapping, sorted (names borrowed) */
    size_t nseg;
} image_t;

#define CACHE 8192
typedef struct {
    int pid, gen;
    uint64_t ip;
    bool is_return, used;
    prof_loc_t loc;
} cache_t;

struct prof_sym {
    prof_session_t *s;
    VEC(image_t) img;
    cache_t *cache;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

prof_sym_t *prof_sym_create(prof_session_t *s)
{
    prof_sym_t *y = calloc(1, sizeof *y);
    if (y) {
        y->s = s;
        y->cache = calloc(CACHE, sizeof *y->cache);
    }
    return y;
}

void prof_sym_destroy(prof_sym_t *y)
{
    if (!y)
        return;
    for (size_t i = 0; i < y->img.n; i++) {
        if (y->img.v[i].dwfl)
            dwfl_end(y->img.v[i].dwfl);
        free(y->img.v[i].seg);
    }
    free(y->img.v);
    free(y->cache);
    free(y);
}

static int gen_at(const prof_session_t *s, int pid, uint64_t time)
{
    for (size_t i = 0; i < s->procs.n; i++) {
        const prof_proc_t *p = &s->procs.v[i];
        if (p->pid != pid)
            continue;
        int g = 0;
        for (int k = 0; k < p->gen && k < 8; k++)
            if (time >= p->exec_time[k])
                g = k + 1;
        return g;
    }
    return 0;
}

/* Replay the mmap records in order: a later mapping replaces whatever it
 * overlaps (ld.so maps a whole library, then its segments over it). */
static void overlay(image_t *im, const prof_map_t *m)
{
    size_t n = 0;
    prof_map_t *out = malloc((im->nseg * 2 + 1) * sizeof *out);
    if (!out)
        return;
    for (size_t i = 0; i < im->nseg; i++) {
        prof_map_t o = im->seg[i];
        if (o.end <= m->start || o.start >= m->end) {
            out[n++] = o;
            continue;
        }
        if (o.start < m->start) {
            prof_map_t l = o;
            l.end = m->start;
            out[n++] = l;
        }
        if (o.end > m->end) {
            prof_map_t r = o;
            if (r.name && r.name[0] == '/')
                r.pgoff += m->end - o.start;
            r.start = m->end;
            out[n++] = r;
        }
    }
    out[n++] = *m;
    free(im->seg);
    im->seg = out;
    im->nseg = n;
}

static int by_start(const void *a, const void *b)
{
    const prof_map_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static Dwfl *build(prof_sym_t *y, image_t *im)
{
    for (size_t i = 0; i < y->s->maps.n; i++) {
        const prof_map_t *p = &y->s->maps.v[i];
        if (p->pid == im->pid && p->gen == im->gen)
            overlay(im, p);
    }
    if (im->nseg)
        qsort(im->seg, im->nseg, sizeof *im->seg, by_start);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    for (size_t i = 0; i < im->nseg; i++) {
        const prof_map_t *p = &im->seg[i];
        if (!p->name || p->name[0] != '/')
            continue;
        fprintf(m, "%lx-%lx %c%c%c%c %08lx %02x:%02x %lu %s\n", (unsigned long)p->start, (unsigned long)p->end,
                (p->prot & 1) ? 'r' : '-', (p->prot & 2) ? 'w' : '-', (p->prot & 4) ? 'x' : '-', 'p',
                (unsigned long)p->pgoff, p->maj, p->min, (unsigned long)p->ino, p->name);
    }
    fclose(m);
    if (getenv("LOCUS_PROF_DEBUG_MAPS"))
        fprintf(stderr, "maps of pid %d gen %d:\n%s", im->pid, im->gen, text ? text : "");
    Dwfl *d = dwfl_begin(&callbacks);
    if (d) {
        FILE *f = fmemopen(text, len ? len : 1, "r");
        dwfl_report_begin(d);
        if (f) {
            if (len)
                dwfl_linux_proc_maps_report(d, f);
            fclose(f);
        }
        dwfl_report_end(d, NULL, NULL);
    }
    free(text);
    return d;
}

static image_t *image_for(prof_sym_t *y, int pid, uint64_t time)
{
    int gen = gen_at(y->s, pid, time);
    for (size_t i = 0; i < y->img.n; i++)
        if (y->img.v[i].pid == pid && y->img.v[i].gen == gen)
            return &y->img.v[i];
    image_t im = {pid, gen, NULL, NULL, 0};
    im.dwfl = build(y, &im);
    VEC_PUSH(y->img, im);
    return &y->img.v[y->img.n - 1];
}

static Dwfl *dwfl_for(prof_sym_t *y, int pid, uint64_t time) { return image_for(y, pid, time)->dwfl; }

bool prof_runtime_module(const char *m)
{
    return !strncmp(m, "libc.so", 7) || !strncmp(m, "libstdc++", 9) || !strncmp(m, "liblocus_prof_preload", 21) ||
           !strncmp(m, "libgfortran", 11) || !strncmp(m, "ld-linux", 8) || !strncmp(m, "libm.so", 7) ||
           !strncmp(m, "libgcc_s", 8) || !strncmp(m, "libpthread", 10) ||
           /* OpenMP runtimes: a parallel region's code is the program's outlined function */
           !strncmp(m, "libgomp", 7) || !strncmp(m, "libomp", 6) || !strncmp(m, "libiomp", 7);
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

static void sym_ip(prof_sym_t *y, Dwfl *d, uint64_t ip, bool is_return, prof_loc_t *out);

void prof_sym_ip(prof_sym_t *y, int pid, uint64_t time, uint64_t ip, bool is_return, prof_loc_t *out)
{
    image_t *im = image_for(y, pid, time);
    cache_t *c = y->cache ? &y->cache[(ip * 0x9E3779B97F4A7C15ull >> 51) % CACHE] : NULL;
    if (c && c->used && c->ip == ip && c->pid == pid && c->gen == im->gen && c->is_return == is_return) {
        *out = c->loc;
        return;
    }
    sym_ip(y, im->dwfl, ip, is_return, out);
    if (c)
        *c = (cache_t){pid, im->gen, ip, is_return, true, *out};
}

static void sym_ip(prof_sym_t *y, Dwfl *d, uint64_t ip, bool is_return, prof_loc_t *out)
{
    (void)y;
    memset(out, 0, sizeof *out);
    out->offset = ip;
    Dwfl_Module *mod = d ? dwfl_addrmodule(d, ip) : NULL;
    if (!mod) {
        snprintf(out->module, sizeof out->module, "?");
        return;
    }
    Dwarf_Addr low = 0;
    const char *mname = dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
    snprintf(out->module, sizeof out->module, "%s", mname ? base_name(mname) : "?");
    out->offset = ip - low;
    uint64_t q = is_return ? ip - 1 : ip;
    const char *fn = dwfl_module_addrname(mod, q);
    if (fn) {
        snprintf(out->func, sizeof out->func, "%s", fn);
        out->has_symbols = true;
    }
    if (prof_runtime_module(out->module))
        return; /* its lines are never shown: skip loading its DWARF */
    Dwfl_Line *line = dwfl_module_getsrc(mod, q);
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (file && lineno > 0) {
        snprintf(out->file, sizeof out->file, "%s", file);
        out->line = lineno;
        out->has_lines = true;
    }
}

/* The file-backed segment just below addr (the .bss tail of a module sits
 * in an anonymous mapping after it). */
static const prof_map_t *file_below(image_t *im, uint64_t addr)
{
    const prof_map_t *best = NULL;
    for (size_t i = 0; i < im->nseg && im->seg[i].start <= addr; i++)
        if (im->seg[i].name && im->seg[i].name[0] == '/' && im->seg[i].end <= addr)
            best = &im->seg[i];
    return best;
}

bool prof_sym_global(prof_sym_t *y, int pid, uint64_t time, uint64_t addr, char *name, size_t cap,
                     uint64_t *start, uint64_t *size)
{
    Dwfl *d = dwfl_for(y, pid, time);
    if (!d)
        return false;
    Dwfl_Module *mod = dwfl_addrmodule(d, addr);
    if (!mod) {
        /* .bss beyond the file mapping: the module just below (addrinfo
         * checks the symbol's size) */
        const prof_map_t *m = file_below(image_for(y, pid, time), addr);
        if (m && addr - m->end < (64u << 20))
            mod = dwfl_addrmodule(d, m->end - 1);
    }
    if (!mod)
        return false;
    const char *mname = NULL;
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mname, NULL);
    if (mname && strstr(mname, "liblocus_prof_preload"))
        return false; /* the profiler's own state is not the program's */
    GElf_Off off = 0;
    GElf_Sym sym;
    GElf_Addr bias = 0;
    const char *n = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, &bias);
    if (!n || (GELF_ST_TYPE(sym.st_info) != STT_OBJECT && GELF_ST_TYPE(sym.st_info) != STT_TLS))
        return false;
    if (sym.st_size && off >= sym.st_size)
        return false;
    snprintf(name, cap, "%s", n);
    *start = addr - off;
    *size = sym.st_size;
    return true;
}

const prof_map_t *prof_sym_map(prof_sym_t *y, int pid, uint64_t time, uint64_t addr)
{
    image_t *im = image_for(y, pid, time);
    size_t lo = 0, hi = im->nseg;
    while (lo < hi) { /* last segment starting at or below addr */
        size_t mid = (lo + hi) / 2;
        if (im->seg[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && addr < im->seg[lo - 1].end)
        return &im->seg[lo - 1];
    return NULL;
}

void prof_loc_str(const prof_loc_t *l, char *buf, size_t cap)
{
    if (l->has_lines)
        snprintf(buf, cap, "%s:%d", base_name(l->file), l->line);
    else if (l->has_symbols)
        snprintf(buf, cap, "%s (%s)", l->func, l->module);
    else
        snprintf(buf, cap, "%s+0x%lx", l->module, (unsigned long)l->offset);
}
