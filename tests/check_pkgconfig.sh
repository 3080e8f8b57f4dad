#!/usr/bin/env bash
# What a user of an installed libmoe gets from pkg-config.
#
#   check_pkgconfig.sh PREFIX SOURCE_DIR CC [CFLAG ...]
#
# PREFIX holds libmoe as `cmake --install` put it there; SOURCE_DIR is the
# source tree (for README.md and examples/); CC and the flags build the
# examples/fit_gaussian.c program. Fails if
#   - moe.pc gives anything but linker arguments (-L, -l, -Wl,, paths) as
#     libraries: a compiler flag such as clang's -fopenmp=libomp breaks gcc;
#   - with libmoe.so installed, `pkg-config --cflags --libs moe` fails, or its
#     program does not build or run, while no other module's .pc file is
#     visible (a shared link needs neither openblas.pc nor lapacke.pc);
#   - with libmoe.so and libmoe.a installed, the README's static command
#     links libmoe.so (readelf -d) or its program does not run;
#   - with only libmoe.a installed, `pkg-config --static --cflags --libs moe`
#     links libmoe.so or its program does not run.
set -euo pipefail
export LC_ALL=C

if [[ $# -lt 3 ]]; then
    echo "usage: $0 PREFIX SOURCE_DIR CC [CFLAG ...]" >&2
    exit 2
fi
prefix=$1
source_dir=$2
cc=$3
shift 3
cflags=("$@")

pcfile=$(find "$prefix" -path '*/pkgconfig/moe.pc' -print -quit)
if [[ -z $pcfile ]]; then
    echo "FAIL: no pkgconfig/moe.pc under $prefix" >&2
    exit 1
fi
pcdir=$(dirname "$pcfile")
libdir=$(dirname "$pcdir")
work=$(mktemp -d "${TMPDIR:-/tmp}/moe-pkgconfig.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() {
    echo "FAIL: $*"
    status=1
}

# The program, run from the source tree where it finds the bundled data.
run() {
    local program=$1 what=$2
    if (cd "$source_dir" && LD_LIBRARY_PATH="$libdir" "$program" >"$work/out.txt" 2>&1); then
        echo "ok: $what runs"
    else
        cat "$work/out.txt"
        fail "$what does not run"
    fi
}

links_shared_libmoe() {
    readelf -d "$1" | grep -q 'NEEDED.*libmoe\.so'
}

echo "moe.pc: $pcfile"
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

# shellcheck disable=SC2046 # the word splitting of pkg-config output is intended
for word in $(pkg-config --static --libs moe); do
    case $word in
        -L* | -l* | -Wl,* | /*) ;;
        *) fail "moe.pc gives '$word' among the libraries (only linker arguments belong there)" ;;
    esac
done

if [[ -e $libdir/libmoe.so ]]; then
    # Only moe.pc is visible: PKG_CONFIG_LIBDIR replaces the system directories.
    hidden=(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$pcdir")
    if "${hidden[@]}" pkg-config --exists openblas 2>/dev/null; then
        fail "could not hide openblas.pc from pkg-config"
    fi
    if flags=$("${hidden[@]}" pkg-config --cflags --libs moe 2>"$work/err.txt"); then
        echo "ok: pkg-config --cflags --libs moe without openblas.pc: $flags"
        # shellcheck disable=SC2086
        if "$cc" -std=c11 "${cflags[@]}" "$source_dir/examples/fit_gaussian.c" $flags -lm \
            -o "$work/shared"; then
            run "$work/shared" "the shared build"
        else
            fail "the shared build does not link"
        fi
    else
        cat "$work/err.txt"
        fail "pkg-config --cflags --libs moe needs more than moe.pc"
    fi
fi

if [[ -e $libdir/libmoe.a && -e $libdir/libmoe.so ]]; then
    # The README's command, word for word.
    readme_link="\$(pkg-config --static --libs moe | sed 's/-lmoe /-Wl,-Bstatic -lmoe -Wl,-Bdynamic /')"
    if ! grep -qF -- "$readme_link" "$source_dir/README.md"; then
        fail "README.md no longer shows the static command this script checks"
    fi
    # shellcheck disable=SC2046
    if "$cc" -std=c11 "${cflags[@]}" "$source_dir/examples/fit_gaussian.c" \
        $(pkg-config --static --cflags moe) \
        $(pkg-config --static --libs moe | sed 's/-lmoe /-Wl,-Bstatic -lmoe -Wl,-Bdynamic /') \
        -o "$work/static"; then
        if links_shared_libmoe "$work/static"; then
            fail "the README's static command linked libmoe.so"
        else
            echo "ok: the README's static command links libmoe.a"
        fi
        run "$work/static" "the static build"
    else
        fail "the README's static command does not link"
    fi
elif [[ -e $libdir/libmoe.a ]]; then
    # shellcheck disable=SC2046
    if "$cc" -std=c11 "${cflags[@]}" "$source_dir/examples/fit_gaussian.c" \
        $(pkg-config --static --cflags --libs moe) -lm -o "$work/static"; then
        if links_shared_libmoe "$work/static"; then
            fail "a static-only install linked libmoe.so"
        fi
        run "$work/static" "the static-only build"
    else
        fail "pkg-config --static --cflags --libs moe does not link"
    fi
fi

if ((status == 0)); then
    echo "PASS"
fi
exit $status
