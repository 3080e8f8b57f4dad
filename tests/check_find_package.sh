#!/usr/bin/env bash
# find_package(moe) with and without the component mpi, against an installed libmoe.
#
#   check_find_package.sh PREFIX mpi|no-mpi [WORK_DIR]
#
# PREFIX is the installation prefix (/usr for the Debian packages); "mpi" says libmoe_mpi is
# installed there, "no-mpi" that it is not. Builds tests/find_package in WORK_DIR (default:
# a temporary directory, removed afterwards) and checks:
#   mpi:    COMPONENTS mpi configures, moe::mpi links, and the program runs on one rank;
#           OPTIONAL_COMPONENTS mpi reports moe_mpi_FOUND=TRUE;
#   no-mpi: COMPONENTS mpi fails the configure step with the reason (libmoe_mpi is not
#           installed); OPTIONAL_COMPONENTS mpi configures with moe_mpi_FOUND=FALSE and the
#           moe::moe program builds and runs.
set -euo pipefail
prefix=${1:?usage: check_find_package.sh PREFIX mpi|no-mpi [WORK_DIR]}
mode=${2:?usage: check_find_package.sh PREFIX mpi|no-mpi [WORK_DIR]}
source_dir="$(cd "$(dirname "$0")" && pwd)/find_package"
if [[ -n ${3:-} ]]; then
    work=$3
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/moe-find-package.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
# Open MPI refuses to start as root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

configure() { # BUILD_DIR MOE_MPI: configure, the output in BUILD_DIR.log
    cmake -S "$source_dir" -B "$1" -DCMAKE_PREFIX_PATH="$prefix" -DMOE_MPI="$2" \
        >"$1.log" 2>&1
}

echo "-- find_package(moe REQUIRED OPTIONAL_COMPONENTS mpi) in $prefix"
if ! configure "$work/optional" optional; then
    cat "$work/optional.log"
    echo "FAIL: OPTIONAL_COMPONENTS mpi did not configure" >&2
    exit 1
fi
found=$(sed -n 's/.*moe_mpi_FOUND=//p' "$work/optional.log")
cmake --build "$work/optional" >/dev/null
"$work/optional/version"
if [[ $mode == mpi ]]; then
    [[ $found == TRUE ]] || { echo "FAIL: moe_mpi_FOUND is '$found', expected TRUE" >&2; exit 1; }
else
    [[ $found == FALSE ]] || { echo "FAIL: moe_mpi_FOUND is '$found', expected FALSE" >&2; exit 1; }
fi
echo "moe_mpi_FOUND=$found"

echo "-- find_package(moe REQUIRED COMPONENTS mpi) in $prefix"
if [[ $mode == mpi ]]; then
    if ! configure "$work/required" required; then
        cat "$work/required.log"
        echo "FAIL: COMPONENTS mpi did not configure though libmoe_mpi is installed" >&2
        exit 1
    fi
    cmake --build "$work/required" >/dev/null
    readelf -d "$work/required/mpi_report" | grep -q 'libmoe_mpi\.so\.1' \
        || { echo "FAIL: mpi_report does not link libmoe_mpi.so.1" >&2; exit 1; }
    mpiexec -n 1 "$work/required/mpi_report"
else
    if configure "$work/required" required; then
        echo "FAIL: COMPONENTS mpi configured though libmoe_mpi is not installed" >&2
        exit 1
    fi
    if ! grep -q 'libmoe_mpi is not installed' "$work/required.log"; then
        cat "$work/required.log"
        echo "FAIL: the failure does not say libmoe_mpi is not installed" >&2
        exit 1
    fi
    echo "failed as expected:"
    grep -A3 'the required component mpi is missing' "$work/required.log" | sed 's/^/  /'
fi
echo PASS
