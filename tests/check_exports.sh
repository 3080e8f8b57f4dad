#!/usr/bin/env bash
# Check what libmoe.so exports.
#
#   check_exports.sh LIBRARY [EXPECTED_SONAME [PUBLIC_HEADER_DIR]]
#
# Fails if
#   - a defined dynamic symbol does not start with moe_ (the version nodes'
#     own symbols MOE_1.0, MOE_EXPERIMENTAL and later MOE_<n> nodes are allowed),
#   - fewer than MIN_EXPORTS moe_ symbols are exported (sanity),
#   - the SONAME is not EXPECTED_SONAME (default libmoe.so.1),
#   - a function declared MOE_API in PUBLIC_HEADER_DIR/*.h is not exported,
#   - an exported function is not in its version node: MOE_EXPERIMENTAL for the
#     experimental header kernels.h, the later stable node (MOE_1.1, ...) that lists it
#     in the version script VERSION_MAP (default lib/libmoe.map next to this script's
#     directory) for the functions a minor release added, STABLE_NODE (default MOE_1.0)
#     for the others.
set -euo pipefail
export LC_ALL=C

MIN_EXPORTS=20

if [[ $# -lt 1 ]]; then
    echo "usage: $0 LIBRARY [EXPECTED_SONAME [PUBLIC_HEADER_DIR]]" >&2
    exit 2
fi
lib=$1
expected_soname=${2:-libmoe.so.1}
header_dir=${3:-}

for tool in nm readelf; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "FAIL: $tool not found (Debian: apt-get install binutils)" >&2
        exit 1
    fi
done
if [[ ! -f $lib ]]; then
    echo "FAIL: no such library: $lib" >&2
    exit 1
fi

status=0

# nm -D --defined-only prints "ADDRESS TYPE NAME"; versioned names may carry
# an @@MOE_1.0 suffix depending on the binutils version.
symbols=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u)

bad=$(printf '%s\n' "$symbols" | grep -v -E '^(moe_|MOE_([0-9][0-9.]*|EXPERIMENTAL)$)' \
    | grep -v '^$' || true)
if [[ -n $bad ]]; then
    echo "FAIL: symbols exported without the moe_ prefix:"
    printf '%s\n' "$bad" | sed 's/^/  /'
    status=1
fi

exported=$(printf '%s\n' "$symbols" | grep -E '^moe_' || true)
count=$(printf '%s\n' "$exported" | grep -c . || true)
if (( count < MIN_EXPORTS )); then
    echo "FAIL: only $count moe_ symbols exported (expected at least $MIN_EXPORTS)"
    status=1
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [[ $soname != "$expected_soname" ]]; then
    echo "FAIL: SONAME is '${soname}', expected '${expected_soname}'"
    status=1
fi

if [[ -n $header_dir ]]; then
    # Function names of the MOE_API declarations (name on the MOE_API line).
    declared=$(cat "$header_dir"/*.h \
        | grep -E '^[[:space:]]*MOE_API[[:space:]]' \
        | sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' \
        | sort -u)
    n_declared=$(printf '%s\n' "$declared" | grep -c . || true)
    missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
    if [[ -n $missing ]]; then
        echo "FAIL: declared MOE_API in $header_dir but not exported:"
        printf '%s\n' "$missing" | sed 's/^/  /'
        status=1
    fi
    extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
    if [[ -n $extra ]]; then
        echo "FAIL: exported but not declared MOE_API in any public header:"
        printf '%s\n' "$extra" | sed 's/^/  /'
        status=1
    fi
    echo "public header declarations: $n_declared"

    # Each symbol's version node, from the dynamic symbol table ("name@@NODE").
    stable_node=${STABLE_NODE:-MOE_1.0}
    experimental=$(grep -E '^[[:space:]]*MOE_API[[:space:]]' "$header_dir/kernels.h" \
        | sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' \
        | sort -u)
    # "name node" for every symbol a later stable node (MOE_1.1 and on) of the map lists.
    version_map=${VERSION_MAP:-$(dirname "$0")/../lib/libmoe.map}
    if [[ ! -f $version_map ]]; then
        echo "FAIL: no version script at $version_map (set VERSION_MAP)"
        exit 1
    fi
    later=$(sed 's@/\*.*\*/@@' "$version_map" | awk '
        /^[[:space:]]*MOE_[0-9.]+[[:space:]]*\{/ { node = $1; sub(/\{.*/, "", node); next }
        /^[[:space:]]*MOE_EXPERIMENTAL[[:space:]]*\{/ { node = ""; next }
        /^[[:space:]]*}/ { node = ""; next }
        node != "" && node != "MOE_1.0" && $1 ~ /^moe_[A-Za-z0-9_]*;$/ {
            name = $1; sub(/;$/, "", name); print name, node }')
    wrong=$(readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && $8 ~ /^moe_/ { print $8 }' \
        | while IFS= read -r versioned; do
              name=${versioned%%@*}
              node=${versioned##*@}
              [[ $versioned == *@* ]] || node="(none)"
              expected=$stable_node
              listed=$(printf '%s\n' "$later" | awk -v n="$name" '$1 == n { print $2 }')
              if [[ -n $listed ]]; then
                  expected=$listed
              fi
              if printf '%s\n' "$experimental" | grep -qx "$name"; then
                  expected=MOE_EXPERIMENTAL
              fi
              [[ $node == "$expected" ]] || echo "$name in $node, expected $expected"
          done)
    if [[ -n $wrong ]]; then
        echo "FAIL: symbols outside their version node (lib/libmoe.map):"
        printf '%s\n' "$wrong" | sed 's/^/  /'
        status=1
    fi
    n_experimental=$(printf '%s\n' "$experimental" | grep -c . || true)
    echo "experimental (MOE_EXPERIMENTAL): $n_experimental"
    n_later=$(printf '%s\n' "$later" | grep -c . || true)
    echo "added after 1.0 (later stable nodes): $n_later"
fi

# The file's minor follows the last stable node of the version script (MOE_1.2 gives
# libmoe.so.1.2.0, MOE_1.3 libmoe.so.1.3.0): the name says which symbols the library has.
map=${VERSION_MAP:-$(dirname "$0")/../lib/libmoe.map}
if [[ -f $map && $expected_soname == libmoe.so.* ]]; then
    bash "$(dirname "$0")/check_library_version.sh" "$lib" "$map" MOE_ || status=1
fi

echo "library: $lib"
echo "SONAME: $soname"
echo "exported moe_ symbols: $count"
if (( status == 0 )); then
    echo "PASS"
fi
exit $status
