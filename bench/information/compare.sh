#!/usr/bin/env bash
# The observed information of a revision against the current tree's, on compare.c's 144
# fitted models.
#
#   bench/information/compare.sh BASE_COMMIT
#
# Exports BASE_COMMIT's sources (git archive) into a temporary directory, builds its libmoe
# and the current tree's (the working tree, uncommitted changes included), builds
# compare.c against each and prints, over the cases, the largest difference relative to
# the matrix's largest entry, and relative to each entry's scale sqrt(I_aa I_bb) (floored
# at 1e-12 of the largest entry), with the case. The fits must agree bit for bit (their
# log-likelihoods are compared): only the information may differ.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 BASE_COMMIT" >&2
    exit 2
fi
TREE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/moe-information.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export OPENBLAS_NUM_THREADS=1
JOBS=$(nproc 2>/dev/null || echo 2)

build() { # SOURCE BUILD
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DMOE_BUILD_TESTS=OFF \
          -DMOE_BUILD_BENCH=OFF -DMOE_BUILD_PROGRAMS=OFF >"$2.log" 2>&1
    cmake --build "$2" -j"$JOBS" --target moe >>"$2.log" 2>&1 || { tail -n 40 "$2.log" >&2; exit 2; }
    cc -std=c11 -O2 -I"$1/include" "$TREE/bench/information/compare.c" -L"$2" \
       -Wl,-rpath,"$2" -lmoe -lm -o "$2/compare"
    "$2/compare" >"$2.out"
}

mkdir "$WORK/base"
git -C "$TREE" archive "$1" | tar -x -C "$WORK/base"
build "$WORK/base" "$WORK/base-build"
build "$TREE" "$WORK/current-build"
PYTHON=python3
command -v /usr/bin/python3 >/dev/null && PYTHON=/usr/bin/python3
"$PYTHON" - "$WORK/base-build.out" "$WORK/current-build.out" <<'PY'
import sys
import numpy as np

def load(path):
    cases, name = {}, None
    for line in open(path):
        if line.startswith("case"):
            _, name, _, loglik = line.split()
            cases[name] = [float(loglik), []]
        else:
            cases[name][1].append(float(line))
    return cases

base, current = load(sys.argv[1]), load(sys.argv[2])
worst_scale = worst_entry = 0.0
for name, (loglik, values) in base.items():
    if current[name][0] != loglik:
        sys.exit(f"{name}: the fits differ ({loglik} against {current[name][0]})")
    a = np.array(values)
    a = a.reshape(int(round(len(a) ** 0.5)), -1)
    b = np.array(current[name][1]).reshape(a.shape)
    largest = np.max(np.abs(a))
    scale = np.sqrt(np.abs(np.outer(np.diag(a), np.diag(a)))) + 1e-12 * largest
    by_scale = np.max(np.abs(a - b)) / largest
    by_entry = np.max(np.abs(a - b) / scale)
    if by_scale > worst_scale:
        worst_scale, scale_case = by_scale, name
    if by_entry > worst_entry:
        worst_entry, entry_case = by_entry, name
print(f"{len(base)} cases; largest difference / largest entry: {worst_scale:.3g} ({scale_case}); "
      f"/ the entry's scale: {worst_entry:.3g} ({entry_case})")
PY
