#!/usr/bin/env bash
# The moe tool's --gate-features, --expert-features and --offset (libmoe 1.1, model spec
# version 2): the gate and the experts on their own columns, held coefficients shown as held
# and left out of the standard errors, an offset through fit, info and predict, and the
# errors. Small CSV files generated here (awk, fixed seeds).
#
#   tests/cli/test_cli_inputs.sh PATH/TO/bin/moe
set -uo pipefail

moe=${1:?usage: test_cli_inputs.sh PATH/TO/moe}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Experts y = 2 + 1.5 x and y = -1 - x, chosen by a gate on z alone.
awk 'BEGIN { srand(11); print "x,z,y";
    for (i = 0; i < 1500; i++) {
        x = 4 * rand() - 2; z = 2 * rand() - 1; u = rand();
        p = 1 / (1 + exp(-(0.5 + 3 * z)));
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        y = (u < p) ? 2 + 1.5 * x + 0.3 * e : -1 - x + 0.3 * e;
        printf "%.6f,%.6f,%.6f\n", x, z, y } }' >"$work/gated.csv"

# Poisson counts over an exposure t (log t in its own column), rates exp(1 + 0.5 x) and
# exp(-0.5 - 0.5 x), chosen by a gate on x.
awk 'BEGIN { srand(5); print "x,t,logt,y";
    for (i = 0; i < 1500; i++) {
        x = 2 * rand() - 1; t = 0.5 + 4.5 * rand();
        p = 1 / (1 + exp(-3 * x));
        eta = (rand() < p) ? 1 + 0.5 * x : -0.5 - 0.5 * x;
        mu = t * exp(eta); limit = exp(-mu); k = 0; q = rand();
        while (q > limit) { q *= rand(); k++ }
        printf "%.6f,%.6f,%.6f,%d\n", x, t, log(t), k } }' >"$work/counts.csv"

# --- the gate on z, the experts on x ------------------------------------------
run 0 "fit --gate-features z --expert-features x" "$moe" fit "$work/gated.csv" --response y \
    --gate-features z --expert-features x --seed 1 -o "$work/gated.moe"
contains "$work/out" "8 free parameters" "restricted fit: free parameters"
contains "$work/out" "gate sees: (intercept), z" "restricted fit: the gate's inputs"
contains "$work/out" "experts see: (intercept), x" "restricted fit: the experts' inputs"
# Held coefficients are '-' in the tables and absent from the standard errors.
checks=$((checks + 1))
awk '/^experts:/ { part = "experts" } /^gate:/ { part = "gate" }
     part == "experts" && $1 == "z" { if ($2 != "-" || $3 != "-") exit 1; seen++ }
     part == "gate" && $1 == "x" { if ($2 != "-" || $3 != "-") exit 1; seen++ }
     END { exit seen == 2 ? 0 : 1 }' "$work/out" || fail "held coefficients not shown as '-'"
lacks "$work/out" "gate 1: x" "standard errors of a held gate coefficient"
lacks "$work/out" "expert 1: z" "standard errors of a held expert coefficient"
lacks "$work/out" "expert 2: z" "standard errors of a held expert coefficient"
contains "$work/out" "gate 1: z" "standard error of the gate's own column"
# The truth is recovered: slopes 1.5 and -1, the gate's slope on z 3 (either sign).
checks=$((checks + 1))
awk '/^experts:/ { part = "experts" } /^gate:/ { part = "gate" }
     part == "experts" && $1 == "x" { lo = ($2 < $3) ? $2 : $3; hi = ($2 < $3) ? $3 : $2;
         if (lo < -1.1 || lo > -0.9 || hi < 1.4 || hi > 1.6) exit 1; seen++ }
     part == "gate" && $1 == "z" { s = ($2 < 0) ? -$2 : $2; if (s < 2.5 || s > 3.6) exit 1; seen++ }
     END { exit seen == 2 ? 0 : 1 }' "$work/out" || fail "restricted fit: truth not recovered"
cp "$work/out" "$work/fit_summary"

run 0 "info of a restricted model" "$moe" info "$work/gated.moe"
contains "$work/out" "gate sees: (intercept), z" "info: the gate's inputs"
checks=$((checks + 1))
diff <(grep -E '^  (\(intercept\)|x|z) ' "$work/fit_summary") \
     <(grep -E '^  (\(intercept\)|x|z) ' "$work/out") >/dev/null ||
    fail "info coefficients differ from fit's"
run 0 "predict with a restricted model" "$moe" predict "$work/gated.moe" "$work/gated.csv"
checks=$((checks + 1))
[[ $(wc -l <"$work/out") -eq 1501 ]] || fail "predict: not one prediction a row"

run 0 "fit --json restricted" "$moe" fit "$work/gated.csv" --response y --gate-features z \
    --expert-features x --seed 1 --json
contains "$work/out" '"gate_inputs": ["(intercept)", "z"]' "json: gate inputs"
contains "$work/out" '"expert_inputs": ["(intercept)", "x"]' "json: expert inputs"
contains "$work/out" '"offset": null' "json: no offset"
lacks "$work/out" '"parameter": "gate 1: x"' "json: a held gate coefficient's standard error"
if [[ -x /usr/bin/python3 ]]; then
    checks=$((checks + 1))
    /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/out" ||
        fail "fit --json restricted: not valid JSON"
fi

# Positions among the features, and experts of the intercept alone.
run 0 "fit --gate-features 1 --expert-features none" "$moe" fit "$work/gated.csv" \
    --response y --gate-features 1 --expert-features none --seed 1
contains "$work/out" "6 free parameters" "experts of the intercept: free parameters"
contains "$work/out" "experts see: (intercept)" "experts of the intercept: inputs"
# select takes them too.
run 0 "select --gate-features z" "$moe" select "$work/gated.csv" --response y -k 1:2 \
    --gate-features z --expert-features x --seed 1
contains "$work/out" "*" "select marks a best"

# --- an offset: Poisson counts over an exposure --------------------------------
run 0 "fit --offset logt" "$moe" fit "$work/counts.csv" --response y --family poisson \
    --features x --offset logt --seed 1 -o "$work/counts.moe"
contains "$work/out" "6 free parameters" "offset fit: free parameters"
contains "$work/out" "experts see: (intercept), x; offset logt (coefficient 1)" "offset fit"
contains "$work/out" "gate sees: (intercept), x" "the gate does not see the offset"
lacks "$work/out" ": logt" "offset fit: no standard error of the offset"
checks=$((checks + 1))
awk '/^experts:/ { part = "experts" } /^gate:/ { part = "gate" }
     part == "experts" && $1 == "logt" { if ($2 != "offset") exit 1; seen++ }
     part == "experts" && $1 == "x" { lo = ($2 < $3) ? $2 : $3; hi = ($2 < $3) ? $3 : $2;
         if (lo < -0.6 || lo > -0.3 || hi < 0.35 || hi > 0.65) exit 1; seen++ }
     END { exit seen == 2 ? 0 : 1 }' "$work/out" || fail "offset fit: rates not recovered"
run 0 "predict with an offset" "$moe" predict "$work/counts.moe" "$work/counts.csv"
# A mean count grows with the exposure: the rows' predictions sum to about the counts'.
checks=$((checks + 1))
paste -d, <(tail -n +2 "$work/out") <(tail -n +2 "$work/counts.csv" | cut -d, -f4) |
    awk -F, '{ p += $1; y += $2 } END { r = p / y; exit (r > 0.98 && r < 1.02) ? 0 : 1 }' ||
    fail "predict with an offset: mean counts do not follow the exposure"

# --- the columns the model uses ------------------------------------------------
# As NPreg: a response, a covariate, and columns that are none (the class, identifiers, a
# text column).
awk 'BEGIN { srand(3); print "yn,x,class,id1,id2,site";
    for (i = 0; i < 400; i++) {
        x = 10 * rand(); c = (rand() < 0.5) ? 1 : 2;
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        printf "%.5f,%.5f,%d,%d,%d,%s\n", (c == 1) ? 5 * x + e : 15 + 4 * x - 0.5 * x * x + e,
            x, c, i, i % 7, (i % 2) ? "north" : "south" } }' >"$work/npreg.csv"
cut -d, -f1-5 "$work/npreg.csv" >"$work/npreg_numbers.csv"
# Both parts named: the model's columns are the ones they name; the others are not read.
run 0 "the parts' columns alone" "$moe" fit "$work/npreg.csv" --response yn --gate-features x \
    --expert-features x --seed 1
contains "$work/out" "covariates: x" "the parts' columns: the covariates"
contains "$work/out" "gate sees: (intercept), x" "the parts' columns: the gate's"
contains "$work/out" "experts see: (intercept), x" "the parts' columns: the experts'"
lacks "$work/out" "id1" "the parts' columns: an identifier taken"
run 0 "the parts' columns, streamed" "$moe" fit "$work/npreg.csv" --response yn \
    --gate-features x --expert-features x --batch-size 200
contains "$work/out" "covariates: x" "the parts' columns, streamed"
# Without them every other column is a covariate, and the summary says which.
run 0 "every other column" "$moe" fit "$work/npreg_numbers.csv" --response yn --seed 1
contains "$work/out" "covariates: x, class, id1, id2" "the default covariates said"
contains "$work/out" "gate sees: (intercept), x, class, id1, id2" "the default gate's inputs"
# One part named: the other sees every feature, so every other column is read.
run 0 "the gate's columns alone" "$moe" fit "$work/npreg_numbers.csv" --response yn \
    --gate-features x --seed 1
contains "$work/out" "covariates: x, class, id1, id2" "one part named: the covariates"
contains "$work/out" "experts see: (intercept), x, class, id1, id2" "one part named: the other's"
# A wrong column name, in any option that names one, lists the header's names.
header="the header's columns: yn, x, class, id1, id2, site"
run 2 "a wrong response" "$moe" fit "$work/npreg.csv" --response Yn --features x
contains "$work/err" "no column named 'Yn'; $header" "a wrong response"
run 2 "a wrong --features name" "$moe" fit "$work/npreg.csv" --response yn --features x,ID1
contains "$work/err" "no column named 'ID1'; $header" "a wrong --features name"
run 2 "a wrong name among the parts' columns" "$moe" fit "$work/npreg.csv" --response yn \
    --gate-features x --expert-features X
contains "$work/err" "no column named 'X'; $header" "a wrong --expert-features name"
run 2 "a wrong --gate-features name" "$moe" fit "$work/npreg.csv" --response yn --features x \
    --gate-features xx
contains "$work/err" "$header" "a wrong --gate-features name"
run 2 "a column --features left out" "$moe" fit "$work/npreg.csv" --response yn --features x \
    --gate-features id1
contains "$work/err" "the column 'id1' is not among the features --features chose (x)" \
    "a column --features left out"
run 2 "a wrong --offset name" "$moe" fit "$work/npreg_numbers.csv" --response yn --offset t
contains "$work/err" "the header's columns: yn, x, class, id1, id2" "a wrong --offset name"
run 2 "a wrong --offset name with --features" "$moe" fit "$work/npreg.csv" --response yn \
    --features x --offset t
contains "$work/err" "no column named 't'; $header" "a wrong --offset name with --features"
run 0 "fit a model to predict with" "$moe" fit "$work/npreg_numbers.csv" --response yn \
    --features x --seed 1 -o "$work/npreg.moe"
cut -d, -f1,3 "$work/npreg_numbers.csv" >"$work/no_x.csv"
run 2 "predict: a missing column" "$moe" predict "$work/npreg.moe" "$work/no_x.csv"
contains "$work/err" "no column named 'x'; the header's columns: yn, class" \
    "predict: a missing column"
run 2 "predict: a wrong --response" "$moe" predict "$work/npreg.moe" "$work/npreg_numbers.csv" \
    --posterior --response y
contains "$work/err" "no column named 'y'; the header's columns: yn, x" \
    "predict: a wrong --response"

# --- errors -------------------------------------------------------------------
run 2 "an unknown gate column" "$moe" fit "$work/gated.csv" --response y --gate-features w
contains "$work/err" "--gate-features: 'w' is neither a feature column" "unknown gate column"
run 2 "the response as a feature" "$moe" fit "$work/gated.csv" --response y --expert-features y
contains "$work/err" "'y' is the response" "response as a feature"
run 2 "a position out of range" "$moe" fit "$work/gated.csv" --response y --gate-features 2
contains "$work/err" "position 0..1" "position out of range"
run 2 "a column twice" "$moe" fit "$work/gated.csv" --response y --gate-features z,1
contains "$work/err" "listed twice" "a column twice"
run 2 "a gate that sees nothing" "$moe" fit "$work/gated.csv" --response y --gate-features none \
    --no-intercept
contains "$work/err" "gate sees no input" "a gate that sees nothing"
run 2 "the offset among the experts' features" "$moe" fit "$work/counts.csv" --response y \
    --family poisson --features x --offset logt --expert-features x,logt
contains "$work/err" "the --offset column" "offset listed for the experts"
run 2 "an offset of multinomial experts" "$moe" fit "$work/gated.csv" --response y \
    --family multinomial --offset x
contains "$work/err" "takes no offset" "offset of multinomial experts"
run 0 "restricted inputs stream" "$moe" fit "$work/gated.csv" --response y \
    --gate-features z --expert-features x --batch-size 500
contains "$work/out" "gate sees: (intercept), z" "restricted streaming"
run 2 "an offset does not stream" "$moe" fit "$work/counts.csv" --response y \
    --offset logt --batch-size 100
contains "$work/err" "does not stream" "offset streaming"

finish
