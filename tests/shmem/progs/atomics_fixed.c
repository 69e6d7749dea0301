/* atomics.c for every standard AMO type, 32-bit compare_swap included:
 * checked against the spec only (Open MPI 4.1.4 lacks the int32, int64,
 * uint32, uint64, size and ptrdiff AMOs and its 32-bit compare_swap smashes
 * the stack). */
#include "ttypes.h"
#define T_AMO_LIST T_AMO_STD_TYPES
#define T_CSWAP32 1
#include "atomics.c"
