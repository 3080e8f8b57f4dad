#!/usr/bin/env bash
# The moe tool names the file's line (and the column's name) where libmoe names a row of the
# data (issue 38): the library counts rows of its arrays from 0, the file has a header, blank
# lines and records that span several lines, so the two differ.
#
#   tests/cli/test_cli_rows.sh PATH/TO/bin/moe
set -uo pipefail

moe=${1:?usage: test_cli_rows.sh PATH/TO/moe}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Counts with a note column the fit does not use; the note of the second row spans two
# lines and a blank line follows it, so the negative count (row 2 counting from 0) is on
# line 6.
{
    printf 'note,x,count\n'
    printf 'a,0.1,2\n'
    printf '"two\nlines",0.5,1\n'
    printf '\n'
    printf 'b,0.7,-1\n'
    for i in 1 2 3 4 5 6 7 8 9 10; do printf 'c,0.%d,%d\n' "$i" $((i % 4)); done
} >"$work/negative.csv"
run 2 "a negative Poisson count" "$moe" fit "$work/negative.csv" --response count \
    --features x --family poisson -k 1
contains "$work/err" "negative.csv: line 6, column 'count': -1 is not a count" \
    "the negative count's line and column"
lacks "$work/err" "row 2" "no 0-based row of the library's"

# The same through predict: a row whose prediction overflows, after a header, a blank line
# and a two-line note.
awk 'BEGIN { srand(3); print "x,y";
    for (i = 0; i < 200; i++) { x = 2 * rand() - 1; printf "%.6f,%.6f\n", x, 5 * x + 0.1 * rand() } }' \
    >"$work/line.csv"
run 0 "fit a line" "$moe" fit "$work/line.csv" --response y -k 1 --seed 1 -o "$work/line.moe"
{
    printf 'note,x\n'
    printf 'a,0.5\n'
    printf '\n'
    printf '"long\nnote",0.25\n'
    printf 'b,1e308\n'
} >"$work/huge.csv"
run 1 "predict an overflowing row" "$moe" predict "$work/line.moe" "$work/huge.csv"
contains "$work/err" "huge.csv: line 6: the prediction is infinite" "the overflowing row's line"

# A constant response is refused, naming the column (the variances would reach their floor
# and the log-likelihood grow without bound), by fit and by select.
awk 'BEGIN { print "x,level"; for (i = 1; i <= 40; i++) printf "%d,2.5\n", i }' \
    >"$work/constant.csv"
for command in fit select; do
    run 2 "$command: a constant response" "$moe" "$command" "$work/constant.csv" \
        --response level
    contains "$work/err" "constant.csv: the response, column 'level', is constant" \
        "$command: the constant response is named"
done

finish
