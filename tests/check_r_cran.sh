#!/usr/bin/env bash
# R CMD check --as-cran of the R package (bindings/r), as CRAN would run it but offline:
#   tests/check_r_cran.sh [PREFIX]
# PREFIX is an installed libmoe (cmake --install); without it, libmoe is built and
# installed into a temporary directory first. Everything is built and checked in a
# temporary directory (kept with KEEP=1), so the source tree is left as it was.
#
# Fails on any ERROR or WARNING and on any NOTE but "unable to verify current time", the
# one a machine without network always gets (the remote CRAN-incoming checks are off for
# the same reason). The manual's PDF is not built (--no-manual): it needs TeX Live with
# its extra fonts, hundreds of megabytes for a check of the Rd files that "checking Rd
# files" already does. codetools must be installed: without it R CMD check skips "checking
# R code for possible problems" in silence, which once hid missing NAMESPACE imports.
set -euo pipefail

source_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/moe-r-cran.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
started=$SECONDS

if ! Rscript -e 'invisible(loadNamespace("codetools"))' >/dev/null 2>&1; then
    echo "check_r_cran: R's codetools is missing (Debian: r-cran-codetools); without it" \
         "R CMD check does not check the R code" >&2
    exit 1
fi

if [[ $# -ge 1 ]]; then
    prefix=$(cd "$1" && pwd)
else
    prefix="$work/prefix"
    echo "-- building libmoe into $prefix"
    cmake -S "$source_root" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DMOE_BUILD_TESTS=OFF \
          -DMOE_BUILD_BENCH=OFF > "$work/cmake.log" 2>&1 &&
        cmake --build "$work/build" -j"$(nproc 2>/dev/null || echo 2)" >> "$work/cmake.log" 2>&1 &&
        cmake --install "$work/build" --prefix "$prefix" >> "$work/cmake.log" 2>&1 ||
        { tail -n 40 "$work/cmake.log"; exit 1; }
fi
pc=$(find "$prefix" -name moe.pc -print -quit)
[[ -n $pc ]] || { echo "check_r_cran: no moe.pc under $prefix" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
# The package's tests compare some fits with the moe tool's when it is there.
if [[ -x $prefix/bin/moe ]]; then export MOE_TOOL="$prefix/bin/moe"; fi

cd "$work"
R CMD build "$source_root/bindings/r" > build.log 2>&1 || { cat build.log; exit 1; }
tarball=$(ls libmoe_*.tar.gz)
# Offline: no CRAN-incoming queries (URLs, package names) and no DOI look-ups.
_R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_CRAN_INCOMING_=false \
    R CMD check --as-cran --no-manual "$tarball" > check.log 2>&1 || true
cat check.log
log=libmoe.Rcheck/00check.log
[[ -f $log ]] || { echo "check_r_cran: R CMD check wrote no 00check.log" >&2; exit 1; }

# Each check is a "* checking ..." line with the lines below it up to the next "* " line;
# it reported a problem when its first line ends in NOTE, WARNING or ERROR, or (the tests)
# a line of its own does. The one allowed is the time NOTE whose text is that line alone.
problems=$(awk '
    function flush() {
        if (bad && entry != allowed) { print entry; print "" }
        entry = ""; bad = 0
    }
    BEGIN { allowed = "* checking for future file timestamps ... NOTE\nunable to verify current time" }
    /^\* / { flush(); entry = $0; bad = $0 ~ / (NOTE|WARNING|ERROR)$/; next }
    /^Status: / { flush(); next }
    entry != "" { entry = entry "\n" $0; if ($0 ~ /^ *(\[[^]]*\] )?(NOTE|WARNING|ERROR)$/) bad = 1 }
    END { flush() }
' "$log")
status=$(grep '^Status: ' "$log" || true)
echo
echo "check_r_cran: $status ($((SECONDS - started)) s)"
if [[ -n $problems || ! $status =~ ^Status:\ (OK|1\ NOTE)$ ]]; then
    echo "check_r_cran: R CMD check --as-cran reported more than the offline time NOTE:" >&2
    printf '%s\n' "$problems" >&2
    # The installation's log says why an install failed; the tests' why they did.
    files=(libmoe.Rcheck/tests/testthat.Rout.fail)
    [[ $status == *ERROR* ]] && files+=(libmoe.Rcheck/00install.out)
    for file in "${files[@]}"; do
        if [[ -f $file ]]; then echo "== $file"; tail -n 60 "$file"; fi
    done
    exit 1
fi
echo "check_r_cran: no ERROR, no WARNING, no NOTE but the offline time one"
