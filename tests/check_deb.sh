#!/usr/bin/env bash
# Build the Debian packages from this source tree, check them with lintian, install them,
# use them as a program would, and purge them.
#
#   bash tests/check_deb.sh            (as root: it installs and purges the packages)
#
# The packages are built by dpkg-buildpackage in a copy of the tree (the files git tracks,
# as they are in the work tree, so uncommitted edits are included and untracked files are
# not), in a temporary directory: dpkg-buildpackage writes its .deb files into the parent
# of the tree it builds and debhelper its build directory inside it, and the source tree
# must stay clean. DEB_BUILD_OPTIONS is passed on (CI sets nocheck: the suite ran in its
# step 2); parallel=$(nproc) is added when it names no parallel=. The packages are purged at
# the end, and on any failure, so that no other step sees an installed libmoe.
set -euo pipefail
export LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SOURCE=$PWD
if [[ $(id -u) -ne 0 ]]; then
    echo "check_deb.sh installs and purges packages: run it as root" >&2
    exit 2
fi
for tool in dpkg-buildpackage dh lintian git; do
    command -v "$tool" >/dev/null || {
        echo "check_deb.sh needs $tool (Debian: apt-get install dpkg-dev debhelper lintian git)" >&2
        exit 2
    }
done

PACKAGES=(libmoe1 libmoe-dev moe-tools libmoe-mpi1 libmoe-mpi-dev moe-mpi)
installed_packages() { # the ones of PACKAGES installed now
    local package
    for package in "${PACKAGES[@]}"; do
        if [[ $(dpkg-query -W -f '${db:Status-Status}' "$package" 2>/dev/null) == installed ]]; then
            echo "$package"
        fi
    done
}
# Refuse to start over packages someone else installed: purging them at the end would
# remove them.
already=$(installed_packages)
if [[ -n $already ]]; then
    echo "already installed: $already; purge them first (apt-get purge -y $already)" >&2
    exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moe-deb.XXXXXX")
chmod 755 "$WORK" # apt reads the .deb files as its own user
PURGED=0
cleanup() {
    local status=$?
    if [[ $PURGED -eq 0 ]]; then
        local left
        left=$(installed_packages)
        if [[ -n $left ]]; then
            echo "-- purging after a failure: $left"
            # shellcheck disable=SC2086
            apt-get purge -y -q $left </dev/null >/dev/null || true
        fi
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
VERSION=$(sed -n 's/^project(moe VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
DEB_VERSION=$(dpkg-parsechangelog -l debian/changelog -S Version)
# The first packaged release is the project's release; a Debian revision may follow it.
if [[ ${DEB_VERSION%%-*} != "$VERSION" ]]; then
    fail "debian/changelog says $DEB_VERSION, CMakeLists.txt says $VERSION: add a" \
         "debian/changelog entry for $VERSION"
fi

echo "-- copying the tracked files to $WORK/libmoe-$VERSION"
BUILD_TREE="$WORK/libmoe-$VERSION"
mkdir "$BUILD_TREE"
git ls-files -z | while IFS= read -r -d '' file; do
    # a tracked file deleted in the work tree is left out, as the next commit would
    if [[ -e $file || -L $file ]]; then printf '%s\0' "$file"; fi
done | tar --null -T - -cf - | tar -xf - -C "$BUILD_TREE"

OPTIONS=${DEB_BUILD_OPTIONS:-}
if [[ $OPTIONS != *parallel=* ]]; then
    OPTIONS="${OPTIONS:+$OPTIONS }parallel=$(nproc 2>/dev/null || echo 2)"
fi
echo "-- dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS='$OPTIONS')"
started=$SECONDS
if ! (cd "$BUILD_TREE" && DEB_BUILD_OPTIONS=$OPTIONS dpkg-buildpackage -us -uc -b) \
        >"$WORK/build.log" 2>&1; then
    tail -n 60 "$WORK/build.log"
    fail "dpkg-buildpackage failed (the log's end above)"
fi
echo "package build: $((SECONDS - started)) s"
grep -E '^dpkg-deb: building package' "$WORK/build.log"

echo
echo "-- lintian (errors fail; warnings and notes are printed)"
# Errors fail the check; the README lists the warnings and notes lintian gives.
lintian_status=0
lintian --fail-on error --display-info --tag-display-limit 0 "$WORK"/libmoe_*.changes \
    >"$WORK/lintian.txt" 2>&1 || lintian_status=$?
grep -v '^running with root privileges' "$WORK/lintian.txt" || echo "(no tags)"
[[ $lintian_status -eq 0 ]] || fail "lintian reported errors (status $lintian_status)"

debs=()
built=()
for package in "${PACKAGES[@]}"; do
    deb=$(find "$WORK" -maxdepth 1 -name "${package}_*.deb" -print -quit)
    if [[ -n $deb ]]; then
        debs+=("$deb")
        built+=("$package")
    fi
done
for package in libmoe1 libmoe-dev moe-tools; do
    [[ " ${built[*]} " == *" $package "* ]] || fail "no $package package was built"
done
WITH_MPI=0
if [[ " ${built[*]} " == *" libmoe-mpi-dev "* ]]; then
    WITH_MPI=1
fi

echo
echo "-- apt-get install ${built[*]}"
apt-get install -y -q --no-install-recommends "${debs[@]}" </dev/null >"$WORK/install.log" 2>&1 \
    || { cat "$WORK/install.log"; fail "apt-get install failed"; }

echo
echo "-- dpkg -L libmoe-dev"
dpkg -L libmoe-dev | tee "$WORK/libmoe-dev.list"
LIBDIR=/usr/lib/$TRIPLET
for path in /usr/include/moe/moe.h "$LIBDIR/libmoe.so" "$LIBDIR/pkgconfig/moe.pc" \
            "$LIBDIR/cmake/moe/moeConfig.cmake" "$LIBDIR/cmake/moe/moeConfigVersion.cmake" \
            "$LIBDIR/cmake/moe/moeTargets.cmake"; do
    grep -qx "$path" "$WORK/libmoe-dev.list" || fail "libmoe-dev lacks $path"
done
grep -qx /usr/include/moe/mpi.h "$WORK/libmoe-dev.list" && fail "libmoe-dev holds mpi.h"
[[ -L $LIBDIR/libmoe.so ]] || fail "$LIBDIR/libmoe.so is not a link"
[[ $(readlink -f "$LIBDIR/libmoe.so") == "$LIBDIR/libmoe.so.1".*.* ]] \
    || fail "$LIBDIR/libmoe.so points to $(readlink -f "$LIBDIR/libmoe.so")"
echo "-- dpkg -L libmoe1"
dpkg -L libmoe1 | grep libmoe
bash tests/check_library_version.sh "$LIBDIR/libmoe.so.1" lib/libmoe.map MOE_

# The loader must find the packaged libmoe.so.1, not another copy (/usr/local/lib comes
# before the multiarch directory in its search). /lib may be a link to /usr/lib.
check_runs_with_package() { # PROGRAM
    local found
    found=$(ldd "$1" | sed -n 's/^[[:space:]]*libmoe\.so\.1 => \([^ ]*\).*/\1/p')
    [[ -n $found && $(readlink -f "$found") == $(readlink -f "$LIBDIR/libmoe.so.1") ]] \
        || fail "$1 runs with libmoe.so.1 from '${found}', not the package's $LIBDIR"
}

echo
echo "-- examples/fit_gaussian.c against the installed package (pkg-config, no paths)"
[[ $(pkg-config --modversion moe) == "$VERSION" ]] || fail "pkg-config moe: $(pkg-config --modversion moe)"
# shellcheck disable=SC2046 # word splitting of pkg-config output is intended
cc -std=c11 -Wall -Wextra examples/fit_gaussian.c $(pkg-config --cflags --libs moe) -lm \
    -o "$WORK/fit_gaussian"
check_runs_with_package "$WORK/fit_gaussian"
# The program reads examples/data/regimes.csv relative to the top of the source tree, and
# saves a model in TMPDIR.
TMPDIR=$WORK "$WORK/fit_gaussian"

echo
echo "-- /usr/bin/moe fit, as installed"
check_runs_with_package /usr/bin/moe
[[ -f /usr/share/man/man1/moe.1.gz ]] || fail "no manual page moe(1)"
/usr/bin/moe fit examples/data/regimes.csv --response response -k 2 -o "$WORK/x.moe"
/usr/bin/moe info "$WORK/x.moe" >/dev/null

if [[ $WITH_MPI -eq 1 ]]; then
    echo
    echo "-- dpkg -L libmoe-mpi-dev"
    dpkg -L libmoe-mpi-dev | tee "$WORK/libmoe-mpi-dev.list"
    for path in /usr/include/moe/mpi.h "$LIBDIR/libmoe_mpi.so" "$LIBDIR/pkgconfig/moe-mpi.pc" \
                "$LIBDIR/cmake/moe/moeMpiTargets.cmake"; do
        grep -qx "$path" "$WORK/libmoe-mpi-dev.list" || fail "libmoe-mpi-dev lacks $path"
    done
    bash tests/check_library_version.sh "$LIBDIR/libmoe_mpi.so.1" lib/mpi/libmoe_mpi.map MOE_MPI_
    echo
    echo "-- find_package(moe COMPONENTS mpi) against /usr"
    bash tests/check_find_package.sh /usr mpi
    echo
    echo "-- mpicc with pkg-config moe-mpi; mpirun -np 2 /usr/bin/moe-mpi fit"
    # shellcheck disable=SC2046
    mpicc tests/find_package/mpi_report.c $(pkg-config --cflags --libs moe-mpi) \
        -o "$WORK/mpi_report"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpiexec -n 1 "$WORK/mpi_report"
    [[ -f /usr/share/man/man1/moe-mpi.1.gz ]] || fail "no manual page moe-mpi(1)"
    mpiexec --oversubscribe -n 2 /usr/bin/moe-mpi fit examples/data/regimes.csv \
        --response response -k 2 -o "$WORK/mpi.moe" >/dev/null
    /usr/bin/moe info "$WORK/mpi.moe" >/dev/null
    echo "moe-mpi fit on 2 ranks: saved and read back"
else
    echo "-- the MPI packages were not built (no MPI, or the pkg.libmoe.nompi profile)"
    bash tests/check_find_package.sh /usr no-mpi
fi

echo
echo "-- apt-get purge ${built[*]}"
apt-get purge -y -q "${built[@]}" </dev/null >"$WORK/purge.log" 2>&1 \
    || { cat "$WORK/purge.log"; fail "apt-get purge failed"; }
PURGED=1
left=$(installed_packages)
[[ -z $left ]] || fail "still installed after the purge: $left"
# Nothing of libmoe may be left: libraries, headers, pkg-config and CMake files, tools, pages.
leftovers=$(compgen -G "/usr/lib/*/libmoe*" || true; compgen -G "/usr/lib/*/pkgconfig/moe*.pc" || true
            compgen -G "/usr/lib/*/cmake/moe" || true; compgen -G "/usr/share/man/man1/moe*" || true
            compgen -G "/usr/share/doc/*moe*" || true
            for path in /usr/include/moe /usr/bin/moe /usr/bin/moe-mpi; do
                [[ -e $path ]] && echo "$path"; done; true)
[[ -z $leftovers ]] || fail "left after the purge: $leftovers"
echo "purged: nothing of libmoe is left in /usr"
echo PASS
