#!/usr/bin/env bash
# The R package (bindings/r) built and checked against an installed libmoe:
#   check_r_binding.sh <source dir of bindings/r> <install prefix> <moe tool>
# R CMD check --as-cran must end with "Status: OK" or only NOTEs: an ERROR or a WARNING
# fails. Its network checks are off (CI has no network); the one NOTE that remains offline
# is "unable to verify current time". checkbashisms (Debian's devscripts) checks configure.
set -euo pipefail
source_dir=$1 prefix=$2 tool=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkgconfig_dir=$(dirname "$(find "$prefix" -name moe.pc -print -quit)")
cd "$work"
R CMD build --no-build-vignettes "$source_dir" > build.log 2>&1 || { cat build.log; exit 1; }
PKG_CONFIG_PATH="$pkgconfig_dir" MOE_TOOL="$tool" _R_CHECK_FORCE_SUGGESTS_=false \
    _R_CHECK_CRAN_INCOMING_REMOTE_=false \
    R CMD check --no-manual --as-cran libmoe_*.tar.gz > check.log 2>&1 || true
cat check.log
if ! grep -q '^Status: \(OK\|[0-9]* NOTEs\?\)$' check.log; then
    for log in libmoe.Rcheck/00install.out libmoe.Rcheck/tests/testthat.Rout.fail; do
        [[ -f $log ]] && { echo "== $log"; tail -n 60 "$log"; }
    done
    exit 1
fi
