# The command-level tests' shared harness (sourced by test_cli.sh and test_cli_inputs.sh):
# a scratch directory $work removed on exit, counts of checks and failures, and the checks.
# A script ends with `finish`, whose status is the run's.
export LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run EXPECTED_STATUS NAME COMMAND...: stdout in $work/out, stderr in $work/err
run() {
    local expected=$1 name=$2
    shift 2
    checks=$((checks + 1))
    "$@" >"$work/out" 2>"$work/err"
    local status=$?
    if [[ $status -ne $expected ]]; then
        fail "$name: exit status $status, expected $expected"
        sed 's/^/    stderr: /' "$work/err" | head -5
    fi
}

contains() { # FILE TEXT NAME
    checks=$((checks + 1))
    grep -qF -- "$2" "$1" || { fail "$3: '$2' not in $(basename "$1")"; sed 's/^/    /' "$1" | head -8; }
}

lacks() { # FILE TEXT NAME
    checks=$((checks + 1))
    ! grep -qF -- "$2" "$1" || fail "$3: '$2' is in $(basename "$1")"
}

finish() {
    echo "$checks checks, $failures failures"
    [[ $failures -eq 0 ]]
}
