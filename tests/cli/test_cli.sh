#!/usr/bin/env bash
# Command-level tests of the installed moe tool: outputs, exit codes and error
# messages on small CSV files generated here (awk, fixed seeds).
#
#   tests/cli/test_cli.sh PATH/TO/bin/moe [PATH/TO/latin1_model]
#
# latin1_model (tests/cli/latin1_model.c) writes a model whose names are not UTF-8;
# without it the checks of such a model are skipped.
set -uo pipefail

moe=${1:?usage: test_cli.sh PATH/TO/moe [PATH/TO/latin1_model]}
latin1_model=${2:-}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Two experts on one covariate: y = 1 + 2 x (x < 0 mostly), y = -3 - x (x > 0 mostly).
awk 'BEGIN { srand(11); print "x,y";
    for (i = 0; i < 600; i++) {
        x = 4 * rand() - 2; u = rand();
        p = 1 / (1 + exp(3 * x));
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        y = (u < p) ? 1 + 2 * x + 0.3 * e : -3 - x + 0.3 * e;
        printf "%.6f,%.6f\n", x, y } }' >"$work/two.csv"

# Three classes whose labels are text, one with the delimiter inside quotes.
awk 'BEGIN { srand(5); print "\"petal length\",width,species";
    split("set\\,osa|versicolor|virginica", names, "|");
    for (i = 0; i < 450; i++) {
        x = 4 * rand() - 2; w = 2 * rand() - 1;
        c = (x < -0.6) ? 1 : (x < 0.6 ? 2 : 3);
        if (rand() < 0.1) c = 1 + int(3 * rand());
        label = names[c]; gsub(/\\/, "", label);
        printf "%.5f,%.5f,\"%s\"\n", x, w, label } }' >"$work/classes.csv"

# --- help and version -------------------------------------------------------
run 0 "moe --help" "$moe" --help
contains "$work/out" "commands:" "moe --help"
for command in fit predict info select plot options; do
    run 0 "moe $command --help" "$moe" "$command" --help
    contains "$work/out" "usage: moe $command" "moe $command --help"
done
# The families come from the library's table: moe families lists each with its line, and
# moe fit --help sends the reader there.
run 0 "moe fit --help" "$moe" fit --help
tr '\n' ' ' <"$work/out" | tr -s ' ' >"$work/help_line"
contains "$work/help_line" "moe families" "moe fit --help: where the families are"
# The default gate sees every feature, which flexmix's default does not: the help says so.
contains "$work/help_line" "'none': the intercept alone, constant mixing weights" \
    "moe fit --help: the gate of constant weights"
run 0 "moe families" "$moe" families
for family in gaussian logistic multinomial poisson t; do
    grep -q "^$family  *[a-zC]" "$work/out" || fail "moe families: no line for $family"
done
contains "$work/out" "counts: Poisson regression" "moe families: poisson's description"
run 2 "moe families extra" "$moe" families extra
run 0 "moe --version" "$moe" --version
contains "$work/out" "moe (libmoe)" "moe --version"
run 2 "no command" "$moe"
run 2 "unknown command" "$moe" frobnicate
contains "$work/err" "unknown command 'frobnicate'" "unknown command"

# --- options: the library's lists -------------------------------------------
run 0 "moe options" "$moe" options
for estimator in em gem gd cqt ismm ot; do
    contains "$work/out" "$estimator " "moe options lists $estimator"
done
run 0 "moe options ot" "$moe" options ot
contains "$work/out" "shards               integer  default 4" "moe options ot: shards"
contains "$work/out" "transport|middle|average" "moe options ot: reduction's keywords"
contains "$work/out" "tol                  real     default 1e-08" "moe options ot: tol"
run 0 "moe options ismm" "$moe" options ismm
contains "$work/out" "(0.5, 1]" "moe options ismm: step_decay's open bound"
checks=$((checks + 1))
if grep -q "^optimizer " "$work/out"; then fail "moe options ismm lists gd's optimizer"; fi
run 2 "moe options nope" "$moe" options nope
contains "$work/err" "no built-in estimator named 'nope'" "moe options nope"
run 2 "moe options em gd" "$moe" options em gd

checks=$((checks + 1))
[[ -f "$(dirname "$moe")/../share/man/man1/moe.1" ]] || fail "the man page is not installed next to the tool"
command -v xmllint >/dev/null || { echo "FAIL: xmllint is needed (Debian: libxml2-utils)"; exit 1; }

# --- fit, info, predict (Gaussian) ------------------------------------------
run 0 "fit gaussian" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 -o "$work/two.moe"
contains "$work/out" "gaussian experts: K = 2, 1 feature and an intercept" "fit summary"
contains "$work/out" "response: y" "fit summary"
contains "$work/out" "  x  " "coefficients named after the column"
contains "$work/out" "mean gate weight" "fit summary"
contains "$work/out" "converged" "fit summary"
contains "$work/out" "AIC" "fit summary"
# The two slopes are recovered (2 and -1, in either order).
checks=$((checks + 1))
awk '$1 == "x" { if (!((($2 > 1.9 && $2 < 2.1) && ($3 < -0.9 && $3 > -1.1)) ||
                      (($3 > 1.9 && $3 < 2.1) && ($2 < -0.9 && $2 > -1.1)))) exit 1; found = 1 }
     END { exit found ? 0 : 1 }' "$work/out" || fail "fit gaussian: slopes not recovered"
cp "$work/out" "$work/fit_summary"
[[ -s "$work/two.moe" ]] || fail "fit -o wrote no model"

run 0 "info" "$moe" info "$work/two.moe"
checks=$((checks + 1))
# info shows the same coefficient lines as fit (the fit-only lines aside).
diff <(grep -E '^  (\(intercept\)|x|variance) ' "$work/fit_summary") \
     <(grep -E '^  (\(intercept\)|x|variance) ' "$work/out") >/dev/null ||
    fail "info coefficients differ from fit's"

run 0 "fit --threads 2" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 --threads 2
checks=$((checks + 1))
diff <(grep -E '^  (\(intercept\)|x|variance) ' "$work/fit_summary") \
     <(grep -E '^  (\(intercept\)|x|variance) ' "$work/out") >/dev/null ||
    fail "--threads 2 gives another fit"

# A file of some 3 MB is read on two threads with --threads 2 (on a machine with two
# cores): a bad cell late in it, or a short row, gets the message of the read on one.
awk 'BEGIN { srand(7); print "x,y";
    for (i = 0; i < 150000; i++) {
        if (i == 140001) { print "0.5,abc"; continue }
        if (i == 149000) { print "0.5"; continue }
        printf "%.6f,%.6f\n", 4 * rand() - 2, 4 * rand() - 2 } }' >"$work/large.csv"
for command in fit select; do
    run 2 "$command a large file on one thread" "$moe" $command "$work/large.csv" --response y \
        --threads 1
    cp "$work/err" "$work/err_one"
    contains "$work/err" "line 140003, column 'y': 'abc' is not a finite decimal number" \
        "$command a large file on one thread"
    run 2 "$command a large file on two threads" "$moe" $command "$work/large.csv" --response y \
        --threads 2
    checks=$((checks + 1))
    cmp -s "$work/err" "$work/err_one" || fail "$command --threads 2: another message"
done
sed -i 's/^0.5,abc$/0.5,1/' "$work/large.csv"
run 2 "a short row on two threads" "$moe" fit "$work/large.csv" --response y --threads 0
contains "$work/err" "line 149002 has 1 fields, the header has 2" "a short row on two threads"

run 0 "fit --json" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 --json
for key in '"family": "gaussian"' '"features": ["x"]' '"response": "y"' '"converged": true' '"bic": ' \
           '"gate_separated": false'; do
    contains "$work/out" "$key" "fit --json"
done
# The default start search's work is counted apart from the final iterations.
checks=$((checks + 1))
grep -qE '"search_runs": [1-9][0-9]+, "search_iterations": [1-9][0-9]+' "$work/out" ||
    fail "fit --json: no start search counted"
# The summary says what ran as the JSON counts it: the returned fit's iterations and
# convergence, the start search's runs and iterations, the restarts it kept against
# n_init (before, "1 restart" read as if n_init were ignored).
json_count() { # FILE KEY: the number after "KEY": (-1 when there is none)
    local count
    count=$(sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1")
    echo "${count:--1}"
}
summary_agrees() { # SUMMARY JSON NAME
    local iterations runs search restarts
    iterations=$(json_count "$2" iterations)
    runs=$(json_count "$2" search_runs)
    search=$(json_count "$2" search_iterations)
    restarts=$(json_count "$2" restarts)
    contains "$1" "converged after $iterations iteration" "$3: the returned fit's iterations"
    if [[ $runs -gt 0 ]]; then
        contains "$1" "starts: a search of $runs short EM runs ($search iterations) kept $restarts distinct end point" \
            "$3: the start search"
    else
        contains "$1" "starts: $restarts restart" "$3: the restarts"
    fi
}
for start in mixed kmeans; do
    run 0 "fit --n-init 4, init $start" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 \
        --n-init 4 --option init=$start
    cp "$work/out" "$work/starts_summary"
    contains "$work/starts_summary" "(n_init 4" "init $start: n_init said"
    run 0 "fit --n-init 4, init $start, --json" "$moe" fit "$work/two.csv" --response y -k 2 \
        --seed 3 --n-init 4 --option init=$start --json
    summary_agrees "$work/starts_summary" "$work/out" "init $start"
done
contains "$work/starts_summary" "starts: 4 restarts (n_init 4), each iterated" "init kmeans"
checks=$((checks + 1))
! grep -q "start search" "$work/starts_summary" || fail "init=kmeans: a start search reported"
# Data the library refuses before fitting are an input error, status 2 as moe.1 says, and
# the message says so rather than "the fit failed" (status 1's).
run 2 "poisson experts of a continuous response" "$moe" fit "$work/two.csv" --response y \
    --family poisson
contains "$work/err" "moe: input error: " "a response poisson cannot take: an input error"
lacks "$work/err" "the fit failed" "a response poisson cannot take: not a failed fit"
head -4 "$work/two.csv" >"$work/three_rows.csv"
run 2 "fewer rows than parameters" "$moe" fit "$work/three_rows.csv" --response y -k 3
contains "$work/err" "moe: input error: " "three rows for K = 3: an input error"
lacks "$work/err" "the fit failed" "three rows for K = 3: not a failed fit"

# --- a separated gate (mcycle, K = 3 and 4) -----------------------------------
mcycle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../data/mcycle.csv"
for k in 3 4; do
    run 0 "mcycle -k $k" "$moe" fit "$mcycle" --response accel -k "$k"
    contains "$work/out" "warning: the gate separates the rows" "mcycle -k $k: separation said"
    contains "$work/out" "--option gate_l2=1e-4" "mcycle -k $k: the remedy"
    # The standard errors exist only where the information is positive definite, which on
    # a separated gate depends on the last bits of the fit (clang's build has none at K = 4):
    # when they are printed, their heading says what they are worth.
    if grep -q "^standard errors" "$work/out"; then
        contains "$work/out" "the gate's are not meaningful" "mcycle -k $k: what the errors mean"
    fi
    run 0 "mcycle -k $k --json" "$moe" fit "$mcycle" --response accel -k "$k" --json
    contains "$work/out" '"gate_separated": true' "mcycle -k $k --json"
    contains "$work/out" 'refit with a gate penalty' "mcycle -k $k --json: the remedy"
done
run 0 "mcycle -k 2" "$moe" fit "$mcycle" --response accel -k 2
checks=$((checks + 1))
! grep -q "separates" "$work/out" || fail "mcycle -k 2: a separation warning"
run 0 "mcycle -k 3 --option gate_l2=1e-4" "$moe" fit "$mcycle" --response accel -k 3 \
    --option gate_l2=1e-4
checks=$((checks + 1))
! grep -q "separates" "$work/out" || fail "mcycle -k 3 with gate_l2: a separation warning"
checks=$((checks + 1))
awk '{ n = split($0, c, ""); for (i = 1; i <= n; i++) { if (c[i] == "{") d++; if (c[i] == "}") d--;
       if (d < 0) exit 1 } } END { exit d == 0 ? 0 : 1 }' "$work/out" || fail "fit --json: unbalanced braces"

run 0 "predict" "$moe" predict "$work/two.moe" "$work/two.csv"
checks=$((checks + 1))
[[ $(wc -l <"$work/out") -eq 601 ]] || fail "predict: $(wc -l <"$work/out") lines, expected 601"
contains "$work/out" "y" "predict header"

run 0 "predict --posterior" "$moe" predict "$work/two.moe" "$work/two.csv" --posterior --response y
checks=$((checks + 1))
awk -F, 'NR == 1 { if ($0 != "expert1,expert2") exit 1; next }
         { s = $1 + $2; if (s < 0.999999 || s > 1.000001) exit 1 }' "$work/out" ||
    fail "predict --posterior: header or rows not summing to one"
run 2 "predict --posterior without response" "$moe" predict "$work/two.moe" "$work/two.csv" --posterior
run 2 "predict --proba on gaussian" "$moe" predict "$work/two.moe" "$work/two.csv" --proba

# --- links (Gaussian experts) --------------------------------------------------
# Two sigmoid experts: y = s(1 + 3 x) (x < 0 mostly), y = s(-1 - 2 x) (x > 0 mostly).
awk 'BEGIN { srand(17); print "x,y";
    for (i = 0; i < 2000; i++) {
        x = 4 * rand() - 2; u = rand();
        p = 1 / (1 + exp(3 * x));
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        t = (u < p) ? 1 + 3 * x : -1 - 2 * x;
        printf "%.6f,%.6f\n", x, 1 / (1 + exp(-t)) + 0.02 * e } }' >"$work/sigmoid.csv"
run 0 "fit --link sigmoid" "$moe" fit "$work/sigmoid.csv" --response y --link sigmoid -k 2 \
    --seed 3 -o "$work/sigmoid.moe"
contains "$work/out" "link: sigmoid" "fit --link sigmoid summary"
contains "$work/out" "converged" "fit --link sigmoid summary"
# The slopes 3 and -2 are recovered (in either order).
checks=$((checks + 1))
awk '$1 == "x" { if (!((($2 > 2.8 && $2 < 3.2) && ($3 < -1.8 && $3 > -2.2)) ||
                      (($3 > 2.8 && $3 < 3.2) && ($2 < -1.8 && $2 > -2.2)))) exit 1; found = 1 }
     END { exit found ? 0 : 1 }' "$work/out" || fail "fit --link sigmoid: slopes not recovered"
run 0 "info of a sigmoid model" "$moe" info "$work/sigmoid.moe"
contains "$work/out" "link: sigmoid" "info shows the link"
run 0 "info --json of a sigmoid model" "$moe" info "$work/sigmoid.moe" --json
contains "$work/out" '"link": "sigmoid"' "info --json shows the link"
run 0 "fit --link sigmoid --json" "$moe" fit "$work/sigmoid.csv" --response y --link sigmoid \
    -k 2 --seed 3 --json
contains "$work/out" '"family": "gaussian", "link": "sigmoid"' "fit --json shows the link"
run 0 "predict with a sigmoid model" "$moe" predict "$work/sigmoid.moe" "$work/sigmoid.csv"
checks=$((checks + 1))
awk -F, 'NR > 1 { if (!($1 > 0 && $1 < 1)) exit 1 }' "$work/out" ||
    fail "predict with a sigmoid model: a mean outside (0, 1)"
run 0 "fit --link relu" "$moe" fit "$work/two.csv" --response y --link relu -k 2 --seed 3 --json
contains "$work/out" '"link": "relu"' "fit --link relu --json"
run 0 "fit --json, identity link" "$moe" info "$work/two.moe" --json
contains "$work/out" '"link": "identity"' "the identity link in JSON"
run 2 "--link relu with --family logistic" "$moe" fit "$work/two.csv" --response y \
    --family logistic --link relu
contains "$work/err" "only Gaussian experts take a link" "--link with a classification family"
run 2 "--link unknown" "$moe" fit "$work/two.csv" --response y --link tanh
contains "$work/err" "'tanh' is not identity, sigmoid or relu" "--link unknown"

# --- standard errors ---------------------------------------------------------------
run 0 "fit --intervals" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 --intervals
contains "$work/out" "standard errors (observed information):" "fit prints standard errors"
contains "$work/out" "95% lower" "--intervals adds the interval columns"
# Every expert's slope (2 and -1) lies in its 95% interval (either order).
checks=$((checks + 1))
awk '$1 == "expert" && $3 == "x" { if ($4 - 1.96 * $5 < 2 && 2 < $4 + 1.96 * $5) two = 1;
                                   if ($4 - 1.96 * $5 < -1 && -1 < $4 + 1.96 * $5) one = 1 }
     END { exit (two && one) ? 0 : 1 }' "$work/out" ||
    fail "the slopes' intervals do not cover the truth"
run 0 "fit --json with standard errors" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 \
    --json
contains "$work/out" '"inference": [{"parameter": "gate 1: (intercept)"' "standard errors in JSON"
contains "$work/out" '"information": {"penalised": false}, "inference": [' \
    "JSON: the information of an unpenalised fit is not penalised"
# With gate_l2 or expert_ridge the standard errors are those of the penalised objective, and
# both outputs say so; without, neither mentions a penalty.
run 0 "fit without penalties" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3
checks=$((checks + 1))
! grep -q "penalised" "$work/out" || fail "an unpenalised fit's standard errors are labelled penalised"
for pair in "0.01 0" "0 0.01" "0.01 0.02"; do
    read -r gate ridge <<<"$pair"
    what="fit --option gate_l2=$gate --option expert_ridge=$ridge"
    run 0 "$what" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 \
        --option "gate_l2=$gate" --option "expert_ridge=$ridge"
    contains "$work/out" \
        "standard errors from the penalised information (gate_l2 = $gate, expert_ridge = $ridge):" \
        "$what labels its standard errors"
    checks=$((checks + 1))
    ! grep -qF "standard errors (observed information):" "$work/out" ||
        fail "$what: the unpenalised heading as well"
    run 0 "$what --json" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3 \
        --option "gate_l2=$gate" --option "expert_ridge=$ridge" --json
    contains "$work/out" '"information": {"penalised": true, "gate_l2": ' \
        "$what --json labels its standard errors"
    contains "$work/out" '"inference": [{"parameter": "gate 1: (intercept)"' \
        "$what --json has standard errors"
done

# --- the tensor estimator --------------------------------------------------------
# Two linear experts along x1 and x2, the gate along x3 (orthogonal), centred Gaussian x.
awk 'BEGIN { srand(29); print "x1,x2,x3,x4,y";
    for (i = 0; i < 4000; i++) {
        for (j = 1; j <= 4; j++) x[j] = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        t = (rand() < 1 / (1 + exp(-2 * x[3]))) ? x[1] : x[2];
        printf "%.6f,%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4], t + 0.1 * e } }' \
    >"$work/tensor.csv"
run 0 "fit --estimator cqt" "$moe" fit "$work/tensor.csv" --response y --estimator cqt \
    --no-intercept -o "$work/tensor.moe"
contains "$work/out" "stages: experts from the tensor, gate with the experts held" \
    "cqt's stages in the summary"
# Each expert's largest coefficient is one of x1, x2, above 0.9.
checks=$((checks + 1))
awk '$1 == "x1" && !s1++ { a = $2; b = $3 } $1 == "x2" && !s2++ { c = $2; d = $3 }
     END { if (!((a > 0.9 && d > 0.9) || (b > 0.9 && c > 0.9))) exit 1 }' "$work/out" ||
    fail "fit --estimator cqt: the experts x1 and x2 are not recovered"
run 0 "fit --estimator cqt --json" "$moe" fit "$work/tensor.csv" --response y \
    --estimator cqt --no-intercept --option refine=1 --json
contains "$work/out" '"stages": ["tensor", "gate", "joint"]' "cqt's stages in JSON"
run 1 "cqt with an intercept" "$moe" fit "$work/tensor.csv" --response y --estimator cqt
contains "$work/err" "cqt fits models without intercepts" "cqt says why it refuses an intercept"
contains "$work/err" "moe: the fit failed: " "a failed fit (status 1) says so"
run 1 "cqt with too many experts" "$moe" fit "$work/tensor.csv" --response y --estimator cqt \
    --no-intercept -k 5
# cqt's model does not depend on OpenBLAS's threads (nor on the tool's): n = 20000 rows of
# d = 36, where its eigensolver (LAPACK's dsyev rounded otherwise on two threads at any d)
# and its d x d x 256 products (above OpenBLAS's threading threshold; d not a multiple of
# 8, where its threads' split rounds otherwise) would differ. OpenBLAS reads
# OPENBLAS_NUM_THREADS when it loads: one process each.
awk 'BEGIN { srand(31); d = 36; h = "x1"; for (j = 2; j <= d; j++) h = h ",x" j; print h ",y";
    for (i = 0; i < 20000; i++) {
        for (j = 1; j <= d; j++) {
            x[j] = sqrt(-2 * log(rand())) * cos(6.2831853 * rand()); printf "%.6f,", x[j] }
        e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
        printf "%.6f\n", ((rand() < 1 / (1 + exp(-2 * x[3]))) ? x[1] : x[2]) + 0.1 * e } }' \
    >"$work/wide.csv"
for threads in 1 2; do
    run 0 "cqt with OPENBLAS_NUM_THREADS=$threads" env OPENBLAS_NUM_THREADS=$threads "$moe" fit \
        "$work/wide.csv" --response y --estimator cqt --no-intercept -o "$work/wide$threads.moe"
done
run 0 "cqt with --threads 2" env OPENBLAS_NUM_THREADS=2 "$moe" fit "$work/wide.csv" \
    --response y --estimator cqt --no-intercept --threads 2 -o "$work/wide3.moe"
checks=$((checks + 1))
cmp -s "$work/wide1.moe" "$work/wide2.moe" ||
    fail "cqt: OPENBLAS_NUM_THREADS=1 and =2 give different models"
checks=$((checks + 1))
cmp -s "$work/wide1.moe" "$work/wide3.moe" || fail "cqt: --threads 2 gives another model"
run 0 "em with the tensor start" "$moe" fit "$work/tensor.csv" --response y --no-intercept \
    --option init=tensor --json
contains "$work/out" '"stages": ["tensor", "gate", "joint"]' "em's tensor start in JSON"

# --- streaming (ismm through partial fits) -------------------------------------
# The streaming paper's setting: gate 8 x, experts -2.5 x and 2.5 x, unit noise.
stream_rows() { # N SEED
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); print "x,y";
        for (i = 0; i < n; i++) {
            x = 2 * rand() - 1; z = (rand() < 1 / (1 + exp(-8 * x)));
            e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
            printf "%.6f,%.6f\n", x, (z ? -2.5 : 2.5) * x + e } }'
}
stream_rows 20000 3 >"$work/stream.csv"
run 0 "fit --batch-size 1" "$moe" fit "$work/stream.csv" --response y --batch-size 1 \
    --option polyak=100 -o "$work/stream.moe"
contains "$work/out" "fit: ismm, streamed 20000 rows" "the stream's summary"
# A session says what it is: rows, steps, the prequential log-likelihood; no convergence.
checks=$((checks + 1))
grep -qE '^streaming session: 20000 rows, [0-9]+ steps, average log-likelihood per row -1\.[0-9]+$' \
    "$work/out" || fail "the stream's session line"
checks=$((checks + 1))
! grep -qiE "converged|iterations" "$work/out" || fail "a stream reports convergence or iterations"
# Both slopes near -2.5 and 2.5 (either order).
checks=$((checks + 1))
awk '$1 == "x" && !seen++ { if (!((($2 < -2.2 && $2 > -2.8) && ($3 > 2.2 && $3 < 2.8)) ||
                                  (($3 < -2.2 && $3 > -2.8) && ($2 > 2.2 && $2 < 2.8)))) exit 1;
                            found = 1 }
     END { exit found ? 0 : 1 }' "$work/out" || fail "fit --batch-size 1: slopes not recovered"
# The same rows from standard input give the same model.
run 0 "fit - (standard input)" bash -c "\"\$1\" fit - --response y --batch-size 1 \
    --option polyak=100 -o \"\$2\" <\"\$3\"" _ "$moe" "$work/stdin.moe" "$work/stream.csv"
checks=$((checks + 1))
cmp -s "$work/stream.moe" "$work/stdin.moe" || fail "fit - : not the model of the file"
# Interrupted and resumed: the first half with a checkpoint, the second from it.
head -n 10001 "$work/stream.csv" >"$work/first.csv"
{ head -n 1 "$work/stream.csv"; tail -n 10000 "$work/stream.csv"; } >"$work/second.csv"
run 0 "fit --checkpoint" "$moe" fit "$work/first.csv" --response y --batch-size 7 \
    --checkpoint "$work/session.state"
run 0 "fit --resume" "$moe" fit "$work/second.csv" --response y --batch-size 7 \
    --resume "$work/session.state" -o "$work/resumed.moe"
contains "$work/out" "session: 20000 rows" "the resumed session counts every row"
grep '^streaming session:' "$work/out" >"$work/resumed_session"
run 0 "fit in one stream" "$moe" fit "$work/stream.csv" --response y --batch-size 7 \
    -o "$work/whole.moe"
checks=$((checks + 1))
cmp -s "$work/whole.moe" "$work/resumed.moe" || fail "resumed stream: not the model of one stream"
checks=$((checks + 1))
grep '^streaming session:' "$work/out" | cmp -s - "$work/resumed_session" ||
    fail "resumed stream: its session reads otherwise than the stream in one go"
run 0 "fit --batch-size --json" "$moe" fit "$work/stream.csv" --response y --batch-size 7 --json
contains "$work/out" '"stages": ["joint", "stream"]' "a stream's stages in JSON"
checks=$((checks + 1))
grep -qE '"stream": \{"rows": 20000, "batches": [0-9]+, "steps": [0-9]+, "scored_rows": [0-9]+, "average_loglik": -1\.' \
    "$work/out" || fail "a stream's session in JSON"
checks=$((checks + 1))
! grep -q '"converged"' "$work/out" || fail "a stream's JSON reports convergence"
run 2 "--resume a missing file" "$moe" fit "$work/second.csv" --response y --batch-size 7 \
    --resume "$work/missing.state"
# A resumed session goes on with its own settings: options that would change them are
# refused and named, the same values and other thread counts are taken.
run 2 "--resume with another step_decay" "$moe" fit "$work/second.csv" --response y \
    --batch-size 7 --resume "$work/session.state" --option step_decay=0.9
contains "$work/err" "step_decay=0.9 is not the saved session's setting" "the conflict is named"
run 2 "--resume with another batch size" "$moe" fit "$work/second.csv" --response y \
    --batch-size 8 --resume "$work/session.state"
contains "$work/err" "batch_size=8" "the batch size conflict is named"
run 2 "--resume with another tol" "$moe" fit "$work/second.csv" --response y \
    --batch-size 7 --resume "$work/session.state" --tol 0.001
run 0 "--resume with the session's own settings and 2 threads" "$moe" fit "$work/second.csv" \
    --response y --batch-size 7 --resume "$work/session.state" --option step_decay=0.6 \
    --threads 2 -o "$work/resumed2.moe"
checks=$((checks + 1))
cmp -s "$work/whole.moe" "$work/resumed2.moe" || fail "resumed on 2 threads: not the model of one stream"
run 2 "--checkpoint without --batch-size" "$moe" fit "$work/stream.csv" --response y \
    --checkpoint "$work/x.state"
run 2 "streaming a classification" "$moe" fit "$work/classes.csv" --response species \
    --family multinomial --batch-size 10
run 2 "--batch-size with em" "$moe" fit "$work/stream.csv" --response y --estimator em \
    --batch-size 10
# A stream shorter than ismm's warm start (85 rows here) fits nothing: an error, no model
# printed or saved; its checkpoint, saved inside the warm start, resumes to the model of the
# stream in one go.
stream_rows 400 7 >"$work/warm.csv"
head -n 51 "$work/warm.csv" >"$work/short.csv"
{ head -n 1 "$work/warm.csv"; tail -n +52 "$work/warm.csv"; } >"$work/rest.csv"
run 2 "a stream shorter than the warm start" "$moe" fit "$work/short.csv" --response y \
    --batch-size 10 --checkpoint "$work/short.state" -o "$work/short.moe"
contains "$work/err" "no model was fitted: the stream ended after 50 rows" \
    "a stream inside the warm start"
checks=$((checks + 1))
[[ ! -e $work/short.moe && ! -s $work/out ]] ||
    fail "a stream inside the warm start printed or saved a model"
run 0 "--resume a checkpoint saved inside the warm start" "$moe" fit "$work/rest.csv" \
    --response y --batch-size 10 --resume "$work/short.state" -o "$work/rest.moe"
contains "$work/out" "session: 400 rows" "the resumed warm start counts every row"
run 0 "the warm-start stream in one go" "$moe" fit "$work/warm.csv" --response y --batch-size 10 \
    -o "$work/warm.moe"
checks=$((checks + 1))
cmp -s "$work/warm.moe" "$work/rest.moe" || fail "resumed warm start: not the model of one stream"
# Ctrl-C while the stream waits for rows: status 1, the rows consumed in the message and the
# checkpoint; resuming with the rows after them gives the stream in one go, bit for bit.
stream_rows 6000 9 >"$work/slow.csv"
mkfifo "$work/slow.pipe"
{ cat "$work/slow.csv"; sleep 5; } >"$work/slow.pipe" &
writer=$!
"$moe" fit - --response y --batch-size 10 --checkpoint "$work/slow.state" \
    <"$work/slow.pipe" >"$work/out" 2>"$work/err" &
reader=$!
for _ in $(seq 200); do [[ -e $work/slow.state ]] && break; sleep 0.05; done
kill -INT "$reader"
wait "$reader"
status=$?
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
checks=$((checks + 1))
[[ $status -eq 1 ]] || fail "Ctrl-C while streaming: exit status $status, expected 1"
contains "$work/err" "the session is saved in the checkpoint" "Ctrl-C while streaming"
consumed=$(sed -n 's/.*interrupted after \([0-9]*\) rows.*/\1/p' "$work/err")
{ head -n 1 "$work/slow.csv"; tail -n +$((${consumed:-0} + 2)) "$work/slow.csv"; } \
    >"$work/slow-rest.csv"
run 0 "--resume after Ctrl-C" "$moe" fit "$work/slow-rest.csv" --response y --batch-size 10 \
    --resume "$work/slow.state" -o "$work/slow-resumed.moe"
contains "$work/out" "session: 6000 rows" "the session resumed after Ctrl-C counts every row"
run 0 "the interrupted stream in one go" "$moe" fit "$work/slow.csv" --response y \
    --batch-size 10 -o "$work/slow-whole.moe"
checks=$((checks + 1))
cmp -s "$work/slow-whole.moe" "$work/slow-resumed.moe" ||
    fail "resumed after Ctrl-C (at row ${consumed:-?}): not the model of one stream"
# Memory does not grow with the stream: ten times the rows, about the same peak.
if [[ -n ${MOE_TEST_SANITIZED:-} ]]; then
    echo "note: sanitized build; the streaming memory check is skipped (ASan's quarantine)"
elif [[ -x /usr/bin/time ]]; then
    checks=$((checks + 1))
    small=$( { stream_rows 100000 4 | /usr/bin/time -f %M "$moe" fit - --response y \
               --batch-size 256 >/dev/null; } 2>&1 | tail -n 1)
    large=$( { stream_rows 1000000 4 | /usr/bin/time -f %M "$moe" fit - --response y \
               --batch-size 256 >/dev/null; } 2>&1 | tail -n 1)
    if ! awk -v s="$small" -v l="$large" 'BEGIN { exit (l <= 1.25 * s + 2048) ? 0 : 1 }'; then
        fail "streaming 1e6 rows peaked at ${large} KB, 1e5 rows at ${small} KB"
    fi
    echo "streaming peak RSS: ${small} KB for 1e5 rows, ${large} KB for 1e6 rows"
else
    echo "note: /usr/bin/time not found; the streaming memory check is skipped"
fi

# --- classification with text labels -----------------------------------------
run 0 "fit multinomial" "$moe" fit "$work/classes.csv" --response species --family multinomial \
    -k 1 -o "$work/classes.moe"
contains "$work/out" "classes: set,osa versicolor virginica" "class labels in the summary"
contains "$work/out" "petal length" "quoted column name"
run 0 "predict labels" "$moe" predict "$work/classes.moe" "$work/classes.csv"
contains "$work/out" '"set,osa"' "labels printed back, quoted"
contains "$work/out" "virginica" "labels printed back"
run 0 "predict --proba" "$moe" predict "$work/classes.moe" "$work/classes.csv" --proba
contains "$work/out" '"P(set,osa)",P(versicolor),P(virginica)' "probability header"
run 0 "info multinomial" "$moe" info "$work/classes.moe"
contains "$work/out" "classes: set,osa versicolor virginica" "labels saved in the model"
run 2 "logistic with three classes" "$moe" fit "$work/classes.csv" --response species --family logistic
contains "$work/err" "two classes" "logistic with three classes"

# --- Poisson experts (counts, log link) ---------------------------------------------
# log mu = 1 + 0.8 x where the gate favours expert 1 (x > 0), 2 - 0.5 x elsewhere; Knuth's
# product of uniforms draws the counts.
awk 'BEGIN { srand(17); print "x,visits";
    for (i = 0; i < 800; i++) {
        x = 4 * rand() - 2;
        mu = (rand() < 1 / (1 + exp(-2.5 * x))) ? exp(1 + 0.8 * x) : exp(2 - 0.5 * x);
        limit = exp(-mu); product = rand(); count = 0;
        while (product > limit) { product *= rand(); count++ }
        printf "%.6f,%d\n", x, count } }' >"$work/counts.csv"
run 0 "fit poisson" "$moe" fit "$work/counts.csv" --response visits --family poisson -k 2 \
    --seed 1 -o "$work/counts.moe"
contains "$work/out" "poisson experts: K = 2" "poisson summary header"
contains "$work/out" "coefficients of log E[y]" "poisson experts' coefficients"
checks=$((checks + 1))
grep -q "variance" "$work/out" && fail "a poisson summary has no variance row"
run 0 "predict poisson" "$moe" predict "$work/counts.moe" "$work/counts.csv"
contains "$work/out" "visits" "poisson prediction header"
checks=$((checks + 1))
awk -F, 'NR > 1 && !($1 > 0) { bad = 1 } END { exit bad }' "$work/out" ||
    fail "predict poisson: a mean count that is not positive"
run 0 "info poisson" "$moe" info "$work/counts.moe"
contains "$work/out" "poisson" "info poisson"
run 2 "predict --proba poisson" "$moe" predict "$work/counts.moe" "$work/counts.csv" --proba
run 2 "--link sigmoid with --family poisson" "$moe" fit "$work/counts.csv" --response visits \
    --family poisson --link sigmoid
# streaming counts: the refusal names the family the user asked for, not "classification"
run 2 "--batch-size with --family poisson" "$moe" fit "$work/counts.csv" --response visits \
    --family poisson --batch-size 10
contains "$work/err" "fit poisson experts in memory" "streaming poisson: the family is named"
lacks "$work/err" "classification" "streaming poisson: not called classification data"
awk 'BEGIN { print "x,visits"; print "0.5,3"; print "1.0,2.5"; print "1.5,4" }' \
    >"$work/not_counts.csv"
run 2 "poisson: a count that is not whole" "$moe" fit "$work/not_counts.csv" --response visits \
    --family poisson -k 1
contains "$work/err" "poisson experts need counts" "poisson: a count that is not whole"
run 2 "--family weibull" "$moe" fit "$work/counts.csv" --response visits --family weibull
contains "$work/err" "gaussian, logistic, multinomial, poisson, t, binomial or gamma" "--family weibull"

# --- binomial experts (successes out of --trials, logit link) ----------------------------
# logit p = -1 + 1.2 x where the gate favours expert 1 (x > 0), 1.5 - 0.8 x elsewhere;
# 0..15 trials a row.
awk 'BEGIN { srand(23); print "x,n,deaths";
    for (i = 0; i < 600; i++) {
        x = 4 * rand() - 2; n = int(16 * rand());
        eta = (rand() < 1 / (1 + exp(-2.5 * x))) ? -1 + 1.2 * x : 1.5 - 0.8 * x;
        p = 1 / (1 + exp(-eta)); s = 0;
        for (t = 0; t < n; t++) if (rand() < p) s++;
        printf "%.6f,%d,%d\n", x, n, s } }' >"$work/trials.csv"
run 0 "fit binomial" "$moe" fit "$work/trials.csv" --response deaths --family binomial \
    --trials n -k 2 --seed 1 -o "$work/trials.moe" --json
contains "$work/out" '"family": "binomial"' "binomial summary family"
contains "$work/out" '"trials": "n"' "binomial summary names the trials"
lacks "$work/out" '"expert 1: n"' "the trials are no parameter"
run 0 "fit binomial text" "$moe" fit "$work/trials.csv" --response deaths --family binomial \
    --trials n -k 2 --seed 1
contains "$work/out" "log-odds of success" "binomial experts' coefficients"
contains "$work/out" "trials n" "binomial: the experts' trials"
run 0 "predict binomial" "$moe" predict "$work/trials.moe" "$work/trials.csv"
checks=$((checks + 1))
awk -F, 'NR > 1 && !($NF > 0 && $NF < 1) { bad = 1 } END { exit bad }' "$work/out" ||
    fail "predict binomial: a success probability outside (0, 1)"
run 0 "families binomial" "$moe" families
contains "$work/out" "binomial" "moe families lists binomial"
awk 'BEGIN { print "x,n,deaths"; print "0.5,3,1"; print "1.0,2,3"; print "1.5,4,2" }' \
    >"$work/too_many.csv"
run 2 "binomial: more successes than trials" "$moe" fit "$work/too_many.csv" \
    --response deaths --family binomial --trials n -k 1
contains "$work/err" "line 3" "binomial: the row of too many successes"
contains "$work/err" "successes among 2 trials" "binomial: what is wrong"
run 2 "--trials with --family poisson" "$moe" fit "$work/trials.csv" --response deaths \
    --family poisson --trials n
contains "$work/err" "takes no trials" "--trials with poisson"
run 2 "--trials of no column" "$moe" fit "$work/trials.csv" --response deaths \
    --family binomial --trials nope

# --- Gamma experts (y > 0, log link, a shape per expert) -------------------------------
# means exp(1 + 0.6 x) with shape 4 and exp(2.5 - 0.4 x) with shape 8 by a gate on x; a
# Gamma(a) draw with whole a is a sum of a exponential ones.
awk 'BEGIN { srand(29); print "x,cost";
    for (i = 0; i < 800; i++) {
        x = 4 * rand() - 2; first = rand() < 1 / (1 + exp(-2.5 * x));
        a = first ? 4 : 8; mu = first ? exp(1 + 0.6 * x) : exp(2.5 - 0.4 * x); g = 0;
        for (j = 0; j < a; j++) g -= log(1 - rand());
        printf "%.6f,%.6f\n", x, g * mu / a } }' >"$work/costs.csv"
run 0 "fit gamma" "$moe" fit "$work/costs.csv" --response cost --family gamma -k 2 --seed 1 \
    -o "$work/costs.moe"
contains "$work/out" "gamma experts: K = 2" "gamma summary header"
contains "$work/out" "expert 1: shape" "gamma: the shapes' standard errors"
run 0 "fit gamma json" "$moe" fit "$work/costs.csv" --response cost --family gamma -k 2 \
    --seed 1 --json
contains "$work/out" '"shape": ' "gamma JSON shapes"
run 0 "predict gamma" "$moe" predict "$work/costs.moe" "$work/costs.csv"
checks=$((checks + 1))
awk -F, 'NR > 1 && !($NF > 0) { bad = 1 } END { exit bad }' "$work/out" ||
    fail "predict gamma: a mean that is not positive"
awk 'BEGIN { print "x,cost"; print "0.5,3"; print "1.0,0"; print "1.5,4" }' \
    >"$work/not_positive.csv"
run 2 "gamma: a response of 0" "$moe" fit "$work/not_positive.csv" --response cost \
    --family gamma -k 1
contains "$work/err" "line 3" "gamma: the row of the zero"
run 1 "gamma with ismm" "$moe" fit "$work/costs.csv" --response cost --family gamma \
    --estimator ismm
contains "$work/err" "gamma" "gamma with ismm: the family is named"

# --- Student-t experts ------------------------------------------------------------------
# y = -2.5 x or 2.5 x by a gate on x, noise 0.3, every 20th y a gross outlier (+-20..40).
awk 'BEGIN { srand(23); print "x,y";
    for (i = 0; i < 600; i++) {
        x = 4 * rand() - 2; u1 = rand(); u2 = rand();
        noise = 0.3 * sqrt(-2 * log(u1 + 1e-12)) * cos(6.283185307 * u2);
        y = ((rand() < 1 / (1 + exp(-6 * x))) ? 2.5 : -2.5) * x + noise;
        if (i % 20 == 7) y = (rand() < 0.5 ? -1 : 1) * (20 + 20 * rand());
        printf "%.6f,%.6f\n", x, y } }' >"$work/outliers.csv"
run 0 "fit t" "$moe" fit "$work/outliers.csv" --response y --family t -k 2 --seed 1 \
    -o "$work/outliers.moe"
contains "$work/out" "t experts: K = 2" "t summary header"
contains "$work/out" "Student-t noise" "t experts' coefficients"
contains "$work/out" "scale^2" "t summary scale row"
contains "$work/out" "nu " "t summary prints nu per expert"
# t experts have standard errors: the squared scales, then nu, after the coefficients.
contains "$work/out" "standard errors (observed information):" "t experts: standard errors"
contains "$work/out" "expert 2: scale^2" "t standard errors: the scale row"
contains "$work/out" "expert 2: nu" "t standard errors: the nu row"
checks=$((checks + 1))
! grep -q "no standard errors" "$work/err" || fail "t experts: no standard errors"
checks=$((checks + 1))
awk '$1 == "x" && !seen { seen = 1; ok = ($2 > 2.3 && $2 < 2.7 && $3 > -2.7 && $3 < -2.3) ||
                      ($3 > 2.3 && $3 < 2.7 && $2 > -2.7 && $2 < -2.3) } END { exit !ok }' \
    "$work/out" || fail "fit t: slopes not near -2.5 and 2.5 through the outliers"
run 0 "fit t json" "$moe" fit "$work/outliers.csv" --response y --family t -k 2 --seed 1 --json
contains "$work/out" '"nu": ' "t json nu"
contains "$work/out" '{"parameter": "expert 1: nu"' "t json: nu's standard error"
run 0 "info t" "$moe" info "$work/outliers.moe"
contains "$work/out" "t" "info t"
run 0 "predict t" "$moe" predict "$work/outliers.moe" "$work/outliers.csv"
run 0 "fit t with nu held" "$moe" fit "$work/outliers.csv" --response y --family t -k 2 \
    --seed 1 --option update_degrees=0
contains "$work/out" "nu                                  4              4" "nu held at 4"
run 0 "--estimator gem with --family t" "$moe" fit "$work/outliers.csv" --response y \
    --family t --estimator gem --seed 1
contains "$work/out" "fit: gem," "gem fits t experts"
run 1 "--estimator ismm with --family t" "$moe" fit "$work/outliers.csv" --response y \
    --family t --estimator ismm
contains "$work/err" "fit t experts with em" "ismm refuses t experts"

# --- Ctrl-C ---------------------------------------------------------------------------
# A fit that cannot finish (tolerance 0) stops cleanly on SIGINT: status 1, a message,
# no model file.
awk 'BEGIN { srand(3); print "a,b,y"; for (i = 0; i < 20000; i++) { a = rand(); b = rand();
    printf "%.5f,%.5f,%.5f\n", a, b, (a < b ? a : -b) + 0.1 * rand() } }' >"$work/long.csv"
checks=$((checks + 1))
"$moe" fit "$work/long.csv" --response y -k 4 --tol 0 --max-iter 1000000 -o "$work/long.moe" \
    >"$work/out" 2>"$work/err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
status=$?
[[ $status -eq 1 ]] || fail "Ctrl-C: exit status $status, expected 1"
contains "$work/err" "interrupted" "Ctrl-C"
[[ ! -e "$work/long.moe" ]] || fail "Ctrl-C: a model was saved"

# --- select -----------------------------------------------------------------------
run 0 "select" "$moe" select "$work/two.csv" --response y -k 1:3 --seed 3 -o "$work/best.moe"
contains "$work/out" "best by bic: K = 2" "select picks the two experts of the truth"
checks=$((checks + 1))
[[ $(grep -c '^ *[123] ' "$work/out") -eq 3 ]] || fail "select: not one row per K"
grep -E '^ +2 ' "$work/out" | grep -q '\*$' || fail "select: the K = 2 row is not marked"
# Each K's EM runs and iterations are all of its work, the start search's included (before,
# the returned fit's alone: 1 for every K after a search that had converged).
cp "$work/out" "$work/select_table"
run 0 "select --json" "$moe" select "$work/two.csv" --response y -k 1:3 --seed 3 --json
for k in 1 2 3; do
    checks=$((checks + 1))
    fit=$(sed 's/}, {/\n/g' "$work/out" | grep "\"k\": $k,")
    runs=$(( $(json_count <(echo "$fit") search_runs) + $(json_count <(echo "$fit") restarts) ))
    iterations=$(( $(json_count <(echo "$fit") search_iterations) +
                   $(json_count <(echo "$fit") total_iterations) ))
    awk -v k=$k -v r=$runs -v i=$iterations '$1 == k { found = 1; bad = $6 != r || $7 != i }
        END { exit found && !bad ? 0 : 1 }' "$work/select_table" ||
        fail "select: K = $k's EM runs and iterations are not $runs and $iterations"
done
run 0 "info of the selected model" "$moe" info "$work/best.moe"
contains "$work/out" "K = 2" "select -o saves the best model"
run 0 "select --json --criterion aic" "$moe" select "$work/two.csv" --response y -k 2:3 \
    --criterion aic --json
contains "$work/out" '"criterion": "aic"' "select --json"
run 2 "select: bad range" "$moe" select "$work/two.csv" --response y -k 3:1
run 2 "select: bad criterion" "$moe" select "$work/two.csv" --response y --criterion r2

# --- plot ---------------------------------------------------------------------------
svg_ok() { # FILE NAME ELEMENTS...
    local file=$1 name=$2
    shift 2
    checks=$((checks + 1))
    xmllint --noout "$file" 2>"$work/xml" || { fail "$name: not well-formed XML"; head -3 "$work/xml"; }
    contains "$file" '<svg xmlns="http://www.w3.org/2000/svg"' "$name"
    for element in "$@"; do
        contains "$file" "$element" "$name"
    done
}
run 0 "plot, one covariate" "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/two.svg"
svg_ok "$work/two.svg" "plot, one covariate" "<circle" "<polyline" "gate probability" \
    "expert 2" "mixture mean"
checks=$((checks + 1))
[[ $(grep -c '<circle' "$work/two.svg") -eq 600 ]] || fail "plot: not one point per row"
[[ $(grep -c '<polyline' "$work/two.svg") -eq 5 ]] ||
    fail "plot: expected 2 expert lines, the mixture mean and 2 gate curves"
awk 'BEGIN { srand(7); print "a,b,c,y";
    for (i = 0; i < 300; i++) { a = rand(); b = rand(); c = rand();
        printf "%.5f,%.5f,%.5f,%.5f\n", a, b, c, (a < 0.5 ? 1 + b : -1 - c) + 0.1 * rand() } }' \
    >"$work/three.csv"
run 0 "fit, several covariates" "$moe" fit "$work/three.csv" --response y -o "$work/three.moe"
run 0 "plot, several covariates" "$moe" plot "$work/three.moe" "$work/three.csv" -o "$work/three.svg"
svg_ok "$work/three.svg" "plot, several covariates" "observed y" "predicted (mixture mean)" "<circle"
run 0 "plot, classes" "$moe" plot "$work/classes.moe" "$work/classes.csv" -o "$work/classes.svg"
svg_ok "$work/classes.svg" "plot, classes" "set,osa" "virginica" "misclassified"
run 0 "fit, classes on one covariate" "$moe" fit "$work/classes.csv" --response species \
    --family multinomial --features "petal length" -k 2 -o "$work/classes1.moe"
run 0 "plot, classes on one covariate" "$moe" plot "$work/classes1.moe" "$work/classes.csv" \
    -o "$work/classes1.svg"
svg_ok "$work/classes1.svg" "plot, classes on one covariate" "<polyline" "gate probability" \
    "P(species = class | petal length)"
run 2 "plot without -o" "$moe" plot "$work/two.moe" "$work/two.csv"
printf 'a,b,c\n1,2,3\n' >"$work/noy.csv"
run 2 "plot: data without the response" "$moe" plot "$work/three.moe" "$work/noy.csv" -o "$work/x.svg"
contains "$work/err" "no column named 'y'" "plot: data without the response"

# --- input errors --------------------------------------------------------------
printf 'a,b,y\n1,2,3\n4,x,6\n' >"$work/word.csv"
run 2 "non-numeric cell" "$moe" fit "$work/word.csv" --response y
contains "$work/err" "line 3, column 'b': 'x' is not a finite decimal number" "non-numeric cell"
printf 'a,b,y\n1,2,3\n4,5\n' >"$work/ragged.csv"
run 2 "ragged row" "$moe" fit "$work/ragged.csv" --response y
contains "$work/err" "line 3 has 2 fields, the header has 3" "ragged row"
printf 'a,b,y\n1,,3\n' >"$work/missing.csv"
run 2 "missing value" "$moe" fit "$work/missing.csv" --response y
contains "$work/err" "line 2, column 'b': the value is missing" "missing value"
printf 'a,b,y\n1,"2,3\n' >"$work/quote.csv"
run 2 "unterminated quote" "$moe" fit "$work/quote.csv" --response y
printf '' >"$work/empty.csv"
run 2 "empty file" "$moe" fit "$work/empty.csv" --response y
contains "$work/err" "empty" "empty file"
run 2 "no such column" "$moe" fit "$work/two.csv" --response z
contains "$work/err" "no column named 'z'" "no such column"
run 2 "no such file" "$moe" fit "$work/none.csv" --response y
contains "$work/err" "cannot open" "no such file"
run 2 "no response" "$moe" fit "$work/two.csv"
run 2 "unknown option" "$moe" fit "$work/two.csv" --response y --frobnicate
run 2 "unknown fitter option" "$moe" fit "$work/two.csv" --response y --option frobnicate=1
contains "$work/err" "frobnicate" "unknown fitter option"
run 2 "bad option value" "$moe" fit "$work/two.csv" --response y --option max_iter=-4
run 2 "too few rows" "$moe" fit "$work/word.csv" --response y --features a -k 3
run 2 "not a model" "$moe" info "$work/two.csv"
contains "$work/err" "not a libmoe model" "not a model"
run 2 "predict: missing feature column" "$moe" predict "$work/two.moe" "$work/word.csv"
contains "$work/err" "no column named 'x'" "predict: missing feature column"

# --- Windows files: CR LF line ends and a byte order mark ------------------------------
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' "$work/two.csv"; } >"$work/windows.csv"
run 0 "CR LF and a byte order mark" "$moe" fit "$work/windows.csv" --response y --features x -k 2 --seed 3
checks=$((checks + 1))
diff <(grep -E '^  (\(intercept\)|x|variance) ' "$work/fit_summary") \
     <(grep -E '^  (\(intercept\)|x|variance) ' "$work/out") >/dev/null ||
    fail "CR LF and a byte order mark give another fit"

# --- delimiter and locale ------------------------------------------------------------
tr ',' ';' <"$work/two.csv" >"$work/semicolon.csv"
run 0 "--sep ';'" "$moe" fit "$work/semicolon.csv" --response y -k 2 --seed 3 --sep ';'
checks=$((checks + 1))
diff <(grep -E '^  (\(intercept\)|x|variance) ' "$work/fit_summary") \
     <(grep -E '^  (\(intercept\)|x|variance) ' "$work/out") >/dev/null ||
    fail "--sep ';' gives another fit"
if locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
    LC_ALL=de_DE.UTF-8 run 0 "de_DE locale" "$moe" fit "$work/two.csv" --response y -k 2 --seed 3
    checks=$((checks + 1))
    diff <(grep -E '^  (\(intercept\)|x|variance) ' "$work/fit_summary") \
         <(grep -E '^  (\(intercept\)|x|variance) ' "$work/out") >/dev/null ||
        fail "de_DE locale: another fit or decimal commas"
    LC_ALL=de_DE.UTF-8 run 0 "de_DE predict" "$moe" predict "$work/two.moe" "$work/two.csv"
    checks=$((checks + 1))
    sed -n 2p "$work/out" | grep -q '^-\?[0-9]*\.[0-9]' || fail "de_DE predict: not a C-locale number"
else
    echo "note: locale de_DE.UTF-8 not installed; the non-C locale checks were skipped"
fi

# --- numbers: decimal notation only (issue 11) ---------------------------------------
# number_error NAME CELL MESSAGE: a file whose cell b on line 3 is CELL fails with MESSAGE.
number_error() {
    printf 'a,b,y\n1,2,3\n4,%s,6\n7,8,1\n' "$2" >"$work/number.csv"
    run 2 "number: $1" "$moe" fit "$work/number.csv" --response y -k 1
    contains "$work/err" "number.csv: line 3, column 'b': $3" "number: $1"
}
number_error "hexadecimal" "0x10" "'0x10' is not a finite decimal number"
number_error "hexadecimal float" "0x1p3" "'0x1p3' is not a finite decimal number"
number_error "inf" "inf" "'inf' is not a finite decimal number"
number_error "-Infinity" "-Infinity" "'-Infinity' is not a finite decimal number"
number_error "nan" "nan" "'nan' is not a finite decimal number"
number_error "NA" "NA" "the value is missing"
number_error "underflow to zero" "1e-400" "'1e-400' underflows"
number_error "underflow to a subnormal" "4.9e-324" "'4.9e-324' underflows"
number_error "overflow" "1e309" "'1e309' overflows"
number_error "exponent without digits" "1e" "'1e' is not a finite decimal number"
number_error "a lone point" "." "'.' is not a finite decimal number"
# An embedded NUL byte: the cell is not "1" followed by an ignored rest.
printf 'a,b,y\n1,2,3\n4,1\0junk,6\n7,8,1\n' >"$work/nul.csv"
run 2 "number: NUL byte" "$moe" fit "$work/nul.csv" --response y -k 1
contains "$work/err" "nul.csv: line 3, column 'b': the cell '1\x00junk' contains a NUL byte" "number: NUL byte"
# What decimal notation allows, zeros of any spelling included.
printf 'a,b,y\n+1.,-.5,1E+05\n00.000,5e-0,-0\n0e-999,2.2250738585072014e-308,1\n3, " 4 ",5\n%s' \
    "$(printf '%s\n' 1,2,4 2,1,3 3,3,1 4,2,2 5,5,5 6,1,0)" >"$work/decimal.csv"
run 0 "number: decimal notation" "$moe" fit "$work/decimal.csv" --response y -k 1

# --- physical lines (issue 11) -------------------------------------------------------
# Messages name the line of the file where the record or field starts, not the
# record's number: quoted fields with line breaks span several lines.
printf 'a,b,y\n1,2,3\n"multi\nline",5,6\n7,x,9\n' >"$work/lines.csv"
run 2 "lines: after a multi-line field" "$moe" fit "$work/lines.csv" --response y --features b -k 1
contains "$work/err" "lines.csv: line 5, column 'b': 'x' is not a finite decimal number" \
    "lines: after a multi-line field"
run 2 "lines: the multi-line field itself" "$moe" fit "$work/lines.csv" --response y -k 1
contains "$work/err" "lines.csv: line 3, column 'a': 'multi\x0aline' is not a finite decimal number" \
    "lines: the multi-line field itself"
printf 'a,b,y\r\n1,2,3\r\n"multi\r\nline",5,6\r\n\r\n7,8\r\n' >"$work/lines_crlf.csv"
run 2 "lines: CR LF and a blank line" "$moe" fit "$work/lines_crlf.csv" --response y --features b -k 1
contains "$work/err" "lines_crlf.csv: line 6 has 2 fields, the header has 3" \
    "lines: CR LF and a blank line"
printf 'a,b,y\r1,2,3\r"multi\rline",5,6\r7,x,9\r' >"$work/lines_cr.csv"
run 2 "lines: CR line ends" "$moe" fit "$work/lines_cr.csv" --response y --features b -k 1
contains "$work/err" "lines_cr.csv: line 5, column 'b'" "lines: CR line ends"
printf 'a,b,y\n1,2,3\n4,"5\n6\n7\n' >"$work/unclosed.csv"
run 2 "lines: a quote never closed" "$moe" fit "$work/unclosed.csv" --response y -k 1
contains "$work/err" "unclosed.csv: line 3, column 'b': the quoted field starting there is never closed" \
    "lines: a quote never closed"
printf 'a,b,y\n1,2,3\n4,5"6,7\n' >"$work/stray.csv"
run 2 "lines: a stray quote" "$moe" fit "$work/stray.csv" --response y -k 1
contains "$work/err" "stray.csv: line 3, column 'b': a stray quote" "lines: a stray quote"
# predict: a label the model does not know, after a multi-line field.
printf '"petal length",width,species,note\n0,0,virginica,"two\nlines"\n1,1,setosa,\n' \
    >"$work/unknown_class.csv"
run 2 "lines: unknown class" "$moe" predict "$work/classes.moe" "$work/unknown_class.csv" \
    --posterior --response species
contains "$work/err" "unknown_class.csv: line 4, column 'species': 'setosa' is not one of the model's classes" \
    "lines: unknown class"

# --- names and labels are checked as they are read (issue 11) ------------------------
long_name=$(printf '%*s' 1025 '' | tr ' ' n)
rows=$(printf '%s\n' 1,2,3 4,5,6 7,8,1 2,1,2 5,3,3 3,3,0 9,1,4 6,2,8)
printf 'a,,y\n%s\n' "$rows" >"$work/empty_name.csv"
run 2 "names: empty column name" "$moe" fit "$work/empty_name.csv" --response y -k 1
contains "$work/err" "empty_name.csv: line 1, column 2: the column name is empty" "names: empty column name"
# An unused column may be unnamed (pandas writes its index so).
run 0 "names: empty name of an unused column" "$moe" fit "$work/empty_name.csv" --response y \
    --features a -k 1
printf 'a,%s,y\n%s\n' "$long_name" "$rows" >"$work/long_name.csv"
run 2 "names: long column name" "$moe" fit "$work/long_name.csv" --response y -k 1
contains "$work/err" "long_name.csv: line 1, column 2: the column name 'nnnn" "names: long column name"
contains "$work/err" "is 1025 bytes long, at most 1024 are allowed" "names: long column name"
printf 'a,%s,y\n%s\n' "${long_name:1}" "$rows" >"$work/longest_name.csv"
run 0 "names: a name of 1024 bytes" "$moe" fit "$work/longest_name.csv" --response y -k 1
printf 'x,c\n1,a\n2,b\n3,%s\n' "$long_name" >"$work/long_label.csv"
run 2 "names: long class label" "$moe" fit "$work/long_label.csv" --response c --family logistic -k 1
contains "$work/err" "long_label.csv: line 4, column 'c': the label 'nnnn" "names: long class label"
printf 'x,gr\xf6\xdfe,y\n1,2,3\n4,5,6\n7,8,1\n' >"$work/latin1.csv"
run 2 "names: Latin-1 column name" "$moe" fit "$work/latin1.csv" --response y -k 1 --json
contains "$work/err" "latin1.csv: line 1, column 2: the column name 'gr\xf6\xdfe' is not valid UTF-8" \
    "names: Latin-1 column name"
printf 'x,c\n1,caf\xc3\xa9\n2,b\n3,caf\xe9\n' >"$work/latin1_label.csv"
run 2 "names: Latin-1 class label" "$moe" fit "$work/latin1_label.csv" --response c --family logistic -k 1
contains "$work/err" "latin1_label.csv: line 4, column 'c': the label 'caf\xe9' is not valid UTF-8" \
    "names: Latin-1 class label"
# UTF-8 names pass through to JSON; control characters are escaped.
awk 'BEGIN { srand(4); print "\"gr\303\266\303\237e\",\"tab\there\",y";
    for (i = 0; i < 40; i++) printf "%.4f,%.4f,%.4f\n", rand(), rand(), rand() }' >"$work/utf8.csv"
run 0 "names: UTF-8 and a tab in JSON" "$moe" fit "$work/utf8.csv" --response y -k 1 --json
contains "$work/out" $'"features": ["gr\303\266\303\237e", "tab\\u0009here"]' "names: UTF-8 and a tab in JSON"
if [[ -n $latin1_model ]]; then
    # A model saved by another program with names that are not UTF-8: JSON and SVG stay
    # valid, the bytes becoming U+FFFD.
    checks=$((checks + 1))
    "$latin1_model" "$work/latin1.moe" || fail "latin1_model did not write a model"
    run 0 "names: info --json of a Latin-1 model" "$moe" info "$work/latin1.moe" --json
    contains "$work/out" '"features": ["gr\ufffd\ufffde"], "response": "y\ufffd"' \
        "names: info --json of a Latin-1 model"
    checks=$((checks + 1))
    LC_ALL=C grep -q $'[\x80-\xff]' "$work/out" && fail "info --json: bytes beyond ASCII left in the JSON"
    printf 'gr\xf6\xdfe,y\xe9\n1,2\n2,3\n' >"$work/latin1_data.csv"
    run 0 "names: plot of a Latin-1 model" "$moe" plot "$work/latin1.moe" "$work/latin1_data.csv" \
        -o "$work/latin1.svg"
    svg_ok "$work/latin1.svg" "names: plot of a Latin-1 model" $'gr\xef\xbf\xbd\xef\xbf\xbde'
else
    echo "note: no latin1_model given; the checks of a model with Latin-1 names were skipped"
fi

# --- a model without features (issue 11) ---------------------------------------------
awk 'BEGIN { srand(9); print "y"; for (i = 0; i < 50; i++) printf "%.4f\n", 3 + rand() }' \
    >"$work/intercept.csv"
run 0 "no features: fit" "$moe" fit "$work/intercept.csv" --response y -k 1 -o "$work/intercept.moe"
contains "$work/out" "0 features and an intercept" "no features: fit"
run 0 "no features: predict" "$moe" predict "$work/intercept.moe" "$work/intercept.csv"
checks=$((checks + 1))
[[ $(wc -l <"$work/out") -eq 51 && $(sort -u "$work/out" | wc -l) -eq 2 ]] ||
    fail "no features: predict should print the header and one constant for each of 50 rows"
run 0 "no features: predict --posterior" "$moe" predict "$work/intercept.moe" "$work/intercept.csv" \
    --posterior --response y
run 0 "no features: plot" "$moe" plot "$work/intercept.moe" "$work/intercept.csv" -o "$work/intercept.svg"
svg_ok "$work/intercept.svg" "no features: plot" "observed y"
printf 'c\na\nb\na\nb\na\nb\na\n' >"$work/intercept_classes.csv"
run 0 "no features: fit logistic" "$moe" fit "$work/intercept_classes.csv" --response c \
    --family logistic -k 1 -o "$work/intercept_classes.moe"
run 0 "no features: predict --proba" "$moe" predict "$work/intercept_classes.moe" \
    "$work/intercept_classes.csv" --proba
contains "$work/out" "0.5714285" "no features: predict --proba"
run 2 "no features: no plot of classes" "$moe" plot "$work/intercept_classes.moe" \
    "$work/intercept_classes.csv" -o "$work/intercept_classes.svg"
contains "$work/err" "the model has no features" "no features: no plot of classes"

# --- wide headers (issue 11) ---------------------------------------------------------
# Column names go through a hash index: 200000 columns take a fraction of a second
# (comparing every pair of names took over a minute).
awk 'BEGIN { for (i = 1; i < 200000; i++) printf "c%d,", i; print "y" }' >"$work/wide.csv"
run 2 "wide header" timeout 10 "$moe" fit "$work/wide.csv" --response y
contains "$work/err" "no data rows after the header" "wide header"
awk 'BEGIN { for (i = 1; i < 200000; i++) printf "c%d,", i; print "c17" }' >"$work/wide_twice.csv"
run 2 "wide header, a name twice" timeout 10 "$moe" fit "$work/wide_twice.csv" --response c1
contains "$work/err" "line 1, column 200000: the column name 'c17' appears twice (also column 17)" \
    "wide header, a name twice"

# --- a huge field is read in linear time (issue 11) ----------------------------------
# libcsv grew its field buffer 128 bytes at a time: a field of 20 MB took minutes under
# the sanitizers.
awk 'BEGIN { print "x,y"; printf "1,"; s = "1111111111"; while (length(s) < 20000000) s = s s;
    print s; print "2,3" }' >"$work/huge_field.csv"
run 2 "huge field" timeout 30 "$moe" fit "$work/huge_field.csv" --response y -k 1
contains "$work/err" "huge_field.csv: line 2, column 'y': '1111111111" "huge field"
contains "$work/err" "overflows" "huge field"
rm -f "$work/huge_field.csv"

# --- plot replaces its file whole or not at all (issue 11) ---------------------------
run 0 "plot: a first picture" "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/keep.svg"
cp "$work/keep.svg" "$work/keep.ref"
chmod 640 "$work/keep.svg"
# Killed while writing (past 8 KiB the file size limit sends SIGXFSZ): the old picture
# stays whole.
checks=$((checks + 1))
{ ( ulimit -c 0; ulimit -f 8; exec "$moe" plot "$work/three.moe" "$work/three.csv" -o "$work/keep.svg" ) \
    >/dev/null 2>&1; } 2>/dev/null && fail "plot over the size limit: exit status 0"
cmp -s "$work/keep.svg" "$work/keep.ref" || fail "plot killed while writing damaged the old picture"
rm -f "$work"/keep.svg.tmp*   # the killed run's temporary file
# A write error (the same limit with SIGXFSZ ignored): status 1, the old picture whole,
# no temporary file left.
( trap '' XFSZ; ulimit -f 8; exec "$moe" plot "$work/three.moe" "$work/three.csv" -o "$work/keep.svg" ) \
    >"$work/out" 2>"$work/err"
status=$?
checks=$((checks + 1))
[[ $status -eq 1 ]] || fail "plot: write error: exit status $status, expected 1"
contains "$work/err" "cannot write '$work/keep.svg'" "plot: write error"
checks=$((checks + 1))
cmp -s "$work/keep.svg" "$work/keep.ref" || fail "plot: a write error damaged the old picture"
compgen -G "$work/keep.svg.tmp*" >/dev/null && fail "plot: a write error left its temporary file"
# Replacing keeps the mode; a new file gets the umask; links are followed.
run 0 "plot: replace" "$moe" plot "$work/three.moe" "$work/three.csv" -o "$work/keep.svg"
svg_ok "$work/keep.svg" "plot: replace" "observed y"
checks=$((checks + 1))
[[ $(stat -c %a "$work/keep.svg") == 640 ]] || fail "plot: the mode became $(stat -c %a "$work/keep.svg"), not 640"
rm -f "$work/new.svg"
(umask 027; "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/new.svg")
checks=$((checks + 1))
[[ $(stat -c %a "$work/new.svg" 2>/dev/null) == 640 ]] || fail "plot: a new file under umask 027 is not 640"
mkdir -p "$work/pictures"
ln -sf ../keep.svg "$work/pictures/link.svg"
run 0 "plot: through a link" "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/pictures/link.svg"
checks=$((checks + 1))
[[ -L $work/pictures/link.svg ]] || fail "plot: the link was replaced by a file"
svg_ok "$work/keep.svg" "plot: through a link" "gate probability"
ln -sf ../dangling.svg "$work/pictures/dangling.svg"
run 0 "plot: through a dangling link" "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/pictures/dangling.svg"
checks=$((checks + 1))
[[ -L $work/pictures/dangling.svg && -f $work/dangling.svg ]] || fail "plot: a dangling link was not followed"
# Not regular files: written in place.
checks=$((checks + 1))
"$moe" plot "$work/two.moe" "$work/two.csv" -o /dev/stdout | xmllint --noout - 2>/dev/null ||
    fail "plot -o /dev/stdout into a pipe"
"$moe" plot "$work/two.moe" "$work/two.csv" -o /dev/stdout >"$work/stdout.svg"
svg_ok "$work/stdout.svg" "plot -o /dev/stdout into a file" "gate probability"
mkfifo "$work/fifo"
timeout 60 cat "$work/fifo" >"$work/from_fifo.svg" &
reader=$!
run 0 "plot: into a FIFO" timeout 60 "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/fifo"
wait "$reader"
svg_ok "$work/from_fifo.svg" "plot: into a FIFO" "gate probability"
# A model saved to /dev/stderr while stderr is a pipe: /proc/self/fd/2 names the pipe,
# which only the kernel can follow (the library once took its link text for a file name).
checks=$((checks + 1))
"$moe" fit "$work/two.csv" --response y -k 2 --seed 3 -o /dev/stderr 2>&1 >/dev/null |
    cat >"$work/piped.moe"
"$moe" info "$work/piped.moe" >/dev/null 2>&1 || fail "fit -o /dev/stderr into a pipe: no model"
run 1 "plot: no such directory" "$moe" plot "$work/two.moe" "$work/two.csv" -o "$work/none/x.svg"
contains "$work/err" "none/x.svg" "plot: no such directory"

finish
