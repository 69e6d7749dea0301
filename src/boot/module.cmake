# boot: the PMIx client library is dlopen'ed at run time (see boot_pmix.c);
# only its header is needed here, for the types. Without it the pmix source
# says so when a PMIx launcher is found.
pkg_check_modules(PMIX QUIET pmix)
if(PMIX_FOUND)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/boot/boot_pmix.c PROPERTIES
    INCLUDE_DIRECTORIES "${PMIX_INCLUDE_DIRS}" COMPILE_DEFINITIONS LOCUS_HAVE_PMIX_H=1)
else()
  message(STATUS "boot: PMIx header not found (libpmix-dev): the pmix source is left out")
endif()
list(APPEND LOCUS_EXTRA_LIBS ${CMAKE_DL_LIBS})
