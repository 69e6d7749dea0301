/* Runs inside the locus-vm --rdma guest: the Soft-RoCE device is usable through
 * real libibverbs. Finds rxe0, queries it, registers a touched 4 MiB buffer and
 * deregisters it. Prints "vm-rdma-smoke: ok" or the first failure (exit 1). */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    printf("vm-rdma-smoke: FAIL: %s\n", what);
    return 1;
}

int main(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list)
        return fail("ibv_get_device_list returned NULL");
    struct ibv_device *dev = NULL;
    for (int i = 0; i < n; i++) {
        printf("device %d: %s\n", i, ibv_get_device_name(list[i]));
        if (strcmp(ibv_get_device_name(list[i]), "rxe0") == 0)
            dev = list[i];
    }
    if (!dev)
        return fail("no rxe0 device");
    struct ibv_context *ctx = ibv_open_device(dev);
    if (!ctx)
        return fail("ibv_open_device(rxe0)");
    struct ibv_device_attr attr;
    if (ibv_query_device(ctx, &attr) != 0)
        return fail("ibv_query_device");
    printf("rxe0: max_mr %d max_qp %d max_sge %d max_mr_size %llu\n", attr.max_mr, attr.max_qp,
           attr.max_sge, (unsigned long long)attr.max_mr_size);
    if (attr.max_mr <= 0 || attr.max_qp <= 0)
        return fail("device reports no MRs or QPs");
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd)
        return fail("ibv_alloc_pd");
    size_t len = 4u << 20;
    char *buf = malloc(len);
    if (!buf)
        return fail("malloc");
    memset(buf, 0x5a, len);
    struct ibv_mr *mr =
        ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!mr)
        return fail("ibv_reg_mr(4 MiB)");
    printf("registered 4 MiB: lkey 0x%x rkey 0x%x length %zu\n", mr->lkey, mr->rkey, mr->length);
    if (mr->length != len || mr->addr != buf)
        return fail("MR does not cover the buffer");
    if (ibv_dereg_mr(mr) != 0 || ibv_dealloc_pd(pd) != 0 || ibv_close_device(ctx) != 0)
        return fail("teardown");
    ibv_free_device_list(list);
    free(buf);
    printf("vm-rdma-smoke: ok\n");
    return 0;
}
