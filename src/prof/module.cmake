# prof: the profiler lives in liblocus (attribution needs elfutils libdw);
# the preload shim is a separate small shared library that the profiled
# program loads (LD_PRELOAD). It is built beside the CLI (bin/../lib) and
# installed beside liblocus; `locus profile` finds it relative to its own
# executable: <exe dir>/../lib, <exe dir>/../${CMAKE_INSTALL_LIBDIR}.
pkg_check_modules(LIBDW REQUIRED libdw)
list(APPEND LOCUS_EXTRA_LIBS ${LIBDW_LINK_LIBRARIES} elf)

file(GLOB _prof_shim_src CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/prof/preload/*.c)
add_library(locus_prof_preload SHARED ${_prof_shim_src})
set_target_properties(locus_prof_preload PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  C_VISIBILITY_PRESET hidden)
# Only the interposed libc/pthread names are exported (SHIM_EXPORT in
# preload/shim.h); test ProfShim.ExportsOnlyInterposedNames checks the .so.
target_include_directories(locus_prof_preload PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_compile_options(locus_prof_preload PRIVATE -O2 -fno-omit-frame-pointer -ftls-model=initial-exec)
# It is preloaded into programs that have no sanitizer runtime: never instrumented.
if(LOCUS_SANITIZE OR LOCUS_TSAN)
  target_compile_options(locus_prof_preload PRIVATE -fno-sanitize=all)
  target_link_options(locus_prof_preload PRIVATE -fno-sanitize=all)
endif()
# backtrace() loads libgcc_s on demand: make it a real dependency so it is
# there when the shim records its first allocation (and copied into VM guests)
target_link_libraries(locus_prof_preload PRIVATE dl Threads::Threads -Wl,--no-as-needed gcc_s -Wl,--as-needed)
install(TARGETS locus_prof_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(LOCUS_PROF_SHIM_NAME "liblocus_prof_preload.so")
# the CLI finds the shim beside itself: build it whenever the CLI is built
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL add_dependencies locus_cli locus_prof_preload)
