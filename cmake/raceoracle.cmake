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

# raceoracle_add_test(NAME SOURCES... LIBS... [GPU]) : a GoogleTest binary,
# tests discovered; GPU: each takes one GPU.
function(raceoracle_add_test name)
  cmake_parse_arguments(T "GPU" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  set(gpu "")
  if(T_GPU)
    set(gpu ${RACEORACLE_GPU_RESOURCES})
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}" ${gpu})
endfunction()

# raceoracle_add_mutant(NAME KILLED_BY Property...) : a test that runs the
# properties named against the mutant NAME (as registered in
# kernels/registry.cpp) and passes only if each of them kills it. The whole
# kill row (every property) is `raceoracle mutants`' and `check`'s gate.
function(raceoracle_add_mutant name)
  cmake_parse_arguments(M "" "" "KILLED_BY" ${ARGN})
  add_test(NAME Mutant.${name}
           COMMAND raceoracle mutants --mutants ${name} --properties ${M_KILLED_BY} --expect-killed-by ${M_KILLED_BY})
  set_tests_properties(Mutant.${name} PROPERTIES LABELS mutants TIMEOUT 900 ${RACEORACLE_GPU_RESOURCES})
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
