#!/usr/bin/env bash
# Tests check the status of every library call they make.
#
#   check_call_statuses.sh SOURCE_DIR
#
# Fails when a C file under SOURCE_DIR/tests calls a function that returns moe_status (one
# declared `MOE_API moe_status` or `MOE_MPI_API moe_status` in SOURCE_DIR/include/moe/*.h)
# as a statement of its own, or casts its status to void: a call whose failure the test
# would not see, so that it goes on to compare whatever the outputs held.
#
# A statement is a line that begins with the call (after `(void)` if any) and follows a line
# that ends one: `;`, `{`, `}`, `)` (an if, for or while without braces), `else`, a label, a
# comment or a preprocessor line. An argument of a call or an operand split over lines
# follows a `(`, `,` or an operator and is not one.
#
# Not checked (EXCLUDED below):
#   - the fuzz harnesses (tests/fuzz/fuzz_*.c): a call on fuzzed input may fail, and a
#     harness checks only what the library promises;
#   - files whose calls are being checked on another branch; remove each line when its file
#     passes.
set -euo pipefail
export LC_ALL=C

if [[ $# -ne 1 ]]; then
    echo "usage: $0 SOURCE_DIR" >&2
    exit 2
fi
source_dir=$1

EXCLUDED=(
    'tests/fuzz/fuzz_*.c'
)

names=$(cat "$source_dir"/include/moe/*.h \
    | sed -n -E 's/^[[:space:]]*MOE(_MPI)?_API[[:space:]]+moe_status[[:space:]]+([a-z_0-9]+)[[:space:]]*\(.*/\2/p' \
    | sort -u)
count=$(printf '%s\n' "$names" | grep -c . || true)
# Sanity: the headers declare dozens of them; none found means the pattern broke.
if (( count < 50 )); then
    echo "FAIL: only $count status-returning functions found in $source_dir/include/moe"
    exit 1
fi
alternatives=$(printf '%s\n' "$names" | paste -sd'|')

files=()
while IFS= read -r -d '' file; do
    relative=${file#"$source_dir"/}
    skip=0
    for pattern in "${EXCLUDED[@]}"; do
        # shellcheck disable=SC2053 # the pattern is a glob on purpose
        if [[ $relative == $pattern ]]; then
            skip=1
        fi
    done
    (( skip )) || files+=("$file")
done < <(find "$source_dir/tests" -name '*.c' -print0 | sort -z)

bare=$(awk -v names="$alternatives" -v root="$source_dir/" '
    FNR == 1 { previous = ";" }
    {
        code = $0
        gsub(/\/\*.*\*\//, "", code)
        sub(/\/\/.*/, "", code)
        sub(/[ \t]+$/, "", code)
        if (code ~ ("^[ \t]*(" names ")[ \t]*\\(") &&
            (previous ~ /[;{})]$/ || previous ~ /(^|[^A-Za-z0-9_])else$/ ||
             previous ~ /^[ \t]*#/ || previous ~ /\*\/$/ ||
             previous ~ /^[ \t]*(case[^?]*|default|[A-Za-z_][A-Za-z0-9_]*)[ \t]*:$/)) {
            file = FILENAME
            sub("^" root, "", file)
            printf "  %s:%d: %s\n", file, FNR, $0
        }
        if (code !~ /^[ \t]*$/ && code !~ /^[ \t]*\/?\*/)
            previous = code
    }' "${files[@]}")
# (void) casts anywhere on a line, in case one hides inside a longer statement.
cast=$(grep -n -H -E "\(void\)[[:space:]]*($alternatives)[[:space:]]*\(" "${files[@]}" \
    | sed "s|^$source_dir/|  |" || true)

echo "status-returning public functions: $count; test files checked: ${#files[@]}"
status=0
if [[ -n $bare ]]; then
    echo "FAIL: status-returning calls whose status is not checked:"
    printf '%s\n' "$bare"
    status=1
fi
if [[ -n $cast ]]; then
    echo "FAIL: statuses cast to void:"
    printf '%s\n' "$cast"
    status=1
fi
if (( status == 0 )); then
    echo "PASS"
fi
exit $status
