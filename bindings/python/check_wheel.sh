#!/usr/bin/env bash
# The Python wheel carries libmoe (issue 42): build it from this source tree, install it into
# a fresh virtual environment where no libmoe is to be found (no MOE_LIBRARY, no
# LD_LIBRARY_PATH, no PKG_CONFIG_PATH, nothing on the loader's path), and run there the
# README's Python examples and the package's tests, from another directory than the source so
# that the installed package is the one imported. Then pip install bindings/python, the
# README's command, into a second environment. The source tree must be as clean afterwards as
# before.
#
#   bash bindings/python/check_wheel.sh [PYTHON]      (PYTHON: /usr/bin/python3, Debian's,
#                                                      with numpy, pytest and python3-build)
# Needs cmake, a C compiler, libopenblas-dev and liblapacke-dev; no network.
set -euo pipefail

PYTHON=${1:-/usr/bin/python3}
SOURCE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/moe-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# No route to a libmoe other than the wheel's own.
unset MOE_LIBRARY LD_LIBRARY_PATH PKG_CONFIG_PATH PYTHONPATH MOE_BUNDLE_LIBMOE
if "$PYTHON" -c "import ctypes; ctypes.CDLL('libmoe.so.1')" 2>/dev/null; then
    echo "note: a libmoe.so.1 is on the loader's path here; the check below still requires"
    echo "      that the wheel's own copy is the one loaded"
fi

status_before=$(git -C "$SOURCE" status --porcelain)

echo "-- building the wheel"
started=$SECONDS
"$PYTHON" -m build --wheel --no-isolation --outdir "$WORK/dist" "$SOURCE/bindings/python" \
    > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
echo "   built in $((SECONDS - started)) s"
wheels=("$WORK"/dist/moe-*.whl)
wheel=${wheels[0]}
[[ ${#wheels[@]} -eq 1 && -f $wheel ]] || { echo "FAIL: no single wheel in $WORK/dist"; exit 1; }
echo "   $(basename "$wheel"), $(stat -c %s "$wheel") bytes"
# A platform wheel (it holds a shared library), for any Python 3 (ctypes, no extension).
case $(basename "$wheel") in
    *-py3-none-linux_*.whl) ;;
    *) echo "FAIL: $(basename "$wheel") is not tagged py3-none-linux_<arch>"; exit 1 ;;
esac
"$PYTHON" - "$wheel" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "moe/libmoe.so.1" in names, f"the wheel lacks moe/libmoe.so.1: {names}"
assert not [n for n in names if n.startswith("tests/")], "the wheel carries the tests"
EOF

echo "-- installing it into a fresh virtual environment"
"$PYTHON" -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/pip" install -q --no-index --no-deps "$wheel"
mkdir "$WORK/elsewhere"
cd "$WORK/elsewhere"
"$WORK/venv/bin/python" - "$WORK/venv" <<'EOF'
import os, sys
import moe, moe._lib
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(moe.__file__).startswith(venv), moe.__file__
assert moe._lib.LIBRARY_PATH == moe._lib.BUNDLED, moe._lib.LIBRARY_PATH
print(f"   moe from {os.path.dirname(moe.__file__)}, libmoe from {moe._lib.LIBRARY_PATH}")
EOF

echo "-- the README's examples and the package's tests against the installed wheel"
# MOE_EXPECT_BUNDLED: test_moe checks that the package and library imported are the wheel's.
MOE_EXPECT_BUNDLED="$WORK/venv" PYTHONDONTWRITEBYTECODE=1 \
    "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider "$SOURCE/bindings/python/tests"

echo "-- pip install bindings/python (the README's command) into a second environment"
"$PYTHON" -m venv --system-site-packages "$WORK/venv2"
started=$SECONDS
"$WORK/venv2/bin/pip" install -q --no-index --no-build-isolation "$SOURCE/bindings/python"
echo "   installed in $((SECONDS - started)) s (the CMake tree of the first build reused)"
"$WORK/venv2/bin/python" -c "import moe._lib as l; assert l.LIBRARY_PATH == l.BUNDLED, \
l.LIBRARY_PATH; import moe; print('   loaded', l.LIBRARY_PATH)"

status_after=$(git -C "$SOURCE" status --porcelain)
if [[ $status_after != "$status_before" ]]; then
    echo "FAIL: building and installing the wheel changed the source tree:"
    diff <(echo "$status_before") <(echo "$status_after") || true
    exit 1
fi
for leftover in "$SOURCE"/bindings/python/*.egg-info; do
    [[ -e $leftover ]] && { echo "FAIL: $leftover left in the source tree"; exit 1; }
done
echo "check_wheel: OK"
