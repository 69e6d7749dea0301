# ctest locus.tls: the shipped libraries stay loadable with dlopen (shmem4py, a
# Python extension, loads liblocus_shmem that way): no STATIC_TLS flag (set by
# any initial-exec TLS variable: glibc must then fit the library's whole TLS
# into the ~1-2 KB it keeps for late loads) and at most MAX bytes of TLS
# (every thread of a program linking the library carries it; CONTRIBUTING).
#   cmake -DREADELF=readelf -DLIBS="a.so;b.so" -DMAX=1024 -P check_tls.cmake
set(bad)
foreach(lib ${LIBS})
  execute_process(COMMAND ${READELF} -dlW ${lib} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -dlW ${lib} failed (${rc})")
  endif()
  if(text MATCHES "STATIC_TLS")
    list(APPEND bad "${lib}: STATIC_TLS is set (an initial-exec TLS variable): dlopen of it can fail")
  endif()
  # program header: TLS Offset VirtAddr PhysAddr FileSiz MemSiz Flg Align
  if(text MATCHES "\n *TLS +0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+ 0x([0-9a-f]+)")
    math(EXPR size "0x${CMAKE_MATCH_1}")
    if(size GREATER MAX)
      list(APPEND bad "${lib}: ${size} bytes of TLS (expected at most ${MAX}: scratch belongs on the heap)")
    endif()
    message(STATUS "${lib}: ${size} bytes of TLS")
  endif()
endforeach()
if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "thread-local storage:\n  ${text}")
endif()
