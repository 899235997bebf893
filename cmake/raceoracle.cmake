# One registration function per kind of test.
include_guard(GLOBAL)

# On a GPU backend, a test that launches kernels takes one GPU from CTest's
# resource pool: with `ctest --resource-spec-file F` (ci/gpu-resources.sh
# writes F) GPU tests run in parallel, one a GPU, and the GPU CTest hands a
# test is the one it sees (kernels/device_memory.hip). Without a spec file
# CTest ignores the groups. docs/SCALE.md.
set(RACEORACLE_GPU_RESOURCES "")
if(NOT RACEORACLE_BACKEND STREQUAL "cpu")
  set(RACEORACLE_GPU_RESOURCES RESOURCE_GROUPS "gpus:1")
endif()

# raceoracle_gpu_tests(TEST...) : these tests take one GPU each.
function(raceoracle_gpu_tests)
  if(RACEORACLE_GPU_RESOURCES)
    set_tests_properties(${ARGN} PROPERTIES ${RACEORACLE_GPU_RESOURCES})
  endif()
endfunction()

# The label no-sanitizer marks a test left out of the sanitizer pass
# (ci/test-asan.sh, ctest -LE no-sanitizer) and of ci/quick.sh: the plain run
# has it, and it adds no code path to what runs there; the reason is written
# where the test is registered.
set(RACEORACLE_NO_SANITIZER no-sanitizer)

# raceoracle_test_unit_options(TARGET) : what every test's units are compiled
# with: GoogleTest and fmt (whose FMT_SHARED every unit then shares, as a
# precompiled header needs), and under the sanitizers -O0: the test sources
# compile in 30% less time than at the tree's -O1, and the code they test
# (libraries) keeps its flags.
function(raceoracle_test_unit_options target)
  target_link_libraries(${target} PRIVATE GTest::gtest GTest::gtest_main fmt::fmt)
  if(RACEORACLE_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()

# raceoracle_test_headers: GoogleTest's and fmt's headers (and the standard
# ones every test reads) compiled once a tree into a precompiled header that
# every test target reuses, rather than parsed again in each of some fifty
# test units (docs/CI.md says what it saved). Its units'
# options are the tests' own (raceoracle_test_unit_options), as reuse needs.
function(raceoracle_add_test_headers)
  set(unit ${CMAKE_CURRENT_BINARY_DIR}/test_headers.cpp)
  file(CONFIGURE OUTPUT ${unit} CONTENT "// the precompiled header's own unit (cmake/raceoracle.cmake)\n")
  add_library(raceoracle_test_headers OBJECT ${unit})
  raceoracle_test_unit_options(raceoracle_test_headers)
  target_precompile_headers(raceoracle_test_headers PRIVATE <gtest/gtest.h> <fmt/format.h> <algorithm> <cmath>
                            <cstdint> <functional> <map> <memory> <optional> <random> <string> <vector>)
endfunction()

# raceoracle_add_test(NAME SOURCES... LIBS... [LABELS...] [GPU] [NO_SANITIZER PATTERN...]) :
# a GoogleTest binary, tests discovered; GPU: each takes one GPU. The tests
# whose names match a NO_SANITIZER gtest pattern are labelled no-sanitizer too.
function(raceoracle_add_test name)
  cmake_parse_arguments(T "GPU" "" "SOURCES;LIBS;LABELS;NO_SANITIZER" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  raceoracle_test_unit_options(${name})
  target_precompile_headers(${name} REUSE_FROM raceoracle_test_headers)
  include(GoogleTest)
  set(gpu "")
  if(T_GPU)
    set(gpu ${RACEORACLE_GPU_RESOURCES})
  endif()
  if(NOT T_NO_SANITIZER)
    raceoracle_discover(${name} LABELS ${T_LABELS} PROPERTIES ${gpu})
    return()
  endif()
  # Two discoveries with complementary gtest filters: every test once.
  string(REPLACE ";" ":" patterns "${T_NO_SANITIZER}")
  raceoracle_discover(${name} FILTER "-${patterns}" LABELS ${T_LABELS} PROPERTIES ${gpu})
  raceoracle_discover(${name} FILTER "${patterns}" LABELS ${T_LABELS} ${RACEORACLE_NO_SANITIZER} PROPERTIES ${gpu})
endfunction()

# raceoracle_discover(TARGET [PREFIX P] [FILTER F] LABELS L... [PROPERTIES ...]) :
# gtest_discover_tests with TEST_PREFIX P and TEST_FILTER F, the tests found
# labelled L... . The labels are set at ctest time, from the discovered list,
# by a file of TEST_INCLUDE_FILES: gtest_discover_tests would read a list of
# labels given as PROPERTIES as more properties.
function(raceoracle_discover target)
  cmake_parse_arguments(D "" "PREFIX;FILTER" "LABELS;PROPERTIES" ${ARGN})
  string(MD5 id "${target};${D_PREFIX};${D_FILTER}")
  set(list ${target}_tests_${id})
  gtest_discover_tests(${target} TEST_PREFIX "${D_PREFIX}" TEST_FILTER "${D_FILTER}" DISCOVERY_TIMEOUT 60
                       TEST_LIST ${list} PROPERTIES ${D_PROPERTIES})
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake)
  file(WRITE ${script} "if(${list})\n  set_tests_properties(\${${list}} PROPERTIES LABELS \"${D_LABELS}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

# raceoracle_add_mutant(NAME KILLED_BY Property...) : a test that runs the
# properties named against the mutant NAME (as registered in
# kernels/registry.cpp) and passes only if each of them kills it. The whole
# kill row (every property) is `raceoracle mutants`' and `check`'s gate.
function(raceoracle_add_mutant name)
  cmake_parse_arguments(M "" "" "KILLED_BY" ${ARGN})
  if(NOT RACEORACLE_MUTANTS)
    return()  # a build without the named mutants (the sanitizer build's) has no gate to run
  endif()
  add_test(NAME Mutant.${name}
           COMMAND raceoracle mutants --mutants ${name} --properties ${M_KILLED_BY} --expect-killed-by ${M_KILLED_BY})
  # Left out of the sanitizer pass: a defective kernel is meant to misbehave.
  set_tests_properties(Mutant.${name} PROPERTIES LABELS "mutants;${RACEORACLE_NO_SANITIZER}" TIMEOUT 900
                       ${RACEORACLE_GPU_RESOURCES})
endfunction()

# raceoracle_find_python(VAR MODULES...) : the first python3 that imports every
# module named, or "" when none does. Debian's /usr/bin/python3 comes first:
# python3-numpy and python3-torch are installed for it, not for a python3
# that another manager put earlier on PATH.
function(raceoracle_find_python var)
  find_program(_path_python python3)
  set(found "")
  foreach(candidate /usr/bin/python3 ${_path_python})
    if(NOT found AND EXISTS ${candidate})
      set(imports "")
      foreach(m IN LISTS ARGN)
        string(APPEND imports "import ${m};")
      endforeach()
      execute_process(COMMAND ${candidate} -c "${imports}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(found ${candidate})
      endif()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

# raceoracle_add_pytest(NAME FILE LABEL): a pytest file over the source tree's Python package and this build's
# binary (PYTHONPATH, RACEORACLE_BIN), run by a python3 that has numpy and pytest; skipped, with a message, without one.
function(raceoracle_add_pytest name file label)
  raceoracle_find_python(pytest_python numpy pytest)
  if(NOT pytest_python)
    message(STATUS "no python3 with numpy and pytest: ${name} is not registered (ci/install-deps.sh installs them)")
    return()
  endif()
  add_test(NAME ${name} COMMAND ${pytest_python} -m pytest -q -p no:cacheprovider ${file})
  set_tests_properties(${name} PROPERTIES LABELS "${label};${RACEORACLE_NO_SANITIZER}"
                       ENVIRONMENT "PYTHONPATH=${PROJECT_SOURCE_DIR}/python;RACEORACLE_BIN=$<TARGET_FILE:raceoracle>")
endfunction()
