# ctest locus.exports: the dynamic symbols each shipped library defines.
#   cmake -DNM=nm -DLOCUS=liblocus.so -DHOOKS=liblocus_hooks.so [-DSTATIC=liblocus.a] -P check_exports.cmake
# liblocus.so: every defined dynamic symbol starts with locus_ (cmake/liblocus.map).
# liblocus_hooks.so: the interposed libc names and locus_hooks_* only
# (src/hooks/hooks.map). Fails naming each symbol that should not be there.

include(${CMAKE_CURRENT_LIST_DIR}/defined_symbols.cmake)

set(bad)
defined_symbols(${LOCUS} locus_syms)
list(LENGTH locus_syms n)
if(n EQUAL 0)
  message(FATAL_ERROR "${LOCUS}: no defined dynamic symbol at all (expected the locus_* API)")
endif()
foreach(s ${locus_syms})
  if(NOT s MATCHES "^locus_")
    list(APPEND bad "${LOCUS}: ${s} (expected locus_* only)")
  endif()
endforeach()

set(hooked free realloc reallocarray malloc_trim mmap mmap64 munmap mremap madvise brk sbrk shmat shmdt)
defined_symbols(${HOOKS} hooks_syms)
foreach(s ${hooks_syms})
  list(FIND hooked ${s} i)
  if(i LESS 0 AND NOT s MATCHES "^locus_hooks_")
    list(APPEND bad "${HOOKS}: ${s} (expected the interposed libc names and locus_hooks_* only)")
  endif()
endforeach()
foreach(s ${hooked} locus_hooks_subscribe locus_hooks_unsubscribe)
  list(FIND hooks_syms ${s} i)
  if(i LESS 0)
    list(APPEND bad "${HOOKS}: ${s} missing")
  endif()
endforeach()

# liblocus.a: an internal global (hidden from liblocus.so) never carries the
# public prefix: internals are lc_* (core) or <module>_*.
if(STATIC)
  execute_process(COMMAND ${NM} -g --defined-only ${STATIC} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -g --defined-only ${STATIC} failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  foreach(line ${lines})
    if(line MATCHES "^[0-9a-fA-F]+ [A-Z] (locus_[^ ]+)$")
      list(FIND locus_syms ${CMAKE_MATCH_1} i)
      if(i LESS 0)
        list(APPEND bad "${STATIC}: ${CMAKE_MATCH_1} is internal (not exported) but named like the public API")
      endif()
    endif()
  endforeach()
endif()

if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "unexpected dynamic symbols:\n  ${text}")
endif()
list(LENGTH hooks_syms h)
message(STATUS "liblocus.so: ${n} symbols, all locus_*; liblocus_hooks.so: ${h} symbols as expected")
