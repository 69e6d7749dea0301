/* The benchmark record (see bench_json.h): buffered sections, written as one
 * JSON object at the end. */
#include "bench_json.h"

#include <locus/locus.h>

#include "core/sysfs.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *p;
    size_t len, cap;
    bool failed;
} buf_t;

enum { S_PARAMS, S_SUMMARY, S_ROWS, S_PEERS, S_NOTES, S_COUNT };

struct bench_json {
    char benchmark[64];
    buf_t sec[S_COUNT];
    int count[S_COUNT];
    int open_row;   /* section of the row still open for extras, or -1 */
    int row_extras; /* extras already written to it */
};

static void put(buf_t *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }

static void putf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_str(buf_t *b, const char *s)
{
    put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            put(b, e, 2);
        } else if (*c == '\n')
            put(b, "\\n", 2);
        else if (*c == '\t')
            put(b, "\\t", 2);
        else if (*c < 0x20)
            putf(b, "\\u%04x", *c);
        else
            put(b, (const char *)c, 1);
    }
    put(b, "\"", 1);
}

/* Integers exactly (sizes in bytes), everything else to 6 significant
 * digits (more than any measurement here carries); NaN/inf as null. */
static void put_num(buf_t *b, double v)
{
    if (!isfinite(v))
        puts_(b, "null");
    else if (v == floor(v) && fabs(v) < 1e15)
        putf(b, "%.0f", v);
    else
        putf(b, "%.6g", v);
}

bench_json_t *bench_json_begin(const char *benchmark)
{
    bench_json_t *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    snprintf(j->benchmark, sizeof j->benchmark, "%s", benchmark);
    j->open_row = -1;
    return j;
}

/* Close the row open for extras, if any. */
static void close_row(bench_json_t *j)
{
    if (j->open_row < 0)
        return;
    puts_(&j->sec[j->open_row], j->row_extras ? "}}" : "}");
    j->open_row = -1;
}

/* Start the next item of section s: separator, and for objects the key. */
static buf_t *item(bench_json_t *j, int s, const char *key)
{
    if (!j)
        return NULL;
    close_row(j);
    buf_t *b = &j->sec[s];
    puts_(b, j->count[s]++ ? (s >= S_ROWS ? ",\n  " : ", ") : (s >= S_ROWS ? "\n  " : ""));
    if (key) {
        put_str(b, key);
        puts_(b, ": ");
    }
    return b;
}

void bench_json_param_str(bench_json_t *j, const char *key, const char *val)
{
    buf_t *b = item(j, S_PARAMS, key);
    if (b)
        put_str(b, val);
}

void bench_json_param_num(bench_json_t *j, const char *key, double v)
{
    buf_t *b = item(j, S_PARAMS, key);
    if (b)
        put_num(b, v);
}

void bench_json_param_bool(bench_json_t *j, const char *key, bool v)
{
    buf_t *b = item(j, S_PARAMS, key);
    if (b)
        puts_(b, v ? "true" : "false");
}

void bench_json_summary_str(bench_json_t *j, const char *key, const char *val)
{
    buf_t *b = item(j, S_SUMMARY, key);
    if (b)
        put_str(b, val);
}

void bench_json_summary_num(bench_json_t *j, const char *key, double v)
{
    buf_t *b = item(j, S_SUMMARY, key);
    if (b)
        put_num(b, v);
}

void bench_json_summary_bool(bench_json_t *j, const char *key, bool v)
{
    buf_t *b = item(j, S_SUMMARY, key);
    if (b)
        puts_(b, v ? "true" : "false");
}

static void row(bench_json_t *j, int s, const bench_row_t *r)
{
    buf_t *b = item(j, s, NULL);
    if (!b)
        return;
    puts_(b, "{\"series\": ");
    put_str(b, r->series);
    puts_(b, ", \"metric\": ");
    put_str(b, r->metric);
    puts_(b, ", \"x\": ");
    if (r->x_cat)
        put_str(b, r->x_cat);
    else
        put_num(b, r->x);
    puts_(b, ", \"x_unit\": ");
    put_str(b, r->x_unit);
    puts_(b, ", \"y\": ");
    put_num(b, r->y);
    puts_(b, ", \"y_unit\": ");
    put_str(b, r->y_unit);
    if (r->stat) {
        puts_(b, ", \"stat\": ");
        put_str(b, r->stat);
    }
    if (r->n > 0)
        putf(b, ", \"n\": %d", r->n);
    if (r->highlight)
        puts_(b, ", \"highlight\": true");
    if (r->peer) {
        puts_(b, ", \"peer\": ");
        put_str(b, r->peer);
    }
    j->open_row = s;
    j->row_extras = 0;
}

void bench_json_row(bench_json_t *j, const bench_row_t *r) { row(j, S_ROWS, r); }
void bench_json_peer_row(bench_json_t *j, const bench_row_t *r) { row(j, S_PEERS, r); }

static buf_t *extra(bench_json_t *j, const char *key)
{
    if (!j || j->open_row < 0)
        return NULL;
    buf_t *b = &j->sec[j->open_row];
    puts_(b, j->row_extras++ ? ", " : ", \"extra\": {");
    put_str(b, key);
    puts_(b, ": ");
    return b;
}

void bench_json_extra_num(bench_json_t *j, const char *key, double v)
{
    buf_t *b = extra(j, key);
    if (b)
        put_num(b, v);
}

void bench_json_extra_str(bench_json_t *j, const char *key, const char *val)
{
    buf_t *b = extra(j, key);
    if (b)
        put_str(b, val);
}

void bench_json_note(bench_json_t *j, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_t *b = item(j, S_NOTES, NULL);
    if (b)
        put_str(b, tmp);
}

/* ---------- host, command, date ---------- */

static int numa_nodes(void)
{
    locus_topo_t *t;
    if (locus_topo_load(&t) != LOCUS_OK)
        return 0;
    int n = locus_topo_num_nodes(t);
    locus_topo_destroy(t);
    return n;
}

static void put_host(buf_t *b)
{
    char model[256], vendor[64], family[16], cpu_model[16];
    lc_cpuinfo_field("model name", model, sizeof model);
    lc_cpuinfo_field("vendor_id", vendor, sizeof vendor);
    lc_cpuinfo_field("cpu family", family, sizeof family);
    lc_cpuinfo_field("model", cpu_model, sizeof cpu_model);
    struct utsname u;
    if (uname(&u))
        memset(&u, 0, sizeof u);
    puts_(b, "{\"cpu_model\": ");
    put_str(b, model);
    puts_(b, ", \"vendor\": ");
    put_str(b, vendor);
    putf(b, ", \"family\": %d, \"model\": %d", atoi(family), atoi(cpu_model));
    puts_(b, ", \"kernel\": ");
    put_str(b, u.release);
    puts_(b, ", \"hostname\": ");
    put_str(b, u.nodename);
    putf(b, ", \"cores\": %ld, \"numa_nodes\": %d}", sysconf(_SC_NPROCESSORS_ONLN), numa_nodes());
}

/* The command line as run (/proc/self/cmdline: NUL-separated). */
static void put_command(buf_t *b)
{
    puts_(b, "[");
    FILE *f = fopen("/proc/self/cmdline", "re");
    char arg[4096];
    size_t n = 0;
    int c, count = 0;
    while (f && (c = fgetc(f)) != EOF) {
        if (c && n < sizeof arg - 1) {
            arg[n++] = (char)c;
            continue;
        }
        if (c)
            continue; /* an argument longer than arg: cut */
        arg[n] = 0;
        puts_(b, count++ ? ", " : "");
        put_str(b, arg);
        n = 0;
    }
    if (f)
        fclose(f);
    puts_(b, "]");
}

static void put_section(buf_t *out, const char *key, const buf_t *s, bool list, bool multiline)
{
    putf(out, ",\n \"%s\": %s", key, list ? "[" : "{");
    if (s->p)
        puts_(out, s->p);
    puts_(out, multiline && s->len ? "\n ]" : list ? "]" : "}");
}

int bench_json_end(bench_json_t *j, FILE *out)
{
    if (!j)
        return -1;
    close_row(j);
    buf_t b = {0};
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    puts_(&b, "{\"schema\": \"" BENCH_JSON_SCHEMA "\", \"benchmark\": ");
    put_str(&b, j->benchmark);
    putf(&b, ", \"locus_version\": \"%s\", \"date\": \"%s\",\n \"host\": ", LOCUS_VERSION_STRING, date);
    put_host(&b);
    puts_(&b, ",\n \"command\": ");
    put_command(&b);
    put_section(&b, "params", &j->sec[S_PARAMS], false, false);
    put_section(&b, "summary", &j->sec[S_SUMMARY], false, false);
    put_section(&b, "rows", &j->sec[S_ROWS], true, true);
    put_section(&b, "peers", &j->sec[S_PEERS], true, true);
    put_section(&b, "notes", &j->sec[S_NOTES], true, true);
    puts_(&b, "}\n");
    bool failed = b.failed;
    for (int s = 0; s < S_COUNT; s++) {
        failed |= j->sec[s].failed;
        free(j->sec[s].p);
    }
    free(j);
    if (!failed && (fwrite(b.p, 1, b.len, out) != b.len || fflush(out)))
        failed = true;
    free(b.p);
    return failed ? -1 : 0;
}

void bench_say(const bench_json_t *j, const char *fmt, ...)
{
    if (j)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}
