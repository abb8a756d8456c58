# Installs the libraries, headers, a pkg-config file and a CMake package (clgrad::clgrad).
include(CMakePackageConfigHelpers)
set(CLG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/clgrad)

install(TARGETS clgrad clgrad_static EXPORT clgradTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/clgrad DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT clgradTargets NAMESPACE clgrad:: DESTINATION ${CLG_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/clgradConfig.cmake.in
  ${CMAKE_BINARY_DIR}/clgradConfig.cmake INSTALL_DESTINATION ${CLG_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/clgradConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/clgradConfig.cmake ${CMAKE_BINARY_DIR}/clgradConfigVersion.cmake
  DESTINATION ${CLG_CMAKE_DIR})

# Relative prefix so that the installed tree can be moved (pkg-config knows ${pcfiledir}).
file(RELATIVE_PATH CLG_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${PROJECT_SOURCE_DIR}/cmake/clgrad.pc.in ${CMAKE_BINARY_DIR}/clgrad.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/clgrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
