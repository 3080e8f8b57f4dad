#----------------------------------------------------------------
# Generated CMake target import file for configuration "Release".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "moe::moe" for configuration "Release"
set_property(TARGET moe::moe APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(moe::moe PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libmoe.so.1.2.0"
  IMPORTED_SONAME_RELEASE "libmoe.so.1"
  )

list(APPEND _cmake_import_check_targets moe::moe )
list(APPEND _cmake_import_check_files_for_moe::moe "${_IMPORT_PREFIX}/lib/libmoe.so.1.2.0" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
