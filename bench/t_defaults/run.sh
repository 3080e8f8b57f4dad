#!/usr/bin/env bash
# run.sh LIBMOE_PREFIX_OR_BUILD N SETS SEEDS [SHARE WHERE]: for each generated outlier set
# (generate.py, seeds 1..SETS), the default t fit (seed 1) against the best of SEEDS seeds,
# and the Gaussian fit; one line per set. The first argument is a build directory of libmoe
# (with include/ beside it in the source tree) or an install prefix.
set -euo pipefail
build=$1 n=$2 sets=$3 seeds=$4 share=${5:-0.05} where=${6:-both}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
include="$here/../../include"; [[ -d $build/include/moe ]] && include=$build/include
lib=$build; [[ -d $build/lib ]] && lib=$build/lib
cc -O2 -I"$include" -I"$build/include" "$here/acceptance.c" -L"$lib" -Wl,-rpath,"$lib" -lmoe -lm \
    -o "$work/acceptance"
for set in $(seq 1 "$sets"); do
    /usr/bin/python3 "$here/generate.py" "$n" "$set" "$work/d.csv" "$share" "$where"
    printf 'set %2d ' "$set"
    "$work/acceptance" "$work/d.csv" "$seeds"
done
