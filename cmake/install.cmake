# What `cmake --install` puts in place: esmm.h, libesmm (shared and static),
# the esmm tool, a CMake package (find_package(esmm) gives esmm::esmm and
# esmm::esmm_static) and a pkg-config file.
include(CMakePackageConfigHelpers)

set(ESMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/esmm)

install(TARGETS esmm esmm_static EXPORT esmmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(ESMM_BUILD_TOOLS)
  install(TARGETS esmm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/esmm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT esmmTargets NAMESPACE esmm:: DESTINATION ${ESMM_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/esmmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/esmmConfig.cmake
                              INSTALL_DESTINATION ${ESMM_CMAKE_DIR})
# Before 1.0 a minor release may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/esmmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/esmmConfig.cmake ${PROJECT_BINARY_DIR}/esmmConfigVersion.cmake
        DESTINATION ${ESMM_CMAKE_DIR})

# esmm.pc names its prefix relative to where it lies, so an install moved with
# --prefix or copied elsewhere still describes itself.
file(RELATIVE_PATH ESMM_PC_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" ESMM_PC_PREFIX "${ESMM_PC_PREFIX}")
set(ESMM_PC_PRIVATE_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart")
foreach(lib ${OpenMP_C_LIB_NAMES})
  string(APPEND ESMM_PC_PRIVATE_LIBS " -l${lib}")
endforeach()
string(APPEND ESMM_PC_PRIVATE_LIBS " -lm -lstdc++")
configure_file(${CMAKE_CURRENT_LIST_DIR}/esmm.pc.in ${PROJECT_BINARY_DIR}/esmm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/esmm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
