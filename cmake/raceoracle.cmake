# One registration function per kind of test (STYLE.md).
include_guard(GLOBAL)

# raceoracle_add_test(NAME SOURCES... LIBS...) : a GoogleTest binary, tests discovered.
function(raceoracle_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
endfunction()
