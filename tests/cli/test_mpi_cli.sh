#!/usr/bin/env bash
# moe-mpi under mpirun: one file split over the ranks, one file per rank (a %d pattern),
# the summary and model written once, a missing file on every rank giving status 2
# everywhere without a hang, and a pattern too long for a path refused; the default exact
# em giving one process's fit on sorted blocks, for other families too, with its passes and
# bytes in the summary and the JSON; the one-shot reduction (--method ot): the summary's
# log-likelihood, criteria, standard errors and time over every rank's rows, the warning on
# blocks of sorted rows, --shuffle, and errors one line per rank.
#
#   tests/cli/test_mpi_cli.sh MPIEXEC "FLAGS" PATH/TO/moe-mpi PATH/TO/moe
set -uo pipefail
export LC_ALL=C
mpiexec=$1
flags=$2
tool=$3
moe=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checks=0
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Two experts (1 + 2 b and -1 - 2 c) under the gate 6 a.
generate() { # ROWS SEED
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); print "a,b,c,y";
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1;
            z = (rand() < 1 / (1 + exp(-6 * a)));
            e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
            printf "%.6f,%.6f,%.6f,%.6f\n", a, b, c, (z ? 1 + 2 * b : -1 - 2 * c) + 0.3 * e } }'
}
generate 8000 5 >"$work/all.csv"
generate 3000 6 >"$work/part0.csv"
generate 4000 7 >"$work/part1.csv"

# shellcheck disable=SC2086 # the flags are words
for case in "all.csv" "part%d.csv"; do
    checks=$((checks + 1))
    (cd "$work" && $mpiexec $flags -np 2 "$tool" fit "$case" --response y -o model.moe \
        >out 2>err) || { fail "$case: exit status $?"; sed 's/^/    /' "$work/err" | head; }
    checks=$((checks + 1))
    [[ $(grep -c "^fit: em (MPI, exact)" "$work/out") -eq 1 ]] || fail "$case: not one summary"
    checks=$((checks + 1))
    "$moe" info "$work/model.moe" >"$work/info" || fail "$case: the model does not load"
    # The slopes 2 (b) and -2 (c) are recovered, one per expert.
    checks=$((checks + 1))
    awk '$1 == "b" && !sb++ { b1 = $2; b2 = $3 } $1 == "c" && !sc++ { c1 = $2; c2 = $3 }
         END { ok = ((b1 > 1.8 && c2 < -1.8) || (b2 > 1.8 && c1 < -1.8)); exit ok ? 0 : 1 }' \
        "$work/info" || fail "$case: slopes not recovered"
    rm -f "$work/model.moe"
done
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "missing%d.csv" --response y \
    >out 2>err)
status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "missing files: exit status $status (124: a hang)"

# moe fit's options that a distributed fit does not act on are refused by name with status 2
# on every rank, not ignored (before, --checkpoint wrote no file); so are the transport
# reduction's limits under --method ot; fit --help is moe-mpi's own, without them among
# its options.
for option in "--batch-size 100" "--checkpoint session.state" "--resume session.state" \
              "--estimator ismm" "--link sigmoid --method ot" "--family poisson --method ot" \
              "--method bogus" "--estimator ot --method em"; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit all.csv --response y $option \
        >out 2>err)
    status=$?
    [[ $status -eq 2 ]] || fail "$option: exit status $status, not 2"
    checks=$((checks + 1))
    [[ $(grep -c "^moe-mpi: fit: ${option%% *}" "$work/err") -eq 2 ]] ||
        { fail "$option: not refused by name on both ranks"; head -3 "$work/err"; }
done
checks=$((checks + 1))
[[ ! -e "$work/session.state" ]] || fail "--checkpoint: a refused option wrote a file"
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 1 "$tool" fit --help >out 2>err) ||
    fail "moe-mpi fit --help: exit status $?"
grep -q "^usage: mpirun -np N moe-mpi fit" "$work/out" && grep -q "^  --shuffle" "$work/out" &&
    grep -q "^  --method em" "$work/out" || fail "moe-mpi fit --help: not moe-mpi's help"
for option in --batch-size --checkpoint --resume --estimator; do
    checks=$((checks + 1))
    ! grep -q "^  $option" "$work/out" || fail "moe-mpi fit --help offers $option"
done

# The gate's and the experts' own columns reach the sharded fit: the gate sees a alone, the
# experts b and c, and the summary says so.
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit all.csv --response y \
    --gate-features a --expert-features b,c >out 2>err)
status=$?
[[ $status -eq 0 ]] && grep -q "gate sees: (intercept), a" "$work/out" ||
    fail "--gate-features under moe-mpi: exit status $status, $(head -c 300 "$work/err")"

# Files of different columns, the second rank's wider: every rank refuses the call with
# status 2 and the same message (before, root's gather of the wider support rows aborted).
awk -F, -v OFS=, '{ print $1, $2, (NR == 1 ? "e" : $3), $3, $4 }' "$work/part1.csv" \
    >"$work/wide1.csv"
cp "$work/part0.csv" "$work/wide0.csv"
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "wide%d.csv" --response y \
    >out 2>err)
status=$?
[[ $status -eq 2 ]] || { fail "different columns: exit status $status, not 2";
    sed 's/^/    /' "$work/err" | head -5; }
checks=$((checks + 1))
[[ $(grep -c "the ranks differ in the number of features d (3 and 4)" "$work/err") -eq 1 ]] ||
    fail "different columns: not said once (an exact em's failure is every rank's)"

# A pattern whose paths are longer than the tool's buffer (and one whose width alone is):
# refused with a message, status 2 on every rank, nothing written past the buffer (the
# sanitizer build aborts on that).
# (4200: just past the buffer, where the sanitizer's red zone catches the old overrun.)
long=$(printf 'd%.0s' {1..4200})
for case in "${long}%d.csv" "part%05000d.csv"; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "$case" --response y \
        >out 2>err)
    status=$?
    [[ $status -eq 2 ]] || { fail "a too long path: exit status $status, not 2"; \
        sed 's/^/    /' "$work/err" | head -5 | cut -c1-200; }
    checks=$((checks + 1))
    [[ $(grep -c "is longer than 4095 bytes" "$work/err") -eq 2 ]] ||
        fail "a too long path: not refused by both ranks"
done

# Two regimes along x (flat with sd 1 below 30, falling with sd 4 above), as in the motorcycle
# data: the rows sorted by x (split in blocks, each rank sees one regime) or in random order.
regimes() { # ROWS SEED sorted|random
    awk -v n="$1" -v seed="$2" -v order="$3" 'BEGIN { srand(seed); print "x,y";
        for (i = 0; i < n; i++) {
            x = order == "sorted" ? 60 * (i + rand()) / n : 60 * rand();
            e = sqrt(-2 * log(rand())) * cos(6.2831853 * rand());
            printf "%.6f,%.6f\n", x, (x < 30 ? 2 + 0.1 * x + e : 40 - x + 4 * e) } }'
}
number() { # FILE PATTERN: the number after PATTERN on its first line
    awk -v p="$2" 'index($0, p) && !done { s = substr($0, index($0, p) + length(p));
        sub(/^[ :]*/, "", s); split(s, w, /[ ,}]/); print w[1]; done = 1 }' "$1"
}
regimes 600 11 sorted >"$work/sorted.csv"
# The summary of a fit on two ranks: the log-likelihood and criteria over every rank's rows,
# the standard errors, the real time; the warning on the sorted file's blocks alone.
for order in sorted random; do
    [[ $order == random ]] && regimes 600 11 random >"$work/random.csv"
    for ranks in 2 3; do
        checks=$((checks + 1))
        # shellcheck disable=SC2086
        (cd "$work" && $mpiexec $flags -np $ranks "$tool" fit $order.csv --response y -k 2 \
            --method ot >out 2>err) || fail "$order, $ranks ranks: exit status $?"
        checks=$((checks + 1))
        grep -q "^log-likelihood .* AIC .* BIC .* ICL .*(n = 600)" "$work/out" ||
            fail "$order, $ranks ranks: no log-likelihood and criteria over the 600 rows"
        checks=$((checks + 1))
        grep -q "^standard errors (observed information)" "$work/out" ||
            { [[ $order == sorted ]] && grep -q "no standard errors: the observed information" \
                "$work/err"; } ||
            fail "$order, $ranks ranks: no standard errors"
        checks=$((checks + 1))
        seconds=$(sed -n 's/^fit: .*, \([0-9.]*\) s$/\1/p' "$work/out")
        awk -v s="$seconds" 'BEGIN { exit s > 0 ? 0 : 1 }' ||
            fail "$order, $ranks ranks: the time is '$seconds' s"
        checks=$((checks + 1))
        warnings=$(grep -c "moe-mpi: warning: the reduced model explains rank" "$work/err")
        if [[ $order == sorted ]]; then
            [[ $warnings -eq 1 ]] || fail "sorted, $ranks ranks: $warnings warnings, not 1"
        else
            [[ $warnings -eq 0 ]] || fail "random, $ranks ranks: a warning"
        fi
    done
done
# --shuffle: the sorted rows redistributed at random: no warning, about the log-likelihood of
# one process, and the same model from the same seed.
loglik_of() { sed -n 's/^log-likelihood \([-0-9.]*\) .*/\1/p' "$1"; }
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 1 "$tool" fit sorted.csv --response y -k 2 >one 2>err)
for run in 1 2; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np 2 "$tool" fit sorted.csv --response y -k 2 --shuffle \
        --method ot -o shuffled$run.moe >out 2>err) || fail "--shuffle: exit status $?"
    checks=$((checks + 1))
    ! grep -q "warning" "$work/err" || fail "--shuffle: a warning"
    checks=$((checks + 1))
    awk -v a="$(loglik_of "$work/out")" -v b="$(loglik_of "$work/one")" \
        'BEGIN { d = a - b; exit (a != "" && d * d < (0.01 * b) ^ 2) ? 0 : 1 }' ||
        fail "--shuffle: log-likelihood $(loglik_of "$work/out"), one process's" \
            "$(loglik_of "$work/one")"
done
checks=$((checks + 1))
cmp -s "$work/shuffled1.moe" "$work/shuffled2.moe" ||
    fail "--shuffle: another model from the same seed"

# The JSON summary holds the log-likelihood, the criteria, the standard errors and the time.
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 2 "$tool" fit random.csv --response y -k 2 --json >out 2>err)
for field in '"loglik"' '"aic"' '"bic"' '"icl"' '"se"'; do
    grep -q "$field: " "$work/out" || fail "JSON: no $field"
done
awk -v s="$(number "$work/out" '"seconds"')" 'BEGIN { exit s > 0 ? 0 : 1 }' ||
    fail "JSON: the time is not above 0"

# The default, exact em: on the sorted rows in blocks, 2 and 3 ranks give one process's
# log-likelihood (1e-6 relative) with no warning; the summary and the JSON say how many
# passes and bytes travelled.
# shellcheck disable=SC2086
(cd "$work" && "$moe" fit sorted.csv --response y -k 2 --json >one.json 2>err) ||
    fail "moe fit: exit status $?"
for ranks in 2 3; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np $ranks "$tool" fit sorted.csv --response y -k 2 \
        --json >out 2>err) || fail "em, $ranks ranks: exit status $?"
    checks=$((checks + 1))
    awk -v a="$(number "$work/out" '"loglik"')" -v b="$(number "$work/one.json" '"loglik"')" \
        'BEGIN { d = a - b; exit (a != "" && d * d <= (1e-6 * b) ^ 2) ? 0 : 1 }' ||
        fail "em, $ranks ranks: log-likelihood $(number "$work/out" '"loglik"'), one" \
            "process's $(number "$work/one.json" '"loglik"')"
    checks=$((checks + 1))
    grep -q '"mpi": {"method": "em", "ranks": '"$ranks"', "iterations": [0-9]*, "passes": [0-9]*' \
        "$work/out" && grep -q '"bytes_per_pass": [1-9]' "$work/out" ||
        fail "em, $ranks ranks: no mpi object in the JSON"
    checks=$((checks + 1))
    ! grep -q "warning" "$work/err" || fail "em, $ranks ranks: a warning"
done
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 2 "$tool" fit sorted.csv --response y -k 2 >out 2>err)
grep -q "^ranks: 2; exact em: .* passes whose sums travelled, [0-9]* bytes a pass" "$work/out" ||
    fail "em: the summary does not say what travelled"
# Other families under em: Poisson counts along x.
awk 'BEGIN { srand(8); print "x,count";
    for (i = 0; i < 1500; i++) { x = 2 * (i + rand()) / 1500 - 1;
        m = rand() < 1 / (1 + exp(-4 * x)) ? exp(2 + 0.5 * x) : exp(0.3 - x);
        c = 0; p = exp(-m); s = p; u = rand(); while (u > s) { c++; p *= m / c; s += p }
        print x "," c } }' >"$work/counts.csv"
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && "$moe" fit counts.csv --response count -k 2 --family poisson --json >one.json \
    2>err && $mpiexec $flags -np 2 "$tool" fit counts.csv --response count -k 2 \
    --family poisson --json >out 2>err) || fail "poisson: exit status $?"
awk -v a="$(number "$work/out" '"loglik"')" -v b="$(number "$work/one.json" '"loglik"')" \
    'BEGIN { d = a - b; exit (a != "" && d * d <= (1e-6 * b) ^ 2) ? 0 : 1 }' ||
    fail "poisson: log-likelihood $(number "$work/out" '"loglik"'), one process's" \
        "$(number "$work/one.json" '"loglik"')"

# An error on every rank: each rank's message is one line with the tool's name once (before,
# the ranks' "moe: " and messages, written in pieces, interleaved: "moe: moe: ...").
: >"$work/empty.csv"
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && timeout 120 $mpiexec $flags -np 4 "$tool" fit empty.csv --response y >out 2>err)
[[ $(grep -c "^moe-mpi: empty.csv: the file is empty (no header)$" "$work/err") -eq 4 ]] ||
    { fail "errors: not one line per rank, each with one prefix"; head -5 "$work/err"; }

echo "$checks passed, $failures failed" | sed "s/^$checks passed/$((checks - failures)) passed/"
[[ $failures -eq 0 ]]
