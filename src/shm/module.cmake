# shm_*_sanitized: the in-process-forked shm tests (split copy, sends by
# reference, hostile messages, API, fast paths) against the shm, boot, copy,
# core and topo sources compiled with ASan + UBSan (without NDEBUG): requests,
# unexpected buffers and every copy into private memory are checked (a 1-byte
# short unexpected buffer fails here and passes the plain build). The shared
# segment is outside ASan's view; the hostile-message tests guard the bounds
# checks there. The rest of the library comes unsanitized from
# locus_static (the reg memory hooks must not be instrumented: they run before
# the sanitizer runtime is set up). Part of the normal `ctest` run (~10 s).
if(BUILD_TESTING AND NOT LOCUS_SANITIZE AND NOT LOCUS_TSAN)
  find_package(GTest)
  if(GTest_FOUND)
    file(GLOB _shm_san_src CONFIGURE_DEPENDS
      ${CMAKE_SOURCE_DIR}/src/shm/*.c ${CMAKE_SOURCE_DIR}/src/boot/*.c ${CMAKE_SOURCE_DIR}/src/copy/*.c
      ${CMAKE_SOURCE_DIR}/src/core/*.c ${CMAKE_SOURCE_DIR}/src/topo/*.c)
    add_library(locus_shm_sanitized OBJECT ${_shm_san_src})
    target_include_directories(locus_shm_sanitized PRIVATE
      ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src)
    target_compile_options(locus_shm_sanitized PRIVATE -O1 -UNDEBUG
      -fsanitize=address,undefined -fno-sanitize-recover=undefined)
    target_compile_definitions(locus_shm_sanitized PRIVATE LOCUS_BUILDING=1)
    target_link_libraries(locus_shm_sanitized PRIVATE PkgConfig::HWLOC PkgConfig::NUMA)
    foreach(t split ref corrupt api fast)
      add_executable(test_shm_${t}_sanitized ${CMAKE_SOURCE_DIR}/tests/unit/test_shm_${t}.cc
        $<TARGET_OBJECTS:locus_shm_sanitized>)
      set_target_properties(test_shm_${t}_sanitized PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
      target_include_directories(test_shm_${t}_sanitized PRIVATE
        ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src)
      target_compile_options(test_shm_${t}_sanitized PRIVATE -O1 -fsanitize=address,undefined
        -fno-sanitize-recover=undefined)
      target_link_options(test_shm_${t}_sanitized PRIVATE -fsanitize=address,undefined)
      target_link_libraries(test_shm_${t}_sanitized PRIVATE locus_static GTest::gtest GTest::gtest_main m)
      add_test(NAME shm_${t}_sanitized COMMAND test_shm_${t}_sanitized)
      set_tests_properties(shm_${t}_sanitized PROPERTIES LABELS "unit;shm;sanitize" TIMEOUT 300)
    endforeach()
  endif()
endif()
