# ctest shmem.exports: liblocus_shmem.so defines the OpenSHMEM names and
# nothing else (cmake/liblocus_shmem.map): shmem_*, pshmem_*, shmemx_*, pshmemx_*, the deprecated
# names and their p-forms. Also: the spec's core routines are all there.
#   cmake -DNM=nm -DSHMEM=liblocus_shmem.so -P check_shmem_exports.cmake
include(${CMAKE_CURRENT_LIST_DIR}/defined_symbols.cmake)
defined_symbols(${SHMEM} names)
set(deprecated start_pes _my_pe _num_pes my_pe num_pes shmalloc shfree shrealloc shmemalign globalexit)
set(bad)
foreach(s ${names})
  list(FIND deprecated ${s} i)
  string(REGEX REPLACE "^p" "" unp "${s}")
  list(FIND deprecated ${unp} j)
  if(NOT s MATCHES "^p?shmemx?_" AND i LESS 0 AND j LESS 0)
    list(APPEND bad "${s}")
  endif()
endforeach()
foreach(need shmem_init shmem_finalize shmem_malloc shmem_long_put pshmem_long_put shmem_ctx_int_atomic_fetch_add
        shmem_int_sum_reduce shmem_team_split_2d shmem_putmem_signal_nbi shmem_long_wait_until_some_vector
        shmem_internal_ctx_default shmem_internal_team_world start_pes shmalloc my_pe num_pes shmemx_wtime)
  list(FIND names ${need} i)
  if(i LESS 0)
    list(APPEND bad "missing: ${need}")
  endif()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " msg "${bad}")
  message(FATAL_ERROR "${SHMEM}: unexpected or missing exports:\n  ${msg}")
endif()
list(LENGTH names n)
message(STATUS "${SHMEM}: ${n} exports, all OpenSHMEM names")
