/* <pshmem.h>: the OpenSHMEM profiling interface (1.5, section 10). Every
 * routine of <shmem.h> also exists as pshmem_<name> (and the deprecated
 * start_pes, shmalloc ... as pstart_pes, pshmalloc ...): the library defines
 * pshmem_* and makes shmem_* weak aliases of them, so a tool or program that
 * defines shmem_long_put itself replaces the library's and reaches the real
 * one as pshmem_long_put. The library calls its own routines by their pshmem_
 * names, so an interposed shmem_* sees only the program's calls.
 *
 * Each name is declared with the type of its shmem_ twin (__typeof__), so the
 * two cannot drift apart; the lists below follow <shmem.h>'s sections and type
 * tables. Test shmem.pshmem checks that they declare exactly the pshmem_ names
 * the library exports. No C11 generic forms: the profiling names are typed. */
#ifndef LOCUS_PSHMEM_H
#define LOCUS_PSHMEM_H

#include <shmem.h>
#include <shmemx.h>

#ifdef __cplusplus
extern "C" {
#endif

#define _LSHM_P(name) __typeof__(name) p##name;
#define _LSHM_P_CTX(name) _LSHM_P(shmem_##name) _LSHM_P(shmem_ctx_##name)
/* In C++, shmem_cxx.h overloads shmem_swap, shmem_wait, shmem_wait_until and
 * shmem_sync (and shmem_signal_add/set, below), so there their p-forms take the type of a typed twin (the same
 * C routine type); C (and the shmem.pshmem test) sees __typeof__ the name. */
#if defined(__cplusplus) && !defined(LSHM_NO_GENERICS)
#define _LSHM_P_OVL(name, twin) __typeof__(twin) p##name;
#else
#define _LSHM_P_OVL(name, twin) _LSHM_P(name)
#endif

/* setup, query, memory, teams, contexts */
_LSHM_P(shmem_init) _LSHM_P(shmem_init_thread) _LSHM_P(shmem_query_thread) _LSHM_P(shmem_finalize)
__typeof__(shmem_global_exit) pshmem_global_exit _LSHM_NORETURN;
_LSHM_P(shmem_my_pe) _LSHM_P(shmem_n_pes) _LSHM_P(shmem_pe_accessible) _LSHM_P(shmem_addr_accessible)
_LSHM_P(shmem_ptr) _LSHM_P(shmem_info_get_version) _LSHM_P(shmem_info_get_name) _LSHM_P(shmem_pcontrol)
_LSHM_P(shmem_malloc) _LSHM_P(shmem_malloc_with_hints) _LSHM_P(shmem_calloc) _LSHM_P(shmem_align)
_LSHM_P(shmem_realloc) _LSHM_P(shmem_free)
_LSHM_P(shmem_team_my_pe) _LSHM_P(shmem_team_n_pes) _LSHM_P(shmem_team_get_config)
_LSHM_P(shmem_team_translate_pe) _LSHM_P(shmem_team_split_strided) _LSHM_P(shmem_team_split_2d)
_LSHM_P(shmem_team_destroy) _LSHM_P(shmem_ctx_create) _LSHM_P(shmem_team_create_ctx)
_LSHM_P(shmem_ctx_destroy) _LSHM_P(shmem_ctx_get_team)

/* RMA: typed, sized, mem, signals */
#define _LSHM_P_RMA(T, N)                                                                          \
    _LSHM_P_CTX(N##_put) _LSHM_P_CTX(N##_get) _LSHM_P_CTX(N##_put_nbi) _LSHM_P_CTX(N##_get_nbi)    \
    _LSHM_P_CTX(N##_p) _LSHM_P_CTX(N##_g) _LSHM_P_CTX(N##_iput) _LSHM_P_CTX(N##_iget)             \
    _LSHM_P_CTX(N##_put_signal) _LSHM_P_CTX(N##_put_signal_nbi)
_LSHM_RMA_TYPES(_LSHM_P_RMA)
#define _LSHM_P_SIZED(B, U)                                                                        \
    _LSHM_P_CTX(put##B) _LSHM_P_CTX(get##B) _LSHM_P_CTX(put##B##_nbi) _LSHM_P_CTX(get##B##_nbi)    \
    _LSHM_P_CTX(iput##B) _LSHM_P_CTX(iget##B) _LSHM_P_CTX(put##B##_signal)                        \
    _LSHM_P_CTX(put##B##_signal_nbi)
_LSHM_SIZES(_LSHM_P_SIZED)
_LSHM_P_CTX(putmem) _LSHM_P_CTX(getmem) _LSHM_P_CTX(putmem_nbi) _LSHM_P_CTX(getmem_nbi)
_LSHM_P_CTX(putmem_signal) _LSHM_P_CTX(putmem_signal_nbi)
_LSHM_P(shmem_signal_fetch) _LSHM_P(shmem_signal_wait_until)

/* AMOs, and their deprecated names */
#define _LSHM_P_AMO_EXT(T, N)                                                                      \
    _LSHM_P_CTX(N##_atomic_fetch) _LSHM_P_CTX(N##_atomic_set) _LSHM_P_CTX(N##_atomic_swap)         \
    _LSHM_P_CTX(N##_atomic_fetch_nbi) _LSHM_P_CTX(N##_atomic_swap_nbi)
_LSHM_AMO_EXT_TYPES(_LSHM_P_AMO_EXT)
#define _LSHM_P_AMO_STD(T, N)                                                                      \
    _LSHM_P_CTX(N##_atomic_compare_swap) _LSHM_P_CTX(N##_atomic_fetch_inc) _LSHM_P_CTX(N##_atomic_inc) \
    _LSHM_P_CTX(N##_atomic_fetch_add) _LSHM_P_CTX(N##_atomic_add) _LSHM_P_CTX(N##_atomic_compare_swap_nbi) \
    _LSHM_P_CTX(N##_atomic_fetch_inc_nbi) _LSHM_P_CTX(N##_atomic_fetch_add_nbi)
_LSHM_AMO_STD_TYPES(_LSHM_P_AMO_STD)
#define _LSHM_P_AMO_BIT(T, N)                                                                      \
    _LSHM_P_CTX(N##_atomic_fetch_and) _LSHM_P_CTX(N##_atomic_and) _LSHM_P_CTX(N##_atomic_fetch_or) \
    _LSHM_P_CTX(N##_atomic_or) _LSHM_P_CTX(N##_atomic_fetch_xor) _LSHM_P_CTX(N##_atomic_xor)       \
    _LSHM_P_CTX(N##_atomic_fetch_and_nbi) _LSHM_P_CTX(N##_atomic_fetch_or_nbi)                     \
    _LSHM_P_CTX(N##_atomic_fetch_xor_nbi)
_LSHM_AMO_BIT_TYPES(_LSHM_P_AMO_BIT)
#define _LSHM_P_AMO_OLD(N)                                                                         \
    _LSHM_P(shmem_##N##_fadd) _LSHM_P(shmem_##N##_finc) _LSHM_P(shmem_##N##_add) _LSHM_P(shmem_##N##_inc) \
    _LSHM_P(shmem_##N##_cswap) _LSHM_P(shmem_##N##_swap) _LSHM_P(shmem_##N##_fetch) _LSHM_P(shmem_##N##_set)
_LSHM_P_AMO_OLD(int) _LSHM_P_AMO_OLD(long) _LSHM_P_AMO_OLD(longlong)
_LSHM_P(shmem_float_swap) _LSHM_P(shmem_float_fetch) _LSHM_P(shmem_float_set)
_LSHM_P(shmem_double_swap) _LSHM_P(shmem_double_fetch) _LSHM_P(shmem_double_set)
_LSHM_P_OVL(shmem_swap, shmem_long_swap)

/* point-to-point synchronization */
#define _LSHM_P_P2P(T, N)                                                                          \
    _LSHM_P(shmem_##N##_wait_until) _LSHM_P(shmem_##N##_wait_until_all) _LSHM_P(shmem_##N##_wait_until_any) \
    _LSHM_P(shmem_##N##_wait_until_some) _LSHM_P(shmem_##N##_wait_until_all_vector)                \
    _LSHM_P(shmem_##N##_wait_until_any_vector) _LSHM_P(shmem_##N##_wait_until_some_vector)         \
    _LSHM_P(shmem_##N##_test) _LSHM_P(shmem_##N##_test_all) _LSHM_P(shmem_##N##_test_any)          \
    _LSHM_P(shmem_##N##_test_some) _LSHM_P(shmem_##N##_test_all_vector)                            \
    _LSHM_P(shmem_##N##_test_any_vector) _LSHM_P(shmem_##N##_test_some_vector)
_LSHM_P2P_TYPES(_LSHM_P_P2P)
_LSHM_P2P_OLD_TYPES(_LSHM_P_P2P)
_LSHM_P(shmem_short_wait) _LSHM_P(shmem_int_wait) _LSHM_P(shmem_long_wait) _LSHM_P(shmem_longlong_wait)
_LSHM_P_OVL(shmem_wait, shmem_long_wait) _LSHM_P_OVL(shmem_wait_until, shmem_long_wait_until)

/* ordering, locks */
_LSHM_P_CTX(fence) _LSHM_P_CTX(quiet)
_LSHM_P(shmem_set_lock) _LSHM_P(shmem_clear_lock) _LSHM_P(shmem_test_lock)

/* collectives: barriers, team and active-set forms, reductions */
_LSHM_P(shmem_barrier_all) _LSHM_P(shmem_sync_all) _LSHM_P(shmem_team_sync) _LSHM_P(shmem_barrier)
_LSHM_P_OVL(shmem_sync, shmem_barrier)
#define _LSHM_P_COLL(T, N)                                                                         \
    _LSHM_P(shmem_##N##_broadcast) _LSHM_P(shmem_##N##_collect) _LSHM_P(shmem_##N##_fcollect)      \
    _LSHM_P(shmem_##N##_alltoall) _LSHM_P(shmem_##N##_alltoalls)
_LSHM_RMA_TYPES(_LSHM_P_COLL)
_LSHM_P(shmem_broadcastmem) _LSHM_P(shmem_collectmem) _LSHM_P(shmem_fcollectmem) _LSHM_P(shmem_alltoallmem)
_LSHM_P(shmem_alltoallsmem)
#define _LSHM_P_RED_BIT(T, N) _LSHM_P(shmem_##N##_and_reduce) _LSHM_P(shmem_##N##_or_reduce) _LSHM_P(shmem_##N##_xor_reduce)
#define _LSHM_P_RED_MM(T, N) _LSHM_P(shmem_##N##_max_reduce) _LSHM_P(shmem_##N##_min_reduce)
#define _LSHM_P_RED_AR(T, N) _LSHM_P(shmem_##N##_sum_reduce) _LSHM_P(shmem_##N##_prod_reduce)
_LSHM_RED_BIT_TYPES(_LSHM_P_RED_BIT)
_LSHM_RED_BIT_SIGNED_TYPES(_LSHM_P_RED_BIT)
_LSHM_RED_MINMAX_TYPES(_LSHM_P_RED_MM)
_LSHM_RED_ARITH_TYPES(_LSHM_P_RED_AR)
#define _LSHM_P_ASET(B, U)                                                                         \
    _LSHM_P(shmem_broadcast##B) _LSHM_P(shmem_collect##B) _LSHM_P(shmem_fcollect##B)               \
    _LSHM_P(shmem_alltoall##B) _LSHM_P(shmem_alltoalls##B)
_LSHM_P_ASET(32, 4)
_LSHM_P_ASET(64, 8)
#define _LSHM_P_TOALL_BIT(T, N) _LSHM_P(shmem_##N##_and_to_all) _LSHM_P(shmem_##N##_or_to_all) _LSHM_P(shmem_##N##_xor_to_all)
#define _LSHM_P_TOALL_MM(T, N) _LSHM_P(shmem_##N##_max_to_all) _LSHM_P(shmem_##N##_min_to_all)
#define _LSHM_P_TOALL_AR(T, N) _LSHM_P(shmem_##N##_sum_to_all) _LSHM_P(shmem_##N##_prod_to_all)
_LSHM_TOALL_BIT_TYPES(_LSHM_P_TOALL_BIT)
_LSHM_TOALL_MINMAX_TYPES(_LSHM_P_TOALL_MM)
_LSHM_TOALL_ARITH_TYPES(_LSHM_P_TOALL_AR)

/* deprecated names and the removed cache routines */
_LSHM_P(start_pes) _LSHM_P(_my_pe) _LSHM_P(_num_pes) _LSHM_P(shmalloc) _LSHM_P(shfree) _LSHM_P(shrealloc)
_LSHM_P(shmemalign)
__typeof__(globalexit) pglobalexit _LSHM_NORETURN;
_LSHM_P(shmem_clear_cache_inv) _LSHM_P(shmem_set_cache_inv) _LSHM_P(shmem_clear_cache_line_inv)
_LSHM_P(shmem_set_cache_line_inv) _LSHM_P(shmem_udcflush) _LSHM_P(shmem_udcflush_line)

/* OpenSHMEM 1.6 */
_LSHM_P(shmem_query_initialized) _LSHM_P(shmem_team_ptr) _LSHM_P_CTX(pe_quiet) _LSHM_P(shmem_ctx_signal_add) _LSHM_P(shmem_ctx_signal_set)
#if defined(__cplusplus) && !defined(LSHM_NO_GENERICS)
/* overloaded in C++ (the context form), and no typed twin has their type */
void pshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void pshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
#else
_LSHM_P(shmem_signal_add) _LSHM_P(shmem_signal_set)
#endif
_LSHM_P(shmem_ctx_session_start) _LSHM_P(shmem_ctx_session_stop)
#define _LSHM_P_IB(T, N) _LSHM_P_CTX(N##_ibput) _LSHM_P_CTX(N##_ibget)
_LSHM_RMA_TYPES(_LSHM_P_IB)
#define _LSHM_P_IB_SIZED(B, U) _LSHM_P_CTX(ibput##B) _LSHM_P_CTX(ibget##B)
_LSHM_SIZES(_LSHM_P_IB_SIZED)
#define _LSHM_P_SCAN(T, N) _LSHM_P(shmem_##N##_sum_inscan) _LSHM_P(shmem_##N##_sum_exscan)
_LSHM_RED_ARITH_TYPES(_LSHM_P_SCAN)

/* <shmemx.h> extensions */
_LSHM_P(shmemx_wtime) _LSHM_P(shmemx_query_initialized)

#ifdef __cplusplus
}
#endif

#endif /* LOCUS_PSHMEM_H */
