#!/usr/bin/env bash
# moe-mpi under mpirun, with both methods: one file split over the ranks, one file per rank
# (a %d pattern), the summary and model written once, a missing file on every rank giving
# status 2 everywhere without a hang, and a pattern too long for a path refused; the
# summary's log-likelihood, criteria, standard errors and time over every rank's rows, ot's
# warning on blocks of sorted rows, --shuffle, and errors one line per rank. The exact em
# (the default): the log-likelihood of moe fit on the same rows whatever the split, its
# summary line and JSON, the families ot refuses, and a bad row's file and line named with
# the same status on every rank.
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
for method in em ot; do
    [[ $method == em ]] && name="em (MPI, exact, 2 ranks)" || name="ot (MPI)"
    for case in "all.csv" "part%d.csv"; do
        checks=$((checks + 1))
        (cd "$work" && $mpiexec $flags -np 2 "$tool" fit "$case" --response y --method $method \
            -o model.moe >out 2>err) ||
            { fail "$method, $case: exit status $?"; sed 's/^/    /' "$work/err" | head; }
        checks=$((checks + 1))
        [[ $(grep -c "^fit: $name" "$work/out") -eq 1 ]] || fail "$method, $case: not one summary"
        checks=$((checks + 1))
        "$moe" info "$work/model.moe" >"$work/info" || fail "$method, $case: the model does not load"
        # The slopes 2 (b) and -2 (c) are recovered, one per expert.
        checks=$((checks + 1))
        awk '$1 == "b" && !sb++ { b1 = $2; b2 = $3 } $1 == "c" && !sc++ { c1 = $2; c2 = $3 }
             END { ok = ((b1 > 1.8 && c2 < -1.8) || (b2 > 1.8 && c1 < -1.8)); exit ok ? 0 : 1 }' \
            "$work/info" || fail "$method, $case: slopes not recovered"
        rm -f "$work/model.moe"
    done
done
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "missing%d.csv" --response y \
    >out 2>err)
status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "missing files: exit status $status (124: a hang)"

# moe fit's options that the fit over ranks does not act on are refused by name with status
# 2 on every rank, not ignored (before, --checkpoint wrote no file and --estimator em fitted
# with ot), and so are ot's limits (Gaussian experts, the identity link) under --method ot
# alone; a method neither em nor ot is refused. fit --help is moe-mpi's own, without the
# refused options among its options.
for refused in "--batch-size|--batch-size 100" "--checkpoint|--checkpoint session.state" \
               "--resume|--resume session.state" "--estimator|--estimator ismm" \
               "--link|--method ot --link sigmoid" "--family|--method ot --family poisson" \
               "--family|--estimator ot --family logistic" "--method|--method bogus" \
               "--estimator|--estimator ot --method em"; do
    name=${refused%%|*} option=${refused#*|}
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit all.csv --response y $option \
        >out 2>err)
    status=$?
    [[ $status -eq 2 ]] || fail "$option: exit status $status, not 2"
    checks=$((checks + 1))
    [[ $(grep -c "^moe-mpi: fit: $name" "$work/err") -eq 2 ]] ||
        { fail "$option: not refused by name on both ranks"; head -3 "$work/err"; }
done
checks=$((checks + 1))
[[ ! -e "$work/session.state" ]] || fail "--checkpoint: a refused option wrote a file"
checks=$((checks + 1))
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 1 "$tool" fit --help >out 2>err) ||
    fail "moe-mpi fit --help: exit status $?"
grep -q "^usage: mpirun -np N moe-mpi fit" "$work/out" && grep -q "^  --shuffle" "$work/out" ||
    fail "moe-mpi fit --help: not moe-mpi's help"
for option in --batch-size --checkpoint --resume --estimator; do
    checks=$((checks + 1))
    ! grep -q "^  $option" "$work/out" || fail "moe-mpi fit --help offers $option"
done
for option in --method --family --link; do
    checks=$((checks + 1))
    grep -q "^  $option" "$work/out" || fail "moe-mpi fit --help does not offer $option"
done
checks=$((checks + 1))
grep -q "em (default)" "$work/out" || fail "moe-mpi fit --help: em is not said to be the default"

# The gate's and the experts' own columns reach the fit of either method: the gate sees a
# alone, the experts b and c, and the summary says so.
for method in em ot; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit all.csv --response y \
        --method $method --gate-features a --expert-features b,c >out 2>err)
    status=$?
    [[ $status -eq 0 ]] && grep -q "gate sees: (intercept), a" "$work/out" ||
        fail "--gate-features under moe-mpi --method $method: exit status $status," \
            "$(head -c 300 "$work/err")"
done

# Files of different columns, the second rank's wider: every rank refuses the call with
# status 2 (before, root's gather of the wider support rows aborted), and the message, the
# same on every rank, is said once.
awk -F, -v OFS=, '{ print $1, $2, (NR == 1 ? "e" : $3), $3, $4 }' "$work/part1.csv" \
    >"$work/wide1.csv"
cp "$work/part0.csv" "$work/wide0.csv"
for method in em ot; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "wide%d.csv" --response y \
        --method $method >out 2>err)
    status=$?
    [[ $status -eq 2 ]] || { fail "different columns, $method: exit status $status, not 2";
        sed 's/^/    /' "$work/err" | head -5; }
    checks=$((checks + 1))
    [[ $(grep -c "the ranks differ in the number of features d (3 and 4)" "$work/err") -eq 1 ]] ||
        fail "different columns, $method: not the message once"
done

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
# The summary of ot's fit on two ranks: the log-likelihood and criteria over every rank's
# rows, the standard errors, the real time; the warning on the sorted file's blocks alone.
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
# --shuffle under ot: the sorted rows redistributed at random: no warning, about the
# log-likelihood of one process, and the same model from the same seed.
loglik_of() { sed -n 's/^log-likelihood \([-0-9.]*\) .*/\1/p' "$1"; }
# shellcheck disable=SC2086
(cd "$work" && $mpiexec $flags -np 1 "$tool" fit sorted.csv --response y -k 2 --method ot \
    >one 2>err)
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

# The JSON summary of either method holds the log-likelihood, the criteria, the standard
# errors, the time and the method.
for method in em ot; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np 2 "$tool" fit random.csv --response y -k 2 --json \
        --method $method >out 2>err) || fail "JSON, $method: exit status $?"
    for field in '"loglik"' '"aic"' '"bic"' '"icl"' '"se"'; do
        checks=$((checks + 1))
        grep -q "$field: " "$work/out" || fail "JSON, $method: no $field"
    done
    checks=$((checks + 1))
    awk -v s="$(number "$work/out" '"seconds"')" 'BEGIN { exit s > 0 ? 0 : 1 }' ||
        fail "JSON, $method: the time is not above 0"
    checks=$((checks + 1))
    grep -q "\"mpi\": {\"method\": \"$method\", \"ranks\": 2" "$work/out" ||
        fail "JSON, $method: no \"mpi\" member naming the method and the ranks"
done

# The exact em (the default) on the rows sorted by x in blocks, over 2 and 3 ranks, files
# of uneven rows, and shuffled: the log-likelihood moe fit gives on the file with the same
# options (to 1e-6 relative: the one fit whatever the split), the method on the fit line, its
# line of ranks, iterations, passes and bytes, the "mpi" JSON member, and none of ot's
# shard warning and line.
same_loglik() { # A B: within 1e-6 relative
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; m = b < 0 ? -b : b;
        exit (a != "" && b != "" && d * d <= (1e-6 * m) ^ 2) ? 0 : 1 }'
}
(head -1 "$work/sorted.csv" && sed -n 2,201p "$work/sorted.csv") >"$work/regime0.csv"
(head -1 "$work/sorted.csv" && sed -n 202,601p "$work/sorted.csv") >"$work/regime1.csv"
"$moe" fit "$work/sorted.csv" --response y -k 2 --seed 3 --json >"$work/one.json" 2>/dev/null ||
    fail "moe fit sorted.csv: exit status $?"
reference=$(number "$work/one.json" '"loglik"')
for case in "sorted.csv 2" "sorted.csv 3" "regime%d.csv 2" "sorted.csv 2 --shuffle"; do
    read -r file ranks extra <<<"$case"
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np $ranks "$tool" fit $file --response y -k 2 --seed 3 \
        $extra --json >out 2>err) || fail "em, $case: exit status $?"
    checks=$((checks + 1))
    same_loglik "$(number "$work/out" '"loglik"')" "$reference" ||
        fail "em, $case: log-likelihood $(number "$work/out" '"loglik"'), moe fit's $reference"
    checks=$((checks + 1))
    grep -q "\"estimator\": \"em (MPI, exact, $ranks ranks)\"" "$work/out" &&
        awk -v p="$(number "$work/out" '"passes"')" -v b="$(number "$work/out" '"bytes_per_pass"')" \
            'BEGIN { exit p > 0 && b > 0 ? 0 : 1 }' ||
        fail "em, $case: the JSON lacks the method, passes or bytes per pass"
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np $ranks "$tool" fit $file --response y -k 2 --seed 3 \
        $extra >out 2>err) || fail "em, $case: exit status $?"
    checks=$((checks + 1))
    grep -q "^fit: em (MPI, exact, $ranks ranks), converged after" "$work/out" ||
        fail "em, $case: the fit line does not name the exact em"
    checks=$((checks + 1))
    grep -Eq "^MPI: $ranks ranks, [0-9]+ iterations? from .*, [0-9]+ passes .*, [0-9]+ bytes per pass" \
        "$work/out" || fail "em, $case: no line of ranks, iterations, passes and bytes"
    checks=$((checks + 1))
    ! grep -q "^ranks: " "$work/out" && ! grep -q "reduced model explains" "$work/err" ||
        fail "em, $case: ot's shard line or warning"
done

# Every family em fits goes over the ranks as moe fit fits the file, and ot refuses it: Poisson
# counts (two regimes of rates along x), and labels of two classes with one rank's file
# holding one of them ("yes", its own class 0 and the list's 1: the ranks' labels are made
# one list before the fit).
awk 'BEGIN { srand(5); print "x,y"; n = 600;
    for (i = 0; i < n; i++) { x = (i + rand()) / n; m = rand() < 0.5 ? exp(0.5 + 1.5 * x) : exp(2 - x);
        limit = exp(-m); k = 0; p = 1; do { k++; p *= rand() } while (p > limit);
        printf "%.6f,%d\n", x, k - 1 } }' >"$work/counts.csv"
awk 'BEGIN { srand(21); print "x,z,label"; n = 600;
    for (i = 0; i < n; i++) { x = (i + rand()) / n; z = 2 * rand() - 1;
        p = x < 0.5 ? 1 : 1 / (1 + exp(4 * z - 1));
        printf "%.6f,%.6f,%s\n", x, z, (rand() < p ? "yes" : "no") } }' >"$work/labels.csv"
(head -1 "$work/labels.csv" && sed -n 2,301p "$work/labels.csv") >"$work/labels0.csv"
(head -1 "$work/labels.csv" && sed -n 302,601p "$work/labels.csv") >"$work/labels1.csv"
# The 1.2 families: Gamma responses (a shape per expert, which the ranks' model must carry
# back) and binomial successes out of a trials column.
awk 'BEGIN { srand(9); print "x,cost"; n = 600;
    for (i = 0; i < n; i++) { x = (i + rand()) / n; first = rand() < 0.5;
        a = first ? 3 : 8; m = first ? exp(0.5 + 1.5 * x) : exp(2 - x); g = 0;
        for (j = 0; j < a; j++) g -= log(1 - rand());
        printf "%.6f,%.6f\n", x, g * m / a } }' >"$work/costs.csv"
awk 'BEGIN { srand(13); print "x,n,s"; n = 600;
    for (i = 0; i < n; i++) { x = (i + rand()) / n; t = int(12 * rand());
        p = rand() < 0.5 ? 1 / (1 + exp(1 - 3 * x)) : 1 / (1 + exp(-1 + x)); s = 0;
        for (j = 0; j < t; j++) if (rand() < p) s++;
        printf "%.6f,%d,%d\n", x, t, s } }' >"$work/trials.csv"
for case in "poisson counts.csv y counts.csv" "logistic labels.csv label labels%d.csv" \
            "gamma costs.csv cost costs.csv" "binomial trials.csv s trials.csv --trials n"; do
    read -r family file response split extra <<<"$case"
    # shellcheck disable=SC2086
    "$moe" fit "$work/$file" --response "$response" --family "$family" $extra --json \
        >"$work/one.json" 2>/dev/null || fail "moe fit $file: exit status $?"
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && $mpiexec $flags -np 2 "$tool" fit "$split" --response "$response" \
        --family "$family" $extra --json >out 2>err) ||
        { fail "em, $family: exit status $?"; head -3 "$work/err"; }
    checks=$((checks + 1))
    same_loglik "$(number "$work/out" '"loglik"')" "$(number "$work/one.json" '"loglik"')" &&
        grep -q "\"family\": \"$family\"" "$work/out" ||
        fail "em, $family: log-likelihood $(number "$work/out" '"loglik"'), moe fit's" \
            "$(number "$work/one.json" '"loglik"')"
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np 2 "$tool" fit "$split" --response "$response" \
        --family "$family" $extra --method ot >out 2>err)
    status=$?
    [[ $status -eq 2 ]] && grep -q "^moe-mpi: fit: --family $family" "$work/err" ||
        fail "ot, $family: exit status $status, not refused by name"
done

# A bad cell: status 2 on every rank and a message that names the file and line the row
# came from, as moe fit names it: a cell that is no number in the second rank's file (that
# rank says so) or in the one file (every rank read it), and counts that are none in the
# second rank's rows (the library's row among all ranks' rows, told once), in the one file
# split in blocks, shuffled, and in the second rank's file. each.sh keeps each rank's status
# and ends with 0, so that mpirun lets every rank end (it aborts the others at the first
# failure).
printf '%s\n' '"$@"' 'echo "$?" >"status.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-unknown}}"' \
    >"$work/each.sh"
bad_cell() { # RANKS TEXT TIMES ARGUMENTS...: status 2 on each rank, TEXT said TIMES times
    local ranks=$1 text=$2 times=$3
    shift 3
    rm -f "$work"/status.*
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$work" && timeout 120 $mpiexec $flags -np "$ranks" bash each.sh "$tool" fit "$@" \
        >out 2>err)
    [[ $(cat "$work"/status.* 2>/dev/null | grep -c '^2$') -eq $ranks ]] ||
        fail "$*: the ranks' exit statuses are '$(cat "$work"/status.* 2>/dev/null | xargs)'"
    checks=$((checks + 1))
    [[ $(grep -c -F -- "$text" "$work/err") -eq $times ]] ||
        { fail "$*: '$text' not said $times times"; head -3 "$work/err"; }
}
cp "$work/part0.csv" "$work/nan0.csv"
sed '5s/,[^,]*$/,NaN/' "$work/part1.csv" >"$work/nan1.csv"
bad_cell 2 "moe-mpi: nan1.csv: line 5, column 'y': " 1 "nan%d.csv" --response y
sed '7000s/,[^,]*$/,abc/' "$work/all.csv" >"$work/abc.csv"
bad_cell 2 "moe-mpi: abc.csv: line 7000, column 'y': 'abc' is not" 2 abc.csv --response y
sed '450s/,[0-9]*$/,2.5/' "$work/counts.csv" >"$work/fraction.csv"
for extra in "" --shuffle; do
    # shellcheck disable=SC2086
    bad_cell 3 "moe-mpi: input error: fraction.csv: line 450, column 'y': 2.5 is not a count" 1 \
        fraction.csv --response y --family poisson $extra
done
head -201 "$work/fraction.csv" >"$work/fraction0.csv"
(head -1 "$work/fraction.csv" && sed -n '202,$p' "$work/fraction.csv") >"$work/fraction1.csv"
bad_cell 2 "moe-mpi: input error: fraction1.csv: line 250, column 'y': 2.5 is not a count" 1 \
    "fraction%d.csv" --response y --family poisson

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
