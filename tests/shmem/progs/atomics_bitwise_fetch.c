/* atomics_bitwise.c with the fetch forms (fetch_and, fetch_or, fetch_xor):
 * checked against the spec only (Open MPI 4.1.4's do not work). */
#define T_BIT_FETCH 1
#include "atomics_bitwise.c"
