# ctest shmem.pshmem: <pshmem.h> declares exactly the profiling names the
# library exports (pshmem_* and the deprecated names' p-forms), so a name added
# to shmem.h and the library but not to pshmem.h's lists, or the other way
# round, fails here. The header is preprocessed with the C compiler; each of
# its declarations reads "__typeof__(NAME) pNAME;".
#   cmake -DNM=nm -DSHMEM=liblocus_shmem.so -DCC=cc -DINCLUDE=include -P check_pshmem.cmake
include(${CMAKE_CURRENT_LIST_DIR}/defined_symbols.cmake)
execute_process(COMMAND ${CC} -E -P -I${INCLUDE} ${INCLUDE}/pshmem.h
  OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CC} -E pshmem.h failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "__typeof__\\(([A-Za-z0-9_]+)\\) p[A-Za-z0-9_]+" decls "${text}")
set(declared)
foreach(d ${decls})
  string(REGEX REPLACE "^__typeof__\\(([A-Za-z0-9_]+)\\) (p[A-Za-z0-9_]+)$" "\\1;\\2" pair "${d}")
  list(GET pair 0 twin)
  list(GET pair 1 name)
  if(NOT name STREQUAL "p${twin}")
    message(FATAL_ERROR "pshmem.h declares ${name} with the type of ${twin}")
  endif()
  list(APPEND declared ${name})
endforeach()
defined_symbols(${SHMEM} names)
# my_pe/num_pes (pre-1.0 names) are exported for old binaries but shmem.h does not declare them
set(exported)
foreach(s ${names})
  if(s MATCHES "^p" AND NOT s MATCHES "^p(my_pe|num_pes)$")
    list(APPEND exported ${s})
  endif()
endforeach()
set(missing ${exported})
list(REMOVE_ITEM missing ${declared})
set(extra ${declared})
list(REMOVE_ITEM extra ${exported})
list(LENGTH declared nd)
list(LENGTH exported ne)
if(missing OR extra OR NOT nd EQUAL ne)
  string(REPLACE ";" " " missing "${missing}")
  string(REPLACE ";" " " extra "${extra}")
  message(FATAL_ERROR "pshmem.h (${nd} declarations) and ${SHMEM} (${ne} profiling exports) differ:\n"
    "  exported, not declared: ${missing}\n  declared, not exported: ${extra}")
endif()
message(STATUS "pshmem.h: ${nd} declarations, one per profiling name the library exports")
