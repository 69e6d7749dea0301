/* topo: the `locus topo` output, as a table and as JSON.
 *
 * JSON keys (stable; add new keys, never rename):
 *   origin        "local" | "xml" | "synthetic"
 *   origin_arg    XML path or synthetic description (null for local)
 *   nodes[]       {index, os_index, memory_bytes, memory_only (no cpus at all), cpus[] (usable)}
 *   distances     num_nodes x num_nodes matrix by node index (10 = local, -1 unknown)
 *   distance_source  "hwloc" | "sysfs" | "default"
 *   cpus[]        OS numbers of the cpus usable by this process
 *   l3[]          {index, size_bytes, size_source ("hwloc"|"sysfs"|"default"),
 *                  cache_level (3; 2 or 1 if no L3; 0 = package/machine), cpus[]}
 *   pages         {base, thp_mode ("unavailable"|"never"|"madvise"|"always"),
 *                  thp_size, hugepools[] {page_size, total_pages, free_pages}}
 *   notes[]       one string per fallback taken while loading
 */
#include "topo/topo_internal.h"

#include "core/error.h"

#include <stdio.h>
#include <string.h>

const char *topo_source_name(locus_topo_source_t s)
{
    switch (s) {
    case LOCUS_TOPO_SRC_HWLOC:   return "hwloc";
    case LOCUS_TOPO_SRC_SYSFS:   return "sysfs";
    case LOCUS_TOPO_SRC_DEFAULT: return "default";
    }
    return "unknown";
}

static const char *origin_name(topo_origin_t o)
{
    return o == TOPO_ORIGIN_XML ? "xml" : o == TOPO_ORIGIN_SYNTHETIC ? "synthetic" : "local";
}

void topo_format_cpulist(const int *cpus, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, len, "-");
        return;
    }
    for (int i = 0; i < n && used < len;) {
        int j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, len - used, "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
                      : snprintf(buf + used, len - used, "%s%d", i ? "," : "", cpus[i]);
        if (w < 0 || (size_t)w >= len - used) {
            if (len > 4)
                strcpy(buf + len - 4, "...");
            return;
        }
        used += (size_t)w;
        i = j + 1;
    }
}

void topo_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= (1ull << (10 * (u + 1))))
        u++;
    uint64_t scale = 1ull << (10 * u);
    if (bytes % scale == 0)
        snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / scale), unit[u]);
    else
        snprintf(buf, len, "%.1f %s", (double)bytes / (double)scale, unit[u]);
}

/* ------------------------------------------------------------------ table */

static void print_nodes(const locus_topo_t *t, FILE *f)
{
    char cpus[256], mem[32];
    fprintf(f, "NUMA nodes: %d\n  %-5s %-8s %-12s %-12s %s\n", t->num_nodes, "index", "os_index", "memory",
            "kind", "cpus");
    for (int i = 0; i < t->num_nodes; i++) {
        const topo_node_t *n = &t->nodes[i];
        topo_format_cpulist(n->cpus, n->num_cpus, cpus, sizeof cpus);
        topo_format_size(n->memory_bytes, mem, sizeof mem);
        fprintf(f, "  %-5d %-8d %-12s %-12s %s\n", i, n->os_index, mem, n->hw_cpus == 0 ? "memory-only" : n->num_cpus ? "cpus+memory" : "no-usable-cpu",
                cpus);
    }
}

static void print_distances(const locus_topo_t *t, FILE *f)
{
    fprintf(f, "\nNode distances (by os_index; source %s; 10 = local, -1 = unknown):\n      ",
            topo_source_name(t->distance_source));
    for (int b = 0; b < t->num_nodes; b++)
        fprintf(f, " %5d", t->nodes[b].os_index);
    fputc('\n', f);
    for (int a = 0; a < t->num_nodes; a++) {
        fprintf(f, "  %3d:", t->nodes[a].os_index);
        for (int b = 0; b < t->num_nodes; b++)
            fprintf(f, " %5d", t->distance[a * t->num_nodes + b]);
        fputc('\n', f);
    }
}

static void print_l3(const locus_topo_t *t, FILE *f)
{
    char cpus[256], size[32];
    topo_format_cpulist(t->cpus, t->num_cpus, cpus, sizeof cpus);
    fprintf(f, "\nCPUs usable: %d (%s)\n", t->num_cpus, cpus);
    fprintf(f, "\nShared L3 domains: %d\n  %-5s %-12s %-8s %s\n", t->num_l3, "index", "size", "source", "cpus");
    for (int i = 0; i < t->num_l3; i++) {
        const topo_l3_t *d = &t->l3[i];
        topo_format_cpulist(d->cpus, d->num_cpus, cpus, sizeof cpus);
        topo_format_size(d->size_bytes, size, sizeof size);
        fprintf(f, "  %-5d %-12s %-8s %s\n", i, size, topo_source_name(d->size_source), cpus);
    }
}

static void print_pages(const locus_topo_t *t, FILE *f)
{
    char a[32], b[32];
    topo_format_size(t->base_page, a, sizeof a);
    topo_format_size(t->thp_size, b, sizeof b);
    fprintf(f, "\nPages%s:\n  base page   %s\n  THP         %s (%s)\n", t->origin == TOPO_ORIGIN_LOCAL ? "" : " (this machine's)",
            a, locus_thp_mode_name(t->thp_mode), t->thp_size ? b : "none");
    if (t->num_hugepools == 0)
        fprintf(f, "  hugetlb     none\n");
    for (int i = 0; i < t->num_hugepools; i++) {
        topo_format_size(t->hugepools[i].page_size, a, sizeof a);
        fprintf(f, "  hugetlb     %-8s reserved %llu, free %llu\n", a, (unsigned long long)t->hugepools[i].total_pages,
                (unsigned long long)t->hugepools[i].free_pages);
    }
}

locus_status_t locus_topo_print(const locus_topo_t *t, FILE *f)
{
    if (!t || !f)
        return lc_err(LOCUS_ERR_INVALID, "locus_topo_print: %s is NULL", t ? "stream" : "topo");
    if (t->origin != TOPO_ORIGIN_LOCAL)
        fprintf(f, "Topology from %s '%s' (not this machine)\n\n", origin_name(t->origin), t->origin_arg);
    print_nodes(t, f);
    print_distances(t, f);
    print_l3(t, f);
    print_pages(t, f);
    fprintf(f, "\nNotes:%s", t->notes.len ? "\n" : " none\n");
    for (const char *p = lc_notes_text(&t->notes); *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "  - %.*s\n", len, p);
        p += len + (nl ? 1 : 0);
    }
    return ferror(f) ? lc_err(LOCUS_ERR_SYSTEM, "locus_topo_print: write error") : LOCUS_OK;
}

/* ------------------------------------------------------------------- JSON */

static void json_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_ints(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputc(']', f);
}

static void json_nodes(const locus_topo_t *t, FILE *f)
{
    fprintf(f, "  \"nodes\": [");
    for (int i = 0; i < t->num_nodes; i++) {
        const topo_node_t *n = &t->nodes[i];
        fprintf(f, "%s\n    {\"index\": %d, \"os_index\": %d, \"memory_bytes\": %llu, \"memory_only\": %s, \"cpus\": ",
                i ? "," : "", i, n->os_index, (unsigned long long)n->memory_bytes, n->hw_cpus ? "false" : "true");
        json_ints(f, n->cpus, n->num_cpus);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"distances\": [");
    for (int a = 0; a < t->num_nodes; a++) {
        fprintf(f, "%s\n    ", a ? "," : "");
        json_ints(f, t->distance + a * t->num_nodes, t->num_nodes);
    }
    fprintf(f, "\n  ],\n  \"distance_source\": \"%s\",\n", topo_source_name(t->distance_source));
}

static void json_l3(const locus_topo_t *t, FILE *f)
{
    fprintf(f, "  \"cpus\": ");
    json_ints(f, t->cpus, t->num_cpus);
    fprintf(f, ",\n  \"l3\": [");
    for (int i = 0; i < t->num_l3; i++) {
        const topo_l3_t *d = &t->l3[i];
        fprintf(f, "%s\n    {\"index\": %d, \"size_bytes\": %llu, \"size_source\": \"%s\", \"cache_level\": %d, \"cpus\": ",
                i ? "," : "", i, (unsigned long long)d->size_bytes, topo_source_name(d->size_source), d->level);
        json_ints(f, d->cpus, d->num_cpus);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n");
}

static void json_pages(const locus_topo_t *t, FILE *f)
{
    fprintf(f, "  \"pages\": {\"base\": %llu, \"thp_mode\": \"%s\", \"thp_size\": %llu, \"hugepools\": [",
            (unsigned long long)t->base_page, locus_thp_mode_name(t->thp_mode), (unsigned long long)t->thp_size);
    for (int i = 0; i < t->num_hugepools; i++)
        fprintf(f, "%s{\"page_size\": %llu, \"total_pages\": %llu, \"free_pages\": %llu}", i ? ", " : "",
                (unsigned long long)t->hugepools[i].page_size, (unsigned long long)t->hugepools[i].total_pages,
                (unsigned long long)t->hugepools[i].free_pages);
    fprintf(f, "]},\n");
}

locus_status_t locus_topo_print_json(const locus_topo_t *t, FILE *f)
{
    if (!t || !f)
        return lc_err(LOCUS_ERR_INVALID, "locus_topo_print_json: %s is NULL", t ? "stream" : "topo");
    fprintf(f, "{\n  \"origin\": \"%s\",\n  \"origin_arg\": ", origin_name(t->origin));
    if (t->origin_arg)
        json_str(f, t->origin_arg, strlen(t->origin_arg));
    else
        fprintf(f, "null");
    fprintf(f, ",\n");
    json_nodes(t, f);
    json_l3(t, f);
    json_pages(t, f);
    fprintf(f, "  \"notes\": [");
    int k = 0;
    for (const char *p = lc_notes_text(&t->notes); *p; k++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%s\n    ", k ? "," : "");
        json_str(f, p, len);
        p += len + (nl ? 1 : 0);
    }
    fprintf(f, "%s]\n}\n", k ? "\n  " : "");
    return ferror(f) ? lc_err(LOCUS_ERR_SYSTEM, "locus_topo_print_json: write error") : LOCUS_OK;
}
