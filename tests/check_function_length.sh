#!/usr/bin/env bash
# No function in lib/ or programs/ longer than 100 lines (signature to closing brace), so
# that each reads as one idea. Exceptions are listed in tests/function_length_exceptions.txt,
# one "path function" per line, each with its reason in a comment in the code; a listed
# function that is no longer long must leave the list (the list only shrinks).
#
# usage: check_function_length.sh SOURCE_DIR   (needs universal-ctags)
set -euo pipefail
export LC_ALL=C
source_dir=${1:?usage: check_function_length.sh SOURCE_DIR}
limit=100
exceptions="$source_dir/tests/function_length_exceptions.txt"

if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
    echo "FAIL: universal-ctags is needed (Debian: apt-get install universal-ctags)" >&2
    exit 1
fi
cd "$source_dir"
long=$(ctags --kinds-C=f --fields=+ne -o - $(git ls-files 'lib/*.c' 'programs/*.c' 2>/dev/null ||
                                              find lib programs -name '*.c') |
       awk -F'\t' -v limit="$limit" '{
           line = ""; end = "";
           for (i = 4; i <= NF; i++) {
               if ($i ~ /^line:/) line = substr($i, 6);
               if ($i ~ /^end:/) end = substr($i, 5);
           }
           if (line != "" && end != "" && end - line + 1 > limit)
               print $2 " " $1 " " end - line + 1;
       }' | sort)
allowed=$(grep -v -E '^[[:space:]]*(#|$)' "$exceptions" | awk '{print $1 " " $2}' | sort)
status=0
while read -r path name lines; do
    [[ -z $path ]] && continue
    if ! grep -qx "$path $name" <<<"$allowed"; then
        echo "FAIL: $path: $name is $lines lines (limit $limit)"
        status=1
    fi
done <<<"$long"
while read -r path name; do
    [[ -z $path ]] && continue
    if ! grep -q "^$path $name " <<<"$long"; then
        echo "FAIL: $path: $name is listed in tests/function_length_exceptions.txt but is" \
             "no longer over $limit lines (or is gone): remove it from the list"
        status=1
    fi
done <<<"$allowed"
if [[ $status -eq 0 ]]; then
    echo "function length: every function in lib/ and programs/ is within $limit lines" \
         "(except $(grep -c . <<<"$allowed" || true) listed)"
fi
exit $status
