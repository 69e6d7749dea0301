/* p2p.c for every point-to-point type of 1.5 (int32, int64, uint32,
 * uint64, size, ptrdiff and the unsigned ones): checked against the spec
 * only (Open MPI 4.1 lacks the atomic set of some of them). */
#define T_P2P_LIST(X)                                                                             \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)      \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#include "p2p.c"
