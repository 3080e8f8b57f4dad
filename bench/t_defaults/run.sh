#!/usr/bin/env bash
# run.sh MOE N SETS SEEDS: for each data set (seeds 1..SETS), the default t fit (seed 1) and
# the best of SEEDS seeds, and the Gaussian fit; prints one line per set.
set -euo pipefail
moe=$1 n=$2 sets=$3 seeds=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
field() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['fit'][sys.argv[2]])" "$1" "$2"; }
for set in $(seq 1 "$sets"); do
    /usr/bin/python3 "$here/generate.py" "$n" "$set" "$work/d.csv"
    best=-1e300
    for seed in $(seq 1 "$seeds"); do
        "$moe" fit "$work/d.csv" --response y --family t --seed "$seed" --json >"$work/f.json" 2>/dev/null || continue
        l=$(field "$work/f.json" loglik)
        if [[ $seed == 1 ]]; then default=$l; iters=$(field "$work/f.json" iterations); conv=$(field "$work/f.json" converged); fi
        best=$(/usr/bin/python3 -c "print(max($best, $l))")
    done
    "$moe" fit "$work/d.csv" --response y --seed 1 --json >"$work/g.json" 2>/dev/null
    g=$(field "$work/g.json" loglik)
    /usr/bin/python3 -c "print('set %2d n %d default %.4f best %.4f gap %.4f iterations %s converged %s gaussian %.4f t-gauss %.4f' % ($set, $n, $default, $best, $best - $default, '$iters', '$conv', $g, $default - $g))"
done
