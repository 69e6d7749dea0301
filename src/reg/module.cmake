# reg: the verbs backend links libibverbs (rdma-core).
list(APPEND LOCUS_EXTRA_LIBS ibverbs)
set(LOCUS_PC_LIBS_PRIVATE "${LOCUS_PC_LIBS_PRIVATE} -libverbs")

# The hooks through liblocus.so (the GoogleTest executables link liblocus.a).
if(BUILD_TESTING)
  add_executable(test_reg_shared ${CMAKE_SOURCE_DIR}/tests/unit/test_reg_shared.c)
  target_link_libraries(test_reg_shared PRIVATE locus)
  set_target_properties(test_reg_shared PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME reg.shared_library_hooks COMMAND test_reg_shared)
  set_tests_properties(reg.shared_library_hooks PROPERTIES LABELS "unit;reg" TIMEOUT 60)
endif()

# reg_threads_tsan: the concurrency test (tests/unit/test_reg_threads.cc) with
# the reg and core sources under ThreadSanitizer. The memory hooks are left
# out (stubs): their munmap/free interposition and a sanitizer runtime do not
# mix, and the test invalidates explicitly. Part of the normal `ctest` run.
if(BUILD_TESTING AND NOT LOCUS_SANITIZE AND NOT LOCUS_TSAN)
  find_package(GTest)
  if(GTest_FOUND)
    file(GLOB _reg_tsan_core CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/core/*.c)
    add_executable(reg_threads_tsan
      ${CMAKE_SOURCE_DIR}/tests/unit/test_reg_threads.cc ${CMAKE_SOURCE_DIR}/tests/unit/reg_tsan_stubs.c
      ${CMAKE_SOURCE_DIR}/src/reg/reg.c ${CMAKE_SOURCE_DIR}/src/reg/reg_backend.c ${_reg_tsan_core})
    set_target_properties(reg_threads_tsan PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    target_include_directories(reg_threads_tsan PRIVATE
      ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src)
    target_compile_options(reg_threads_tsan PRIVATE -fsanitize=thread -O1 -g)
    target_compile_definitions(reg_threads_tsan PRIVATE LOCUS_BUILDING=1)
    target_link_options(reg_threads_tsan PRIVATE -fsanitize=thread)
    target_link_libraries(reg_threads_tsan PRIVATE GTest::gtest GTest::gtest_main Threads::Threads ibverbs m)
    add_test(NAME reg_threads_tsan COMMAND reg_threads_tsan)
    set_tests_properties(reg_threads_tsan PROPERTIES LABELS "unit;reg;tsan" TIMEOUT 300
      ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1:abort_on_error=1")
  endif()
endif()

# The memory hooks can run before a sanitizer runtime has set itself up
# (ASan's interceptor set-up frees a dlerror string through our free, before
# its shadow memory exists): never instrument them.
if(LOCUS_SANITIZE OR LOCUS_TSAN)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/reg/reg_hooks.c PROPERTIES
    COMPILE_OPTIONS "-fno-sanitize=all")
endif()
