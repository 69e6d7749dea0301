/* A team's members in world PE numbers. WORLD, every strided or 2-D split of
 * a progression, and SHARED under block or round-robin placement over equal
 * nodes are progressions (start, stride): that is what a team holds in the
 * common case, and member i costs one multiply. SHARED can be the exception:
 * a node can hold world PEs that form no progression (mpirun --map-by node
 * over nodes of 3 and 1 slots puts 0, 2, 3 on one node and 1 on the
 * other), and the spec wants the team to be every PE whose heap shmem_ptr
 * reaches. Such a team, and the teams split from it, keep an explicit list
 * instead. Pure functions over lshm_team_t's member fields (no job state),
 * so unit tests drive them. */
#include "shmem/shmem_internal.h"

#include <stdlib.h>
#include <string.h>

/* The index of world PE w in the progression (start, stride, size), or -1.
 * A stride may be negative (1.6: the members listed downwards) or, for a
 * team of one, zero. */
static int progression_index(int start, int stride, int size, int w)
{
    int rel = w - start;
    if (!stride)
        return rel ? -1 : 0;
    if (rel % stride)
        return -1;
    int idx = rel / stride;
    return idx >= 0 && idx < size ? idx : -1;
}

int lshm_team_index(const lshm_team_t *t, int w)
{
    if (!t->pes)
        return progression_index(t->start, t->stride, t->size, w);
    for (int i = 0; i < t->size; i++)
        if (t->pes[i] == w)
            return i;
    return -1;
}

lshm_team_t *lshm_team_of(const int *w, int n, int me)
{
    if (n < 1)
        return NULL;
    lshm_team_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    int stride = n > 1 ? w[1] - w[0] : 1;
    bool progression = stride != 0;
    for (int i = 2; progression && i < n; i++)
        progression = w[i] - w[i - 1] == stride;
    *t = (lshm_team_t){.magic = LSHM_TEAM_MAGIC, .start = w[0], .stride = stride, .size = n};
    if (!progression) {
        t->pes = malloc((size_t)n * sizeof *t->pes);
        if (!t->pes) {
            free(t);
            return NULL;
        }
        memcpy(t->pes, w, (size_t)n * sizeof *w);
    }
    t->my_idx = lshm_team_index(t, me);
    return t;
}

lshm_team_t *lshm_team_sub(const lshm_team_t *parent, int start, int stride, int size, int me)
{
    if (size < 1)
        return NULL;
    int *w = malloc((size_t)size * sizeof *w);
    if (!w)
        return NULL;
    for (int i = 0; i < size; i++)
        w[i] = lshm_team_pe(parent, start + i * stride);
    lshm_team_t *t = lshm_team_of(w, size, me);
    free(w);
    return t;
}

void lshm_team_free(lshm_team_t *t)
{
    if (!t)
        return;
    free(t->pes);
    t->magic = 0;
    free(t);
}
