# reg: the verbs backend links libibverbs (rdma-core); reg_hooks.c looks for
# liblocus_hooks with dlsym.
list(APPEND LOCUS_EXTRA_LIBS ibverbs ${CMAKE_DL_LIBS})
set(LOCUS_PC_LIBS_PRIVATE "${LOCUS_PC_LIBS_PRIVATE} -libverbs -ldl")

# The reg tests check invalidation by munmap, free, ...: they link the memory
# hooks (liblocus_hooks, src/hooks), as a program that opts in does.
set(LOCUS_TEST_LIBS_reg locus::hooks)

# liblocus.so with and without the hooks (the GoogleTest executables link
# liblocus.a): linked, preloaded, absent, dlopen'ed too late.
if(BUILD_TESTING)
  add_executable(test_reg_shared ${CMAKE_SOURCE_DIR}/tests/unit/test_reg_shared.c)
  target_link_libraries(test_reg_shared PRIVATE locus locus::hooks)
  add_executable(test_reg_nohooks ${CMAKE_SOURCE_DIR}/tests/unit/test_reg_shared.c)
  target_link_libraries(test_reg_nohooks PRIVATE locus ${CMAKE_DL_LIBS})
  set_target_properties(test_reg_shared test_reg_nohooks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME reg.shared_library_hooks COMMAND test_reg_shared hooks)
  add_test(NAME reg.shared_library_no_hooks COMMAND test_reg_nohooks none)
  add_test(NAME reg.shared_library_hooks_dlopen COMMAND test_reg_nohooks dlopen $<TARGET_FILE:locus_hooks>)
  set_tests_properties(reg.shared_library_hooks reg.shared_library_no_hooks reg.shared_library_hooks_dlopen
    PROPERTIES LABELS "unit;reg" TIMEOUT 60)
  # (a sanitizer runtime must come first: nothing may be preloaded before it)
  if(NOT LOCUS_SANITIZE AND NOT LOCUS_TSAN)
    add_test(NAME reg.shared_library_preload COMMAND test_reg_nohooks hooks)
    # LD_PRELOAD splits at spaces and colons, with no escape: the hooks go by
    # their file name, found through LD_LIBRARY_PATH (split at colons only),
    # so a build tree under a path with spaces ("/srv/with space/x") works.
    set_tests_properties(reg.shared_library_preload PROPERTIES LABELS "unit;reg" TIMEOUT 60
      ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE_NAME:locus_hooks>;LD_LIBRARY_PATH=$<TARGET_FILE_DIR:locus_hooks>")
  endif()
endif()

# reg_threads_tsan: the concurrency test (tests/unit/test_reg_threads.cc) with
# the reg and core sources under ThreadSanitizer. The memory hooks
# (liblocus_hooks) are not linked: their munmap/free interposition and a
# sanitizer runtime do not mix, and the test invalidates explicitly (the
# caches note that the hooks are absent). Part of the normal `ctest` run.
if(BUILD_TESTING AND NOT LOCUS_SANITIZE AND NOT LOCUS_TSAN)
  find_package(GTest)
  if(GTest_FOUND)
    file(GLOB _reg_tsan_core CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/core/*.c)
    file(GLOB _reg_tsan_reg CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/reg/*.c)
    add_executable(reg_threads_tsan
      ${CMAKE_SOURCE_DIR}/tests/unit/test_reg_threads.cc ${CMAKE_SOURCE_DIR}/tests/unit/reg_tsan_stubs.c
      ${_reg_tsan_reg} ${_reg_tsan_core})
    set_target_properties(reg_threads_tsan PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    target_include_directories(reg_threads_tsan PRIVATE
      ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src)
    target_compile_options(reg_threads_tsan PRIVATE -fsanitize=thread -O1 -g)
    target_compile_definitions(reg_threads_tsan PRIVATE LOCUS_BUILDING=1)
    target_link_options(reg_threads_tsan PRIVATE -fsanitize=thread)
    target_link_libraries(reg_threads_tsan PRIVATE GTest::gtest GTest::gtest_main Threads::Threads ibverbs m ${CMAKE_DL_LIBS})
    add_test(NAME reg_threads_tsan COMMAND reg_threads_tsan)
    set_tests_properties(reg_threads_tsan PROPERTIES LABELS "unit;reg;tsan" TIMEOUT 300
      ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1:abort_on_error=1")
  endif()
endif()
