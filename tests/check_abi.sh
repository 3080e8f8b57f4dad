#!/usr/bin/env bash
# ABI check: compares a freshly built libmoe.so (with debug information) against
# the baseline of the last release, abi/libmoe.so.1.abi, with abidiff (Debian's
# abigail-tools). Fails on any removed or changed function, variable or type
# reachable from the public headers. Added functions are allowed (they raise
# MOE_ABI_MINOR), and so is growth at the end of the versioned structs listed in
# abi/versioned.suppr. docs/ARCHITECTURE.md ("ABI") says when and how to renew
# the baseline.
#
# usage: tests/check_abi.sh LIBMOE_SO SOURCE_DIR
set -euo pipefail

library=${1:?usage: check_abi.sh LIBMOE_SO SOURCE_DIR}
source_dir=${2:?usage: check_abi.sh LIBMOE_SO SOURCE_DIR}
baseline="$source_dir/abi/libmoe.so.1.abi"
suppressions="$source_dir/abi/versioned.suppr"

if ! command -v abidiff >/dev/null 2>&1; then
    echo "abidiff not found (apt-get install abigail-tools)" >&2
    exit 2
fi
if ! readelf -S --wide "$library" 2>/dev/null | grep -q "\.debug_info"; then
    echo "$library has no debug information: build it with -g (RelWithDebInfo)" >&2
    exit 2
fi

status=0
abidiff --no-added-syms --suppressions "$suppressions" \
        --headers-dir2 "$source_dir/include/moe" "$baseline" "$library" || status=$?
# abidiff's status is a bit field: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
if [[ $status -ne 0 ]]; then
    echo "ABI check FAILED (abidiff status $status): the library's ABI differs from" \
         "abi/libmoe.so.1.abi beyond added functions and appended versioned fields" >&2
    exit 1
fi
echo "ABI check passed: no removed or changed symbol or type against abi/libmoe.so.1.abi"
