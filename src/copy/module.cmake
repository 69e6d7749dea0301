# copy: per-ISA kernels use `#pragma GCC target` in their own files, so no
# per-file flags are needed here.
#
# test_copy_sanitized: the copy tests compiled and linked with ASan + UBSan,
# together with the copy, core and topo sources (also sanitized, and built
# without NDEBUG so the overlap contract is checked). The rest of the library
# comes unsanitized from locus_static. Part of the normal `ctest` run.
if(BUILD_TESTING AND NOT LOCUS_SANITIZE AND NOT LOCUS_TSAN)
  find_package(GTest)
  if(GTest_FOUND)
    file(GLOB _copy_san_src CONFIGURE_DEPENDS
      ${CMAKE_SOURCE_DIR}/src/copy/*.c ${CMAKE_SOURCE_DIR}/src/core/*.c ${CMAKE_SOURCE_DIR}/src/topo/*.c)
    add_executable(test_copy_sanitized
      ${CMAKE_SOURCE_DIR}/tests/unit/test_copy.cc ${CMAKE_SOURCE_DIR}/tests/unit/test_copy_select.cc
      ${_copy_san_src})
    set_target_properties(test_copy_sanitized PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    target_include_directories(test_copy_sanitized PRIVATE
      ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src)
    target_compile_options(test_copy_sanitized PRIVATE -O1 -UNDEBUG
      -fsanitize=address,undefined -fno-sanitize-recover=undefined)
    target_compile_definitions(test_copy_sanitized PRIVATE LOCUS_BUILDING=1
      LOCUS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" LOCUS_BINARY_DIR="${CMAKE_BINARY_DIR}")
    target_link_options(test_copy_sanitized PRIVATE -fsanitize=address,undefined)
    target_link_libraries(test_copy_sanitized PRIVATE locus_static GTest::gtest GTest::gtest_main m)
    # One ctest entry for the whole executable (~3 s), so the labels apply.
    add_test(NAME copy_sanitized COMMAND test_copy_sanitized)
    set_tests_properties(copy_sanitized PROPERTIES LABELS "unit;copy;sanitize" TIMEOUT 120)
  endif()
endif()

# The CLI side: tunable errors, bench copy options, --calibrate round trip (~5 s).
if(BUILD_TESTING)
  add_test(NAME copy_cli COMMAND sh ${CMAKE_SOURCE_DIR}/tests/unit/test_copy_cli.sh $<TARGET_FILE:locus_cli>)
  set_tests_properties(copy_cli PROPERTIES LABELS "unit;copy" TIMEOUT 400) # 40-80 s quiet; minutes under load
endif()
