# Link flags written into moe.pc (included by CMakeLists.txt).
#
# With libmoe.so installed, moe.pc must not name the BLAS and LAPACKE
# modules in Requires.private: pkg-config insists on finding every such
# module even for a shared link, which needs none of them, so
# `pkg-config --libs moe` failed wherever openblas.pc was missing. What a
# static link needs is written out in Libs.private instead, as the modules
# gave it at configure time. OpenMP appears as its runtime library (-lgomp,
# -lomp with its directory), never as a compiler flag such as clang's
# -fopenmp=libomp, which another compiler rejects.

# Directories every linker searches anyway: no -L is written for them.
set(_moe_pc_system_dirs ${CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES})
if(CMAKE_LIBRARY_ARCHITECTURE)
  foreach(_moe_dir IN LISTS CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES)
    list(APPEND _moe_pc_system_dirs "${_moe_dir}/${CMAKE_LIBRARY_ARCHITECTURE}")
  endforeach()
endif()

# moe_pc_link_flags(<out> <item>...)
# Items are -L<dir>, -l<name>, other linker arguments, or full paths of
# libraries (written as -L<dir> -l<name>). <out> receives them as one string,
# each preceded by a space, without system directories and repeated -L.
function(moe_pc_link_flags out)
  set(flags "")
  set(seen_dirs "")
  foreach(item IN LISTS ARGN)
    set(dir "")
    set(token "${item}")
    if(item MATCHES "^-L(.+)$")
      set(dir "${CMAKE_MATCH_1}")
      set(token "")
    elseif(IS_ABSOLUTE "${item}" AND item MATCHES "/lib([^/]+)\\.(so|a|dylib)[.0-9]*$")
      set(token "-l${CMAKE_MATCH_1}")
      get_filename_component(dir "${item}" DIRECTORY)
    endif()
    if(NOT dir STREQUAL "")
      string(REGEX REPLACE "/+$" "" dir "${dir}")
      if(NOT dir IN_LIST _moe_pc_system_dirs AND NOT dir IN_LIST seen_dirs)
        list(APPEND seen_dirs "${dir}")
        string(APPEND flags " -L${dir}")
      endif()
    endif()
    if(NOT token STREQUAL "")
      string(APPEND flags " ${token}")
    endif()
  endforeach()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# The OpenMP runtime, from what find_package(OpenMP) found for the C compiler.
set(_moe_openmp_items "")
if(MOE_OPENMP_LINK)
  foreach(_moe_name IN LISTS OpenMP_C_LIB_NAMES)
    if(OpenMP_${_moe_name}_LIBRARY)
      list(APPEND _moe_openmp_items "${OpenMP_${_moe_name}_LIBRARY}")
    else()
      list(APPEND _moe_openmp_items "-l${_moe_name}")
    endif()
  endforeach()
endif()
moe_pc_link_flags(MOE_PC_OPENMP ${_moe_openmp_items})

# BLAS and LAPACKE as a static link of libmoe.a needs them.
set(_moe_dependency_items ${MOE_BLAS_STATIC_LDFLAGS} ${MOE_LAPACKE_STATIC_LDFLAGS})
if(NOT _moe_dependency_items)
  set(_moe_dependency_items ${MOE_BLAS_LDFLAGS} ${MOE_LAPACKE_LDFLAGS})
endif()
moe_pc_link_flags(MOE_PC_DEPENDENCIES ${_moe_dependency_items})
