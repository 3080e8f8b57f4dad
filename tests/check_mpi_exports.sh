#!/usr/bin/env bash
# Check what libmoe_mpi.so exports: exactly the functions declared MOE_MPI_API in
# moe/mpi.h, each in the version node MOE_MPI_1.0 (lib/mpi/libmoe_mpi.map), and nothing
# else but the node's own symbol; and that its file name follows the map's last node
# (check_library_version.sh: libmoe_mpi.so.1.0.0 for MOE_MPI_1.0).
#
#   check_mpi_exports.sh LIBRARY MPI_HEADER
set -euo pipefail
export LC_ALL=C
lib=${1:?usage: check_mpi_exports.sh LIBRARY MPI_HEADER}
header=${2:?usage: check_mpi_exports.sh LIBRARY MPI_HEADER}
node=MOE_MPI_1.0

declared=$(grep -E '^[[:space:]]*MOE_MPI_API[[:space:]]' "$header" \
    | sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' | sort -u)
# Defined dynamic symbols as NAME@@NODE (readelf prints the node after the name).
defined=$(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && NF >= 8 { print $8 }' | sort -u)
status=0
expected=$( (printf '%s\n' "$declared" | sed "s/\$/@@$node/"; echo "$node") | sort -u)
unexpected=$(comm -13 <(printf '%s\n' "$expected") <(printf '%s\n' "$defined"))
missing=$(comm -23 <(printf '%s\n' "$expected") <(printf '%s\n' "$defined"))
if [[ -n $unexpected ]]; then
    echo "FAIL: exported but not a moe/mpi.h function in $node:"
    printf '%s\n' "$unexpected" | sed 's/^/  /'
    status=1
fi
if [[ -n $missing ]]; then
    echo "FAIL: declared in moe/mpi.h but not exported in $node:"
    printf '%s\n' "$missing" | sed 's/^/  /'
    status=1
fi
bash "$(dirname "$0")/check_library_version.sh" "$lib" \
    "$(dirname "$0")/../lib/mpi/libmoe_mpi.map" MOE_MPI_ || status=1
echo "declared: $(printf '%s\n' "$declared" | grep -c .), node $node"
(( status == 0 )) && echo PASS
exit $status
