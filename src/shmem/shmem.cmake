# liblocus_shmem: OpenSHMEM 1.5 for C over locus rma (a library of its own;
# it uses liblocus's public API only). Headers: include/shmem.h, shmemx.h,
# mpp/. Exports: cmake/liblocus_shmem.map. The compiler wrapper locus-oshcc
# and the pkg-config module locus-shmem link it with liblocus and
# liblocus_hooks (the registration cache stays valid).
file(GLOB LOCUS_SHMEM_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/shmem/*.c)
add_library(locus_shmem SHARED ${LOCUS_SHMEM_SOURCES})
set_target_properties(locus_shmem PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  C_VISIBILITY_PRESET hidden LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/liblocus_shmem.map)
target_include_directories(locus_shmem
  PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_options(locus_shmem PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/liblocus_shmem.map
  -Wl,--no-undefined)
target_link_libraries(locus_shmem PUBLIC locus PRIVATE Threads::Threads m)
add_library(locus::shmem ALIAS locus_shmem)
