# liblocus_hooks: the memory hooks (munmap, free, ... interposition) that
# keep the registration cache from going stale, as an opt-in library of its
# own (UCX's ucm beside ucs): a program links it (-llocus_hooks, CMake
# locus::hooks, pkg-config locus-hooks) or preloads it; liblocus never
# depends on it (src/reg/reg_hooks.c finds it at run time). It depends on
# nothing of liblocus: src/hooks/hooks.h is the whole contract.
file(GLOB LOCUS_HOOKS_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/hooks/*.c)
add_library(locus_hooks SHARED ${LOCUS_HOOKS_SOURCES})
set_target_properties(locus_hooks PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  C_VISIBILITY_PRESET hidden EXPORT_NAME hooks_library
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/src/hooks/hooks.map)
target_include_directories(locus_hooks PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_options(locus_hooks PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/src/hooks/hooks.map)
target_link_libraries(locus_hooks PRIVATE ${CMAKE_DL_LIBS})
# The hooks run before a sanitizer runtime has set itself up (ASan's
# interceptor set-up frees a dlerror string through our free, before its
# shadow memory exists), and are preloaded into programs without one:
# never instrumented, never linked to a sanitizer runtime.
if(LOCUS_SANITIZE OR LOCUS_TSAN)
  target_compile_options(locus_hooks PRIVATE -fno-sanitize=all)
  target_link_options(locus_hooks PRIVATE -fno-sanitize=all)
endif()
# What a program links to opt in: locus::hooks (exported as such). A program
# links the hooks for their interposition, not for a function it calls; one
# whose own code calls none of the hooked names (C++ new/delete only) would
# lose them to --as-needed (the default on Debian/Ubuntu), so the library is
# linked --no-as-needed, and only it (push/pop-state, binutils >= 2.26, lld).
add_library(locus_hooks_link INTERFACE)
set_target_properties(locus_hooks_link PROPERTIES EXPORT_NAME hooks)
target_link_libraries(locus_hooks_link INTERFACE "-Wl,--push-state,--no-as-needed" locus_hooks "-Wl,--pop-state")
add_library(locus::hooks ALIAS locus_hooks_link)
