#----------------------------------------------------------------
# Generated CMake target import file for configuration "Release".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "moe::mpi" for configuration "Release"
set_property(TARGET moe::mpi APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(moe::mpi PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libmoe_mpi.so.1.1.0"
  IMPORTED_SONAME_RELEASE "libmoe_mpi.so.1"
  )

list(APPEND _cmake_import_check_targets moe::mpi )
list(APPEND _cmake_import_check_files_for_moe::mpi "${_IMPORT_PREFIX}/lib/libmoe_mpi.so.1.1.0" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
