/* The standard RMA types (TYPE, TYPENAME) of OpenSHMEM 1.5, for tests. */
#ifndef TTYPES_H
#define TTYPES_H
#include <stddef.h>
#include <stdint.h>

#define T_RMA_TYPES(X)            \
    X(float, float)               \
    X(double, double)             \
    X(long double, longdouble)    \
    X(char, char)                 \
    X(signed char, schar)         \
    X(short, short)               \
    X(int, int)                   \
    X(long, long)                 \
    X(long long, longlong)        \
    X(unsigned char, uchar)       \
    X(unsigned short, ushort)     \
    X(unsigned int, uint)         \
    X(unsigned long, ulong)       \
    X(unsigned long long, ulonglong) \
    X(int8_t, int8)               \
    X(int16_t, int16)             \
    X(int32_t, int32)             \
    X(int64_t, int64)             \
    X(uint8_t, uint8)             \
    X(uint16_t, uint16)           \
    X(uint32_t, uint32)           \
    X(uint64_t, uint64)           \
    X(size_t, size)               \
    X(ptrdiff_t, ptrdiff)

/* Standard AMO types. */
#define T_AMO_STD_TYPES(X)        \
    X(int, int)                   \
    X(long, long)                 \
    X(long long, longlong)        \
    X(unsigned int, uint)         \
    X(unsigned long, ulong)       \
    X(unsigned long long, ulonglong) \
    X(int32_t, int32)             \
    X(int64_t, int64)             \
    X(uint32_t, uint32)           \
    X(uint64_t, uint64)           \
    X(size_t, size)               \
    X(ptrdiff_t, ptrdiff)

/* Standard AMO types Open MPI 4.1 (1.4) has too, and the rest. */
#define T_AMO_STD_BASIC_TYPES(X)  \
    X(int, int)                   \
    X(long, long)                 \
    X(long long, longlong)        \
    X(unsigned int, uint)         \
    X(unsigned long, ulong)       \
    X(unsigned long long, ulonglong)
#define T_AMO_STD_FIXED_TYPES(X)  \
    X(int32_t, int32)             \
    X(int64_t, int64)             \
    X(uint32_t, uint32)           \
    X(uint64_t, uint64)           \
    X(size_t, size)               \
    X(ptrdiff_t, ptrdiff)

/* Extended AMO types beyond the standard ones (fetch, set, swap only). */
#define T_AMO_EXT_TYPES(X) \
    X(float, float)        \
    X(double, double)

/* Bitwise AMO types: 1.5's table, then int, long and long long (an
 * extension Open MPI 4.1 and OSSS have too; locus has it for their programs). */
#define T_AMO_BIT_TYPES(X)        \
    X(unsigned int, uint)         \
    X(unsigned long, ulong)       \
    X(unsigned long long, ulonglong) \
    X(int32_t, int32)             \
    X(int64_t, int64)             \
    X(uint32_t, uint32)           \
    X(uint64_t, uint64)           \
    X(int, int)                   \
    X(long, long)                 \
    X(long long, longlong)

/* Point-to-point synchronization types (1.5). */
#define T_P2P_TYPES(X)            \
    X(int, int)                   \
    X(long, long)                 \
    X(long long, longlong)        \
    X(unsigned int, uint)         \
    X(unsigned long, ulong)       \
    X(unsigned long long, ulonglong) \
    X(int32_t, int32)             \
    X(int64_t, int64)             \
    X(uint32_t, uint32)           \
    X(uint64_t, uint64)           \
    X(size_t, size)               \
    X(ptrdiff_t, ptrdiff)

/* A value of TYPE for element i of PE pe's pattern, exact in every type. */
#define T_VAL(TYPE, pe, i) ((TYPE)((((pe) + 1) * 37 + (i) * 3) % 101))
#endif
