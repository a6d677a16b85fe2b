# Installs the build into a fresh prefix, builds a job and a tuple-API program
# out of the tree against it (CMake package, then pkg-config), and runs them.
#
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DLAUNCHER=ccache] -P install_test.cmake
#
# Fails (a FATAL_ERROR, so a nonzero exit) at the first step that does.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "install_test.cmake: ${v} is not set")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(project ${WORK_DIR}/project)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${project})

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f bin/piranha libexec/piranha/examples/hello_job include/piranha/runtime/job.h
          include/piranha/tuplespace/client.h lib/cmake/Piranha/PiranhaConfig.cmake lib/pkgconfig/piranha.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
run("installed piranha --help" ${prefix}/bin/piranha --help)

# The job's project: the consumer CMakeLists.txt, tuple_hello.cc and the
# hello_job example's source, nothing else of the source tree.
file(COPY ${SOURCE_DIR}/tests/install/consumer/ DESTINATION ${project})
file(COPY ${SOURCE_DIR}/examples/hello_job/hello_job.cc DESTINATION ${project})
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run("configuring the job against the installed package"
    ${CMAKE_COMMAND} -S ${project} -B ${project}/build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCMAKE_PREFIX_PATH=${prefix} ${launcher})
run("building the job" ${CMAKE_COMMAND} --build ${project}/build -j2)

function(check_job exe)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PIRANHA_LOCAL_PIRANHAS=2 --unset=PIRANHA_SERVER
                          --unset=PIRANHA_ROLE --unset=PIRANHA_JOB_ID ${exe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "sum to 333332833333500000: OK")
    message(FATAL_ERROR "${exe} with PIRANHA_LOCAL_PIRANHAS=2: exit ${rc}\n${out}\n${err}")
  endif()
  message(STATUS "${exe}: ${out}")
endfunction()
check_job(${project}/build/hello_job)
run("tuple_hello" ${project}/build/tuple_hello)
if(NOT run_output MATCHES "tuple_hello: .*: OK")
  message(FATAL_ERROR "tuple_hello printed: ${run_output}")
endif()

# The same job through pkg-config, as a Makefile would build it.
find_program(PKG_CONFIG pkg-config REQUIRED)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/lib/pkgconfig
                        ${PKG_CONFIG} --cflags --libs piranha
                RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config piranha failed: ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
find_program(CXX NAMES c++ g++ REQUIRED)
run("building the job with pkg-config" ${LAUNCHER} ${CXX} -std=c++20 -O1 ${project}/hello_job.cc
    -o ${project}/hello_job_pc ${flags})
check_job(${project}/hello_job_pc)
