"""Build hooks of the moe wheel: the metadata is pyproject.toml's; this file only builds
libmoe's C core with CMake and puts libmoe.so.1 inside the package, so that
`pip install bindings/python` works on a machine without libmoe.

The library comes from the source tree this directory belongs to (../..): the wheel is built
from a libmoe checkout, not from an sdist (an sdist would have to carry the whole C tree).

Environment:
  MOE_BUNDLE_LIBMOE=0   no C build: a pure-Python package over an installed libmoe.so.1
                        (what a distribution that packages libmoe itself wants)
  MOE_CMAKE_ARGS        further arguments of the CMake configure step (split on spaces)
  CMAKE_BUILD_PARALLEL_LEVEL  the build's jobs (default: every core)
"""
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70 has its own bdist_wheel; before, it is the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
SONAME = "libmoe.so.1"


def bundling():
    return os.environ.get("MOE_BUNDLE_LIBMOE", "1").strip().lower() not in ("0", "off", "no",
                                                                            "false")


class BinaryDistribution(Distribution):
    """A distribution with a compiled part: setuptools then installs it into platlib and the
    wheel is not marked pure."""

    def has_ext_modules(self):
        return bundling()


class BuildWithLibmoe(build_py):
    """build_py, then libmoe built by CMake in build_temp and its libmoe.so.1 copied into the
    package (moe/_lib.py loads it from there by path, before any installed copy)."""

    def run(self):
        super().run()
        if not bundling():
            return
        if not (SOURCE / "CMakeLists.txt").is_file() or not (SOURCE / "lib").is_dir():
            raise SystemExit(f"moe: libmoe's C sources are not at {SOURCE}: build the wheel from "
                             "a libmoe source tree (pip install bindings/python), or set "
                             "MOE_BUNDLE_LIBMOE=0 for a package over an installed libmoe")
        build = self.get_finalized_command("build")
        # build_temp is under bindings/python/build/ (ignored by git): the source tree stays
        # clean, and a second pip install reuses the CMake tree instead of building anew.
        tree = Path(build.build_temp).resolve() / "libmoe"
        cache = tree / "CMakeCache.txt"
        if cache.is_file() and f"CMAKE_HOME_DIRECTORY:INTERNAL={SOURCE}\n" not in \
                cache.read_text(errors="replace"):
            shutil.rmtree(tree)  # a tree configured for another checkout: CMake refuses it
        tree.mkdir(parents=True, exist_ok=True)
        cmake = shutil.which("cmake")
        if cmake is None:
            raise SystemExit("moe: building libmoe needs cmake, a C compiler, OpenBLAS and "
                             "LAPACKE (Debian: apt-get install cmake build-essential "
                             "libopenblas-dev liblapacke-dev)")
        # The library alone: no tests, benchmarks, tool (libcsv) or MPI library.
        configure = [cmake, "-S", str(SOURCE), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                     "-DMOE_BUILD_SHARED=ON", "-DMOE_BUILD_STATIC=OFF", "-DMOE_BUILD_TESTS=OFF",
                     "-DMOE_BUILD_BENCH=OFF", "-DMOE_BUILD_PROGRAMS=OFF",
                     "-DMOE_BUILD_EXAMPLES=OFF", "-DMOE_BUILD_MPI=OFF"]
        configure += shlex.split(os.environ.get("MOE_CMAKE_ARGS", ""))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self.announce(f"building libmoe in {tree}", level=2)
        subprocess.run(configure, check=True)
        subprocess.run([cmake, "--build", str(tree), "--target", "moe", "-j", jobs], check=True)
        built = tree / SONAME
        if not built.exists():
            raise SystemExit(f"moe: the CMake build made no {built}")
        # The file itself (libmoe.so.1 is a symbolic link to libmoe.so.1.x.y): a wheel holds
        # no links. It keeps its SONAME and its DT_NEEDED on the system's OpenBLAS and LAPACKE.
        target = Path(self.build_lib) / "moe" / SONAME
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built.resolve(), target)
        os.chmod(target, 0o755)


class PlatformWheel(bdist_wheel):
    """A wheel for this platform (linux_x86_64) but any Python 3: the package has no
    extension module, it loads libmoe.so.1 with ctypes, so the interpreter's ABI is not
    involved."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = not bundling()

    def get_tag(self):
        python, abi, platform = super().get_tag()
        return ("py3", "none", platform) if bundling() else (python, abi, platform)


# The egg-info goes to the (ignored) build directory rather than next to setup.py.
(HERE / "build").mkdir(exist_ok=True)
setup(distclass=BinaryDistribution,
      cmdclass={"build_py": BuildWithLibmoe, "bdist_wheel": PlatformWheel},
      options={"egg_info": {"egg_base": "build"}})
