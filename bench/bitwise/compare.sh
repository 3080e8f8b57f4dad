#!/usr/bin/env bash
# Bit-identity of a revision's fits against the current tree's.
#
#   bench/bitwise/compare.sh BASE_COMMIT [SUBSTRING]
#
# Exports BASE_COMMIT's sources (git archive, so that no worktree is left registered if the
# script is stopped) into a temporary directory, builds its libmoe, and builds this tree's
# bench/bitwise driver against it; then builds the current tree's libmoe (the working tree,
# uncommitted changes included) and the same driver against that. Both drivers run every
# case (or those whose name contains SUBSTRING) with OPENBLAS_NUM_THREADS=1, and their lines
# are diffed: the exit status is 1 on any difference. With BASE_COMMIT = HEAD and a clean
# tree this compares the tree with itself. The current library's driver also runs twice and
# must agree with itself (threads=2 cases included).
#
# MOE_COMPARE_KEEP=1 keeps the temporary directory (its path is printed).
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 BASE_COMMIT [SUBSTRING]" >&2
    exit 2
fi
BASE=$1
ONLY=${2:-}
TREE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/moe-bitwise.XXXXXX")
if [[ ${MOE_COMPARE_KEEP:-0} == 1 ]]; then
    echo "keeping $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi
export OPENBLAS_NUM_THREADS=1
JOBS=$(nproc 2>/dev/null || echo 2)

# The library of the sources in $1, built in $2: only the library (no tests, benches or tool).
build_library() {
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DMOE_BUILD_TESTS=OFF \
          -DMOE_BUILD_BENCH=OFF -DMOE_BUILD_PROGRAMS=OFF >"$2.log" 2>&1
    cmake --build "$2" -j"$JOBS" --target moe >>"$2.log" 2>&1 ||
        { tail -n 40 "$2.log" >&2; exit 2; }
}

# This tree's driver against the headers in $1/include and the library built in $2.
build_driver() {
    local library
    library=$(find "$2" -maxdepth 1 -name 'libmoe.so' -print -quit)
    cc -std=c11 -O2 -Wall -Wextra -Wpedantic -I"$1/include" "$TREE"/bench/bitwise/*.c \
       -L"$(dirname "$library")" -Wl,-rpath,"$(dirname "$library")" -lmoe -lm -o "$2/driver"
}

run_driver() {
    "$1/driver" ${ONLY:+"$ONLY"} >"$2"
}

echo "base: $(git -C "$TREE" rev-parse --short "$BASE") ($(git -C "$TREE" log -1 --format=%s "$BASE" | cut -c1-60))"
mkdir "$WORK/base"
git -C "$TREE" archive "$BASE" | tar -x -C "$WORK/base"
build_library "$WORK/base" "$WORK/base-build"
build_driver "$WORK/base" "$WORK/base-build"

echo "current: the working tree of $(git -C "$TREE" rev-parse --short HEAD)$(git -C "$TREE" diff --quiet HEAD -- lib include CMakeLists.txt || echo ' with changes')"
build_library "$TREE" "$WORK/current-build"
build_driver "$TREE" "$WORK/current-build"

run_driver "$WORK/base-build" "$WORK/base.txt"
run_driver "$WORK/current-build" "$WORK/current.txt"
cases=$(grep -vc '^#' "$WORK/current.txt" || true)
# The current library twice: a fit that is not deterministic (threads=2 cases included)
# would make any comparison meaningless.
run_driver "$WORK/current-build" "$WORK/current-again.txt"
if ! diff -u "$WORK/current.txt" "$WORK/current-again.txt"; then
    echo "NOT DETERMINISTIC: two runs of the current library differ" >&2
    exit 1
fi
echo "deterministic: two runs of the current library agree on $cases cases"
if diff -u "$WORK/base.txt" "$WORK/current.txt"; then
    echo "identical: $cases cases"
else
    echo "DIFFERENT: $(diff "$WORK/base.txt" "$WORK/current.txt" | grep -c '^>') of $cases cases" >&2
    exit 1
fi
