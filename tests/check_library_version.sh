#!/usr/bin/env bash
# Check that a shared library's file name follows its linker version script.
#
#   check_library_version.sh LIBRARY VERSION_SCRIPT NODE_PREFIX
#
# LIBRARY is the library file or a link to it (libmoe.so, libmoe_mpi.so.1, ...); its SONAME
# is NAME.so.MAJOR. The file must be NAME.so.MAJOR.MINOR.0 where MINOR is the last stable
# node NODE_PREFIX<MAJOR>.<MINOR> of VERSION_SCRIPT (MOE_1.2 in lib/libmoe.map gives
# libmoe.so.1.2.0; MOE_MPI_1.0 in lib/mpi/libmoe_mpi.map gives libmoe_mpi.so.1.0.0): the
# name then says which symbols the library has, whatever the release number. CMakeLists.txt
# derives the name the same way (moe_abi_minor_from_map); this checks the built result.
set -euo pipefail
export LC_ALL=C
lib=${1:?usage: check_library_version.sh LIBRARY VERSION_SCRIPT NODE_PREFIX}
map=${2:?usage: check_library_version.sh LIBRARY VERSION_SCRIPT NODE_PREFIX}
prefix=${3:?usage: check_library_version.sh LIBRARY VERSION_SCRIPT NODE_PREFIX}

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [[ ! $soname =~ ^(.+\.so)\.([0-9]+)$ ]]; then
    echo "FAIL: $lib: SONAME '$soname' is not NAME.so.MAJOR"
    exit 1
fi
stem=${BASH_REMATCH[1]}
major=${BASH_REMATCH[2]}
minor=$(sed -n "s/^${prefix}${major}\.\([0-9][0-9]*\) *{.*/\1/p" "$map" | sort -n | tail -n 1)
if [[ -z $minor ]]; then
    echo "FAIL: $map has no version node ${prefix}${major}.<minor>"
    exit 1
fi
expected="$stem.$major.$minor.0"
file_name=$(basename "$(readlink -f "$lib")")
if [[ $file_name != "$expected" ]]; then
    echo "FAIL: the library file is $file_name, but the last stable node of $map is" \
         "${prefix}${major}.${minor}: $expected expected"
    exit 1
fi
echo "file name: $file_name (last node ${prefix}${major}.${minor})"
