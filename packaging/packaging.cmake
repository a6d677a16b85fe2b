# The systemd units, their configuration files and the Debian packages.
#
# Debian packages come from CPack's DEB generator rather than a debian/
# directory: the install rules above already say what goes where, CPack turns
# them into packages in one step from any build tree without debhelper or a
# source-package layout, and dpkg-shlibdeps (which CPack runs) computes the
# runtime package's Depends from the binaries, as debhelper would. A debian/
# directory would be the way to get into Debian itself; it can come then.
#
#   piranha      the piranha program, the example jobs, the systemd units,
#                /etc/piranha/{server.conf,agent.yaml}, the piranha user
#   piranha-dev  static libraries, headers, the CMake package, pkg-config files

# Installed for /usr (the packages, scripts/package.sh), the configuration
# goes to /etc/piranha and the units to /lib/systemd/system, as Debian wants;
# for any other prefix both stay under it.
if(CMAKE_INSTALL_PREFIX MATCHES "^/usr/?$")
  set(PIRANHA_CONFIG_DIR /etc/piranha)
  set(PIRANHA_UNIT_DIR /lib/systemd/system)
else()
  set(PIRANHA_CONFIG_DIR ${CMAKE_INSTALL_SYSCONFDIR}/piranha)
  set(PIRANHA_UNIT_DIR lib/systemd/system)
endif()
set(PIRANHA_BIN ${CMAKE_INSTALL_FULL_BINDIR}/piranha)
set(PIRANHA_FULL_CONFIG_DIR ${PIRANHA_CONFIG_DIR})
if(NOT IS_ABSOLUTE ${PIRANHA_FULL_CONFIG_DIR})
  set(PIRANHA_FULL_CONFIG_DIR ${CMAKE_INSTALL_PREFIX}/${PIRANHA_CONFIG_DIR})
endif()
foreach(unit piranha-server.service piranha-agent.service)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/systemd/${unit}.in ${CMAKE_BINARY_DIR}/packaging/${unit} @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/${unit} DESTINATION ${PIRANHA_UNIT_DIR} COMPONENT runtime)
endforeach()
install(FILES ${CMAKE_CURRENT_LIST_DIR}/etc/server.conf ${CMAKE_CURRENT_LIST_DIR}/etc/agent.yaml
        DESTINATION ${PIRANHA_CONFIG_DIR} COMPONENT runtime)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME piranha)
set(CPACK_PACKAGE_VENDOR "Piranha")
set(CPACK_PACKAGE_CONTACT "Piranha maintainers <piranha@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME piranha)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)  # libyaml-cpp0.7, libboost-fiber1.74.0, ... (libzmq: linked in)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "adaptive parallelism: server, node agent, scheduler and example jobs
The tuple-space server, the node agent, the pool commands and the Network
Piranha Scheduler in one program, example jobs, and systemd units for the
server and the agent (left disabled on installation).")
set(piranha_control ${CMAKE_CURRENT_LIST_DIR}/debian/postinst ${CMAKE_CURRENT_LIST_DIR}/debian/prerm
                    ${CMAKE_CURRENT_LIST_DIR}/debian/postrm)
if(PIRANHA_CONFIG_DIR STREQUAL "/etc/piranha")
  list(APPEND piranha_control ${CMAKE_CURRENT_LIST_DIR}/debian/conffiles)
endif()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${piranha_control})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME piranha-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The headers include cppzmq's and msgpack's; the CMake package finds every
# one of these with find_dependency, the pkg-config files need libzmq's.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libzmq3-dev, cppzmq-dev, libmsgpack-cxx-dev, libboost-fiber-dev (>= 1.74), libboost-context-dev (>= 1.74), libyaml-cpp-dev, pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "piranha (= ${PROJECT_VERSION}-1), cmake (>= 3.25), g++ (>= 4:12)")
set(CPACK_DEBIAN_DEV_DESCRIPTION "adaptive parallelism: headers, libraries, CMake package and pkg-config files
For building Piranha jobs: find_package(Piranha) and Piranha::job in CMake,
or pkg-config piranha.")
include(CPack)
