# What `cmake --install` puts where, the CMake package a job's build finds
# with find_package(Piranha), the pkg-config files, and the Debian packages
# CPack makes of it all (scripts/package.sh).
#
#   runtime component: bin/piranha, the live page's module libexec/piranha/piranha-nps-page.so,
#                      the example jobs in libexec/piranha/examples,
#                      the systemd units and their configuration (packaging/)
#   dev component:     the static libraries, the public headers, the CMake
#                      package (lib/cmake/Piranha) and lib/pkgconfig/piranha*.pc
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries under the names an installed package gives them, so that the
# examples link in the tree as a job links out of it (but for how libzmq is
# linked: in the tree it may be libzmq.a, CMakeLists.txt; out of it, cppzmq's
# libzmq.so).
set(piranha_exported
  piranha_zeromq:zeromq piranha_base:base piranha_tuplespace:tuplespace piranha_trace:trace piranha_endpoint:endpoint
  piranha_runtime:job piranha_availability:availability piranha_strategy:strategy
  piranha_agent:agent piranha_access:access piranha_trellis:trellis piranha_scheduler:scheduler piranha_nps:nps)
set(piranha_library_targets)
foreach(pair ${piranha_exported})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_compile_features(${target} INTERFACE cxx_std_20)  # a job's build need not ask for it
  add_library(Piranha::${name} ALIAS ${target})
  list(APPEND piranha_library_targets ${target})
endforeach()

install(TARGETS piranha RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
set(PIRANHA_EXAMPLES_DIR ${CMAKE_INSTALL_LIBEXECDIR}/piranha/examples)
install(TARGETS cmatrix mandelbrot spin hello_job trellis_cluster
        RUNTIME DESTINATION ${PIRANHA_EXAMPLES_DIR} COMPONENT runtime)
# The live page's HTTP server, loaded by `piranha nps run --http` (nps).
install(TARGETS piranha_nps_page_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/piranha COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/examples/trellis/cluster.yaml
        DESTINATION ${PIRANHA_EXAMPLES_DIR} COMPONENT runtime)

install(TARGETS ${piranha_library_targets} EXPORT PiranhaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir base tuplespace piranha/runtime piranha/access piranha/agent trellis scheduler nps)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          COMPONENT dev FILES_MATCHING PATTERN "*.h")
endforeach()

set(PIRANHA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Piranha)
install(EXPORT PiranhaTargets NAMESPACE Piranha:: DESTINATION ${PIRANHA_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/PiranhaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/PiranhaConfig.cmake INSTALL_DESTINATION ${PIRANHA_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/PiranhaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/PiranhaConfig.cmake ${CMAKE_BINARY_DIR}/PiranhaConfigVersion.cmake
        DESTINATION ${PIRANHA_CMAKE_DIR} COMPONENT dev)

# pkg-config files that find the prefix from their own place, so a copy
# installed anywhere (or unpacked from a package) works.
set(PIRANHA_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH PIRANHA_PC_PREFIX /${PIRANHA_PKGCONFIG_DIR} /)
string(REGEX REPLACE "/$" "" PIRANHA_PC_PREFIX "${PIRANHA_PC_PREFIX}")
foreach(pc piranha piranha-tuplespace)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${PIRANHA_PKGCONFIG_DIR} COMPONENT dev)
endforeach()

include(${CMAKE_SOURCE_DIR}/packaging/packaging.cmake)
