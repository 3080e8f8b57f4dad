#!/usr/bin/env bash
# compare.sh MOE: the new families' reproductions (docs/REPRODUCTIONS.md, "Binomial and
# Gamma experts"): flexmix's betablocker (binomial, Deaths of Total, experts on Treatment,
# constant gate) at K = 2 and 3, and a generated Gamma mixture with the gate on x, each fitted
# by the default `moe fit` at seeds 1, 7 and 42 beside flexmix's best of 20 and (Gamma) the
# direct maximum likelihood, whose shapes flexmix's moment estimate does not reach.
set -euo pipefail
moe=${1:-moe}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== betablocker"
Rscript "$here/families.R" betablocker "$work/betablocker.csv"
for k in 2 3; do
    for seed in 1 7 42; do
        line=$("$moe" fit "$work/betablocker.csv" --response deaths --features treated \
               --trials total --family binomial -k "$k" --gate-features none --seed "$seed" |
               grep '^log-likelihood')
        echo "K=$k seed=$seed moe ${line%%AIC*}"
    done
done
echo "== gamma"
Rscript "$here/families.R" gamma "$work/gamma.csv"
for seed in 1 7 42; do
    line=$("$moe" fit "$work/gamma.csv" --response y --family gamma -k 2 --seed "$seed" |
           grep '^log-likelihood')
    echo "seed=$seed moe ${line%%AIC*}"
done
