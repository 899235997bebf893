# One registration function per kind of test.
include_guard(GLOBAL)

# raceoracle_add_test(NAME SOURCES... LIBS...) : a GoogleTest binary, tests discovered.
function(raceoracle_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
endfunction()

# raceoracle_add_mutant(NAME KILLED_BY Property...) : a test that runs every
# property against the mutant NAME (as registered in kernels/registry.cpp) and
# passes only if the mutant is killed, by at least the properties named.
function(raceoracle_add_mutant name)
  cmake_parse_arguments(M "" "" "KILLED_BY" ${ARGN})
  add_test(NAME Mutant.${name}
           COMMAND raceoracle mutants --mutants ${name} --expect-killed-by ${M_KILLED_BY})
  set_tests_properties(Mutant.${name} PROPERTIES LABELS mutants TIMEOUT 900)
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
