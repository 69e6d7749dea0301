# liblocus_shmem: OpenSHMEM 1.5 for C over locus rma (a library of its own;
# it uses liblocus's public API only). Headers: include/shmem.h, shmemx.h,
# pshmem.h (the profiling interface), mpp/. Exports: cmake/liblocus_shmem.map.
# The compiler wrapper locus-oshcc and the pkg-config module locus-shmem link
# it with liblocus and liblocus_hooks (the registration cache stays valid).
file(GLOB LOCUS_SHMEM_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/shmem/*.c)
add_library(locus_shmem SHARED ${LOCUS_SHMEM_SOURCES})
set_target_properties(locus_shmem PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  C_VISIBILITY_PRESET hidden LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/liblocus_shmem.map
  INSTALL_RPATH "$ORIGIN") # liblocus beside it, found from wherever the install tree is
target_include_directories(locus_shmem
  PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_options(locus_shmem PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/liblocus_shmem.map
  -Wl,--no-undefined)
target_link_libraries(locus_shmem PUBLIC locus PRIVATE Threads::Threads m)
add_library(locus::shmem ALIAS locus_shmem)

# The compiler wrapper: build/bin/locus-oshcc points into the build tree;
# the installed one finds the install tree relative to itself.
# locus-oshc++ is the same script: its name makes it compile and link C++
# (like Open MPI's oshc++ beside oshcc).
set(LOCUS_OSHCC_RELOCATABLE 0)
set(LOCUS_OSHCC_INCDIR ${CMAKE_SOURCE_DIR}/include)
set(LOCUS_OSHCC_LIBDIR ${CMAKE_BINARY_DIR})
foreach(w locus-oshcc locus-oshc++)
  configure_file(${CMAKE_SOURCE_DIR}/tools/locus-oshcc.in ${CMAKE_BINARY_DIR}/bin/${w} @ONLY
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(LOCUS_OSHCC_RELOCATABLE 1)
foreach(w locus-oshcc locus-oshc++)
  configure_file(${CMAKE_SOURCE_DIR}/tools/locus-oshcc.in ${CMAKE_BINARY_DIR}/install/${w} @ONLY)
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/cmake/locus-shmem.pc.in ${CMAKE_BINARY_DIR}/locus-shmem.pc @ONLY)

install(TARGETS locus_shmem EXPORT locusTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/shmem.h ${CMAKE_SOURCE_DIR}/include/shmem_cxx.h ${CMAKE_SOURCE_DIR}/include/shmemx.h
  ${CMAKE_SOURCE_DIR}/include/pshmem.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/locus-shmem)
install(FILES ${CMAKE_SOURCE_DIR}/include/mpp/shmem.h ${CMAKE_SOURCE_DIR}/include/mpp/shmemx.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/locus-shmem/mpp)
install(PROGRAMS ${CMAKE_BINARY_DIR}/install/locus-oshcc ${CMAKE_BINARY_DIR}/install/locus-oshc++
  DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_BINARY_DIR}/locus-shmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The launcher: locus-oshrun, the spec's `oshrun -np N prog` over `locus run`.
# The spec's names (Annex B: oshcc, oshc++, oshrun; oshCC and oshcxx as other
# implementations spell C++) as symlinks in a directory of their own,
# libexec/locus/osh: put it first in PATH and scripts that call oshcc and
# oshrun use locus, without shadowing Open MPI's in /usr/bin otherwise.
configure_file(${CMAKE_SOURCE_DIR}/tools/locus-oshrun ${CMAKE_BINARY_DIR}/bin/locus-oshrun COPYONLY)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/locus-oshrun DESTINATION ${CMAKE_INSTALL_BINDIR})
set(LOCUS_OSH_NAMES "oshcc=locus-oshcc;oshc++=locus-oshc++;oshCC=locus-oshc++;oshcxx=locus-oshc++;oshrun=locus-oshrun")
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/osh)
foreach(pair ${LOCUS_OSH_NAMES})
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 alias)
  list(GET pair 1 target)
  file(CREATE_LINK ../bin/${target} ${CMAKE_BINARY_DIR}/osh/${alias} SYMBOLIC)
endforeach()
file(RELATIVE_PATH LOCUS_OSH_TO_BIN /p/${CMAKE_INSTALL_LIBEXECDIR}/locus/osh /p/${CMAKE_INSTALL_BINDIR})
install(CODE "
  set(osh \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR}/locus/osh\")
  file(MAKE_DIRECTORY \"\${osh}\")
  foreach(pair ${LOCUS_OSH_NAMES})
    string(REPLACE \"=\" \";\" pair \"\${pair}\")
    list(GET pair 0 alias)
    list(GET pair 1 target)
    message(STATUS \"Installing: \${osh}/\${alias} -> ${LOCUS_OSH_TO_BIN}/\${target}\")
    file(CREATE_LINK \"${LOCUS_OSH_TO_BIN}/\${target}\" \"\${osh}/\${alias}\" SYMBOLIC)
  endforeach()")

if(BUILD_TESTING)
  add_test(NAME shmem.exports COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DSHMEM=$<TARGET_FILE:locus_shmem>
    -P ${CMAKE_SOURCE_DIR}/cmake/check_shmem_exports.cmake)
  set_tests_properties(shmem.exports PROPERTIES LABELS "unit;shmem" TIMEOUT 60)
  # <pshmem.h> declares exactly the pshmem_* (and p-deprecated) names the library exports
  add_test(NAME shmem.pshmem COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DSHMEM=$<TARGET_FILE:locus_shmem>
    -DCC=${CMAKE_C_COMPILER} -DINCLUDE=${CMAKE_SOURCE_DIR}/include -P ${CMAKE_SOURCE_DIR}/cmake/check_pshmem.cmake)
  set_tests_properties(shmem.pshmem PROPERTIES LABELS "unit;shmem" TIMEOUT 60)
  # the headers from C++ (overloads of the generic names, pshmem.h) under -pedantic -Werror
  add_test(NAME shmem.headers_cxx COMMAND sh ${CMAKE_SOURCE_DIR}/tests/shmem/headers_cxx.sh
    ${CMAKE_CXX_COMPILER} ${CMAKE_SOURCE_DIR}/include)
  set_tests_properties(shmem.headers_cxx PROPERTIES LABELS "unit;shmem" TIMEOUT 120)
  # a --prefix install: locus-oshcc and pkg-config build a program that runs under locus run
  add_test(NAME shmem_install_prefix COMMAND sh ${CMAKE_SOURCE_DIR}/tests/shmem/install_check.sh
    ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/tests/shmem/progs/setup.c)
  set_tests_properties(shmem_install_prefix PROPERTIES LABELS "shmem;multiprocess" TIMEOUT 600)
  # CC=locus-oshcc in the environment (make CC=locus-oshcc) must not make the
  # wrapper call itself (round 7: it recursed until the argument list overflowed)
  add_test(NAME shmem_oshcc_cc_self COMMAND sh ${CMAKE_SOURCE_DIR}/tests/shmem/oshcc_cc_self.sh
    ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/tests/shmem/progs/setup.c)
  set_tests_properties(shmem_oshcc_cc_self PROPERTIES LABELS "shmem;cli" TIMEOUT 240)
  # locus-oshrun and the spec-named directory: oshcc builds, oshrun -np N runs,
  # Open MPI-style runner options, bad options a usage error
  add_test(NAME shmem_oshrun COMMAND sh ${CMAKE_SOURCE_DIR}/tests/shmem/oshrun.sh
    ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/tests/shmem/progs/setup.c)
  set_tests_properties(shmem_oshrun PROPERTIES LABELS "shmem;cli;multiprocess" TIMEOUT 300)
endif()

# Unit tests (tests/unit/test_shmem*.cc) link the parts that stand alone:
# the allocator, the size parser and a team's members.
add_library(locus_shmem_units STATIC ${CMAKE_SOURCE_DIR}/src/shmem/alloc.c ${CMAKE_SOURCE_DIR}/src/shmem/size.c
  ${CMAKE_SOURCE_DIR}/src/shmem/members.c)
target_include_directories(locus_shmem_units PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(locus_shmem_units PRIVATE locus m)
set(LOCUS_TEST_LIBS_shmem locus_shmem_units m)
