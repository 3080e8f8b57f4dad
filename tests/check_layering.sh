#!/usr/bin/env bash
# The library's rooms (the directories of lib/) and which may include which, from the
# `#include "..."` lines of lib/**/*.c and *.h:
#
#   common      the bottom: includes nothing of the rooms above
#   model       the handle: spec, parameters, files, names, the family table's interface
#   pass        the pass engine over rows: posterior (E-step), softmax, Newton, the gate,
#               prediction
#   families    the expert families (one file each) and the GLM engine they share
#   information the observed information and covariance
#   kernels     the fit context and the numerical kernels: never the fitter or an estimator
#   fitter      the fitter handle, above the kernels: never an estimator's header
#   estimators  the built-in estimators, plugins like any other: only the public headers
#               (include/moe) and lib/common's helpers, besides their own files
#   mpi         libmoe_mpi, over the public headers
#
# common, model, pass, families and information, kernels, fitter stand in that order: none
# includes a room after it (families and information side by side, neither including the
# other).
#
# No file of lib/model, lib/kernels or lib/fitter includes an estimator's header, and no
# two rooms include each other, directly or through others (an include cycle). Every
# offending line is printed; the exit status is 1 when there is any.
#
# An #include "x.h" that names no room is the including file's own directory's; "moe/..."
# is the public headers, which every room may include.
#
# usage: check_layering.sh SOURCE_DIR
set -euo pipefail
export LC_ALL=C
source_dir=${1:?usage: check_layering.sh SOURCE_DIR}
cd "$source_dir"

find lib \( -name '*.c' -o -name '*.h' \) -print | sort |
    xargs grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' /dev/null |
    awk '
    BEGIN {
        n = split("common model pass families information kernels fitter estimators mpi",
                  rooms, " ")
        for (i = 1; i <= n; i++) is_room[rooms[i]] = 1
        split("common 0 model 1 pass 2 families 3 information 3 kernels 4 fitter 5", order, " ")
        for (i = 1; i in order; i += 2) rank[order[i]] = order[i + 1] + 0
        failed = 0
    }
    function fail(where, why) {
        printf "%s  (%s)\n", where, why
        failed = 1
    }
    {
        # path:line:text
        colon = index($0, ":"); file = substr($0, 1, colon - 1); rest = substr($0, colon + 1)
        colon = index(rest, ":"); text = substr(rest, colon + 1)
        where = file ":" substr(rest, 1, colon - 1) ": " text
        split(file, parts, "/"); from = parts[2]
        # the directory of an estimator: lib/estimators/NAME/ or lib/estimators itself
        from_dir = file; sub(/\/[^\/]*$/, "", from_dir)
        target = text; sub(/^[^"]*"/, "", target); sub(/".*$/, "", target)
        if (target ~ /^moe\//) next
        split(target, tparts, "/")
        if (tparts[1] in is_room) {
            to = tparts[1]; to_dir = "lib/" target; sub(/\/[^\/]*$/, "", to_dir)
        } else {
            to = from; to_dir = from_dir
        }
        if (!(from in is_room)) { fail(where, "a directory of lib/ that is no known room"); next }
        if (from == "common" && to != "common")
            fail(where, "lib/common includes nothing above it")
        if ((from in rank) && (to in rank) && rank[to] > rank[from])
            fail(where, "a room includes none after it (common, model, pass, families " \
                        "and information, kernels, fitter)")
        if (from == "kernels" && (to == "fitter" || to == "estimators"))
            fail(where, "lib/kernels includes neither the fitter nor an estimator")
        if ((from in rank) && to == "estimators")
            fail(where, "the core includes no estimator header")
        if (from == "estimators" && to != "common" && !(to == "estimators" && to_dir == from_dir))
            fail(where, "an estimator includes only include/moe, lib/common and its own files")
        if (to != from) {
            edge[from, to] = 1
            lines[from, to] = lines[from, to] "\n    " where
        }
    }
    END {
        # Which rooms reach which through includes (Floyd-Warshall on the rooms).
        for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
            reach[rooms[i], rooms[j]] = ((rooms[i], rooms[j]) in edge)
        for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
            if (reach[rooms[i], rooms[k]] && reach[rooms[k], rooms[j]])
                reach[rooms[i], rooms[j]] = 1
        # An include from a to b is on a cycle when b reaches a.
        for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) {
            a = rooms[i]; b = rooms[j]
            if ((a, b) in edge && reach[b, a]) {
                printf "include cycle: lib/%s includes lib/%s, whose includes lead back to lib/%s:%s\n",
                       a, b, a, lines[a, b]
                failed = 1
            }
        }
        exit failed
    }' && status=0 || status=$?

if [[ $status -ne 0 ]]; then
    echo "FAIL: the includes above break the layering of lib/ (tests/check_layering.sh)" >&2
    exit 1
fi
echo "layering: lib/ includes within its rooms' order, no include cycle"
