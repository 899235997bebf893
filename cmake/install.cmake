# What `cmake --install` puts under the prefix, and the Debian package (cpack -G DEB):
#   bin/raceoracle
#   share/raceoracle/{properties/corpus, kernels, examples, docs}   found relative to bin/ (properties/data_dir.h)
#   lib/python3/dist-packages/raceoracle                            the Python package
#   lib/libraceoracle_oracle.a, include/{race,oracle}/*.h, lib/cmake/raceoracle/
#       find_package(raceoracle) gives raceoracle::oracle, the float64 oracle, for a C++ project's own tests
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RACEORACLE_DATA ${CMAKE_INSTALL_DATADIR}/raceoracle)
install(TARGETS raceoracle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/properties/corpus DESTINATION ${RACEORACLE_DATA}/properties)
# The mutation report quotes the kernel sources where each defect is switched on.
install(FILES ${PROJECT_SOURCE_DIR}/kernels/race.h ${PROJECT_SOURCE_DIR}/kernels/fused.hip
              ${PROJECT_SOURCE_DIR}/kernels/baseline.hip ${PROJECT_SOURCE_DIR}/kernels/defect.h
        DESTINATION ${RACEORACLE_DATA}/kernels)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${RACEORACLE_DATA}/examples
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/docs/SPEC.md ${PROJECT_SOURCE_DIR}/docs/SAMPLER_PROTOCOL.md
        DESTINATION ${RACEORACLE_DATA}/docs)
set(RACEORACLE_PYTHON_DIR lib/python3/dist-packages CACHE STRING "where the Python package is installed, under the prefix")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/raceoracle DESTINATION ${RACEORACLE_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "_schema.json" PATTERN "__pycache__" EXCLUDE)

install(TARGETS raceoracle_oracle raceoracle_race EXPORT raceoracleTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/race/definition.h ${PROJECT_SOURCE_DIR}/race/filters.h ${PROJECT_SOURCE_DIR}/race/noise.h
              ${PROJECT_SOURCE_DIR}/race/verify.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/race)
install(FILES ${PROJECT_SOURCE_DIR}/oracle/oracle.h ${PROJECT_SOURCE_DIR}/oracle/row.h
              ${PROJECT_SOURCE_DIR}/oracle/contract.h ${PROJECT_SOURCE_DIR}/oracle/error_model.h
              ${PROJECT_SOURCE_DIR}/oracle/drawn_noise.h ${PROJECT_SOURCE_DIR}/oracle/filter.h
              ${PROJECT_SOURCE_DIR}/oracle/verify.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/oracle)
set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/raceoracle)
install(EXPORT raceoracleTargets NAMESPACE raceoracle:: DESTINATION ${cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/raceoracleConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/raceoracleConfig.cmake INSTALL_DESTINATION ${cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/raceoracleConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/raceoracleConfig.cmake ${PROJECT_BINARY_DIR}/raceoracleConfigVersion.cmake
        DESTINATION ${cmake_dir})

set(CPACK_PACKAGE_NAME raceoracle)
set(CPACK_PACKAGE_CONTACT "raceoracle maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "correctness oracle and property suite for exponential-race sampling kernels")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What find_package(raceoracle) finds beside it (raceoracleConfig.cmake.in's find_dependency).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3-numpy, libeigen3-dev (>= 3.4), libfmt-dev")
set(CPACK_STRIP_FILES ON)  # the binary without its symbols: 62 MB unstripped
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-torch, python3-pytest")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
