/* Fuzz: cpu lists and kernel sizes as sysfs prints them, and the heap's
 * node-list policies (LOCUS_HEAP_POLICY, --policy). Results are checked for
 * the invariants callers rely on. */
#include "fuzz.h"

#include "core/sysfs.h"
#include <locus/heap.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    int cpus[64];
    int n = lc_parse_cpulist(s, cpus, 64);
    if (n > 64 || n < -1)
        abort();
    for (int i = 0; i < n; i++)
        if (cpus[i] < 0)
            abort();
    (void)lc_parse_kernel_size(s);

    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    if (locus_heap_parse_policy(s, &a) == LOCUS_OK) {
        if (a.num_nodes < 0 || a.num_nodes > LOCUS_HEAP_MAX_NODES)
            abort();
        for (int i = 0; i < a.num_nodes; i++)
            if (a.nodes[i] < 0 || a.nodes[i] > 1023)
                abort();
    }
    locus_heap_pages_t p;
    locus_heap_verify_t v;
    (void)locus_heap_parse_pages(s, &p);
    (void)locus_heap_parse_verify(s, &v);
    free(s);
    return 0;
}
