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
