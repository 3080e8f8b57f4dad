#!/usr/bin/env bash
# Run every libFuzzer binary of a MOE_FUZZ build for a bounded time, each from a
# copy of its committed corpus (the committed files are never written), and fail
# when any finds a crash, a sanitizer report, a leak or a slow input.
#
#   CC=clang cmake -S . -B build-fuzz -DMOE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build build-fuzz -j2
#   tests/fuzz/run.sh build-fuzz 120
#
# Each harness fuzz_NAME runs for SECONDS in BUILD_DIR/fuzz-run/NAME/: corpus/ is the
# working corpus (grown by the run), crashes/ holds what failed (add those files to
# tests/fuzz/corpus/NAME/ once fixed), log the libFuzzer output.
set -uo pipefail

usage="usage: tests/fuzz/run.sh BUILD_DIR SECONDS"
build=${1:?$usage}
seconds=${2:?$usage}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "$usage (SECONDS a positive integer)"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ran=0
failed=0
names=()
for source in "$here"/fuzz_*.c; do
    name=$(basename "$source" .c)
    name=${name#fuzz_}
    binary="$build/tests/fuzz/fuzz_$name"
    if [[ ! -x $binary ]]; then
        echo "fuzz_$name: not built (configure with CC=clang and -DMOE_FUZZ=ON; the CSV harness also needs libcsv)"
        failed=$((failed + 1))
        continue
    fi
    run="$build/fuzz-run/$name"
    rm -rf "$run"
    mkdir -p "$run/corpus" "$run/crashes"
    if [[ -d $here/corpus/$name ]]; then
        cp -R "$here/corpus/$name/." "$run/corpus/"
    fi
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
             -artifact_prefix="$run/crashes/")
    if [[ -f $here/$name.dict ]]; then
        options+=(-dict="$here/$name.dict")
    fi
    echo "== fuzz_$name: $seconds s from $(find "$run/corpus" -type f | wc -l) inputs"
    ran=$((ran + 1))
    # The harnesses run side by side (each on one core): the step takes SECONDS, not
    # SECONDS times the number of harnesses.
    ( "$binary" "${options[@]}" "$run/corpus" >"$run/log" 2>&1; echo $? >"$run/status" ) &
    names+=("$name")
done
wait
for name in ${names[@]+"${names[@]}"}; do
    run="$build/fuzz-run/$name"
    if [[ $(cat "$run/status" 2>/dev/null) == 0 ]]; then
        echo "== fuzz_$name"
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$run/log"
        echo "   corpus now $(find "$run/corpus" -type f | wc -l) inputs; no failure"
    else
        failed=$((failed + 1))
        echo "FAIL: fuzz_$name (log: $run/log)"
        grep -E 'ERROR|SUMMARY|broken invariant|Test unit written' "$run/log" | head -20
        ls "$run/crashes"
    fi
done
if [[ $ran -eq 0 ]]; then
    echo "no fuzz binary found in $build/tests/fuzz"
    exit 1
fi
[[ $failed -eq 0 ]]
