# CMake package configuration for libmoe.
#
#   find_package(moe 1.0 REQUIRED)
#   target_link_libraries(app PRIVATE moe::moe)
#
# Imported targets:
#   moe::moe         the library (libmoe.so; libmoe.a when only the static
#                    library was installed)
#   moe::moe_static  libmoe.a, when both were installed
# The static library carries MOE_STATIC_DEFINE as an interface definition.


####### Expanded from @PACKAGE_INIT@ by configure_package_config_file() #######
####### Any changes to this file will be overwritten by the next CMake run ####
####### The input file was moeConfig.cmake.in                            ########

get_filename_component(PACKAGE_PREFIX_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)

macro(set_and_check _var _file)
  set(${_var} "${_file}")
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "File or directory ${_file} referenced by variable ${_var} does not exist !")
  endif()
endmacro()

macro(check_required_components _NAME)
  foreach(comp ${${_NAME}_FIND_COMPONENTS})
    if(NOT ${_NAME}_${comp}_FOUND)
      if(${_NAME}_FIND_REQUIRED_${comp})
        set(${_NAME}_FOUND FALSE)
      endif()
    endif()
  endforeach()
endmacro()

####################################################################################

set(moe_VERSION_ABI 1)
set(_moe_has_static OFF)

if(_moe_has_static)
  # libmoe.a needs its dependencies at link time. They are found the way the
  # library itself found them: with pkg-config, as PkgConfig::MOE_BLAS and
  # PkgConfig::MOE_LAPACKE, which the exported target refers to.
  include(CMakeFindDependencyMacro)
  find_dependency(PkgConfig)
  if(NOT TARGET PkgConfig::MOE_BLAS)
    pkg_check_modules(MOE_BLAS QUIET IMPORTED_TARGET openblas)
    if(NOT TARGET PkgConfig::MOE_BLAS)
      set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
      set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
          "moe (static) needs the pkg-config module openblas (Debian: libopenblas-dev)")
      return()
    endif()
  endif()
  if(NOT TARGET PkgConfig::MOE_LAPACKE)
    pkg_check_modules(MOE_LAPACKE QUIET IMPORTED_TARGET lapacke)
    if(NOT TARGET PkgConfig::MOE_LAPACKE)
      set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
      set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
          "moe (static) needs the pkg-config module lapacke (Debian: liblapacke-dev)")
      return()
    endif()
  endif()
  if(ON)
    find_dependency(OpenMP COMPONENTS C)
  endif()
endif()
unset(_moe_has_static)

include("${CMAKE_CURRENT_LIST_DIR}/moeTargets.cmake")

# moe::mpi (libmoe_mpi), when it was installed and MPI is found here too.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/moeMpiTargets.cmake")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    include("${CMAKE_CURRENT_LIST_DIR}/moeMpiTargets.cmake")
  endif()
endif()

check_required_components(moe)
