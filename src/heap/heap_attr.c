/* Heap attributes: defaults, LOCUS_HEAP_* environment, text parsers. */
#include "heap/heap_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char POLICY_ACCEPTED[] =
    "interleave, interleave:NODES, firsttouch, bind:NODES, local or local:NODES "
    "(NODES like 1 or 0,2 or 0-3)";

/* The heap's tunables and the attribute fields they fill (defaults: tunables.def). */
static locus_status_t bind_policy(const char *value, void *attr)
{
    return locus_heap_parse_policy(value, attr);
}

static const lc_tun_bind_t heap_binds[] = {
    LC_BIND_PCT(HEAP_SIZE, locus_heap_attr_t, size, percent),
    LC_BIND(HEAP_PROCS, locus_heap_attr_t, procs),
    LC_BIND_FN(HEAP_POLICY, bind_policy),
    LC_BIND(HEAP_PAGES, locus_heap_attr_t, pages),
    LC_BIND(HEAP_THREADS, locus_heap_attr_t, threads),
    LC_BIND(HEAP_VERIFY, locus_heap_attr_t, verify),
    LC_BIND(HEAP_CHUNK, locus_heap_attr_t, chunk),
    LC_BIND(HEAP_SAMPLES, locus_heap_attr_t, samples),
    LC_BIND(HEAP_FAULT_ORDER, locus_heap_attr_t, fault_order),
    LC_BIND(HEAP_PRIVATE_TMPFS, locus_heap_attr_t, private_tmpfs),
    LC_BIND(HEAP_POPULATE, locus_heap_attr_t, populate),
};

void locus_heap_attr_init(locus_heap_attr_t *a)
{
    memset(a, 0, sizeof *a);
    /* the table's defaults always parse (tests/unit/test_core.cc checks) */
    (void)lc_tun_load(heap_binds, sizeof heap_binds / sizeof *heap_binds, a, sizeof *a,
                      LC_TUN_DEFAULTS);
}

const char *locus_heap_policy_name(locus_heap_policy_t p)
{
    static const char *n[] = {"interleave", "firsttouch", "bind", "local"};
    return (unsigned)p < 4 ? n[p] : "?";
}

const char *locus_heap_pages_name(locus_heap_pages_t p)
{
    static const char *n[] = {"4k", "thp", "huge2m", "huge1g", "auto"};
    return (unsigned)p < 5 ? n[p] : "?";
}

const char *locus_heap_verify_name(locus_heap_verify_t v)
{
    static const char *n[] = {"all", "sample", "none"};
    return (unsigned)v < 3 ? n[v] : "?";
}

const char *locus_heap_populate_name(locus_heap_populate_t p)
{
    static const char *n[] = {"auto", "eager", "reserve"};
    return (unsigned)p < 3 ? n[p] : "?";
}

/* "0,2-3" -> nodes; false on any syntax error, duplicate or > 1023. */
static bool parse_nodes(const char *s, int *nodes, int *count)
{
    int n = 0;
    if (!*s)
        return false;
    while (*s) {
        if (!isdigit((unsigned char)*s))
            return false;
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1]))
                return false;
            b = strtol(end + 1, &end, 10);
        }
        if (a < 0 || b < a || b > 1023)
            return false;
        for (long v = a; v <= b; v++) {
            for (int i = 0; i < n; i++)
                if (nodes[i] == v)
                    return false;
            if (n == LOCUS_HEAP_MAX_NODES)
                return false;
            nodes[n++] = (int)v;
        }
        if (*end == ',' && end[1])
            end++;
        else if (*end)
            return false;
        s = end;
    }
    *count = n;
    return true;
}

locus_status_t locus_heap_parse_policy(const char *text, locus_heap_attr_t *attr)
{
    static const char *names[] = {"interleave", "firsttouch", "bind", "local"};
    if (!text)
        text = "";
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    int nodes[LOCUS_HEAP_MAX_NODES], count = 0;
    for (int p = 0; p < 4; p++) {
        if (strlen(names[p]) != len || strncasecmp(text, names[p], len))
            continue;
        bool ok;
        if (p == LOCUS_HEAP_FIRSTTOUCH)
            ok = !colon;
        else if (p == LOCUS_HEAP_BIND)
            ok = colon && parse_nodes(colon + 1, nodes, &count);
        else
            ok = !colon || parse_nodes(colon + 1, nodes, &count);
        if (!ok)
            break;
        if (attr) {
            attr->policy = (locus_heap_policy_t)p;
            attr->num_nodes = count;
            memcpy(attr->nodes, nodes, sizeof(int) * (size_t)count);
        }
        return LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_INVALID, "policy '%s': expected %s", text, POLICY_ACCEPTED);
}

locus_status_t heap_validate_policy(const char *value)
{
    return locus_heap_parse_policy(value, NULL);
}

locus_status_t locus_heap_parse_pages(const char *text, locus_heap_pages_t *out)
{
    int i;
    if (lc_parse_choice(text, "4k|thp|huge2m|huge1g|auto", &i) != LOCUS_OK)
        return lc_err(LOCUS_ERR_INVALID, "pages '%s': expected one of 4k, thp, huge2m, huge1g, auto",
                         text ? text : "");
    *out = (locus_heap_pages_t)i;
    return LOCUS_OK;
}

locus_status_t locus_heap_parse_verify(const char *text, locus_heap_verify_t *out)
{
    int i;
    if (lc_parse_choice(text, "all|sample|none", &i) != LOCUS_OK)
        return lc_err(LOCUS_ERR_INVALID, "verify '%s': expected one of all, sample, none",
                         text ? text : "");
    *out = (locus_heap_verify_t)i;
    return LOCUS_OK;
}

/* All or nothing: a bad variable leaves attr as it was. */
locus_status_t locus_heap_attr_from_env(locus_heap_attr_t *attr)
{
    return lc_tun_load(heap_binds, sizeof heap_binds / sizeof *heap_binds, attr, sizeof *attr,
                       LC_TUN_ENV);
}

LC_TUN_VALIDATOR(HEAP_POLICY, heap_validate_policy)
