"""Build description of linclass's compiled core.

Metadata, dependencies and extras live in ``pyproject.toml``; this file only
describes the Cython extensions: every ``linclass/_core/*.pyx`` becomes one
extension module ``linclass._core.<name>``.

Environment switches
--------------------
LINCLASS_DEBUG_BUILD=1
    Compile with Cython's boundscheck, wraparound, initializedcheck and
    nonecheck on, ``-O0 -g`` and C assertions enabled, and define the C macro
    ``LINCLASS_DEBUG_BUILD``.  What that checks, exactly:

    * indexing of typed memoryviews in ``.pyx`` code raises ``IndexError``
      (Cython's boundscheck);
    * accesses through raw pointers are *not* seen by boundscheck; the row
      accessor every matrix kernel uses (``rows_get`` in ``_core/_rows.pxd``)
      checks, under the macro, the row number, the row's ``indptr`` extent and
      every column index of the row against the matrix shape, and the other
      explicit ``debug_check_index`` calls (``_core/_debug.pxd``) check their
      index; a failed check prints ``linclass debug build: IndexError: ...``
      to stderr and aborts the process (the kernels are ``noexcept nogil``
      and cannot raise).  ``linclass._core._checks.DEBUG_BUILD`` tells which
      build is installed.

    Pointer arithmetic without such a call is unchecked in both builds: use
    AddressSanitizer for it (CONTRIBUTING.md).  The test suite is run
    against this build in CI.
"""
import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - pyproject.toml declares Cython
    sys.exit("setup.py: Cython>=3.0.10,<4 is required to build linclass "
             "(it is listed in pyproject.toml's build-system requirements)")

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG_BUILD = os.environ.get("LINCLASS_DEBUG_BUILD", "0") not in ("", "0")

pyx_files = sorted(os.path.relpath(p, HERE).replace(os.sep, "/") for p in
                   glob.glob(os.path.join(HERE, "linclass", "_core", "*.pyx")))
if not pyx_files:
    sys.exit("setup.py: no linclass/_core/*.pyx found; refusing to build a "
             "package without its compiled core")

compiler_directives = {
    "language_level": 3,
    "boundscheck": DEBUG_BUILD,
    "wraparound": DEBUG_BUILD,
    "initializedcheck": DEBUG_BUILD,
    "nonecheck": DEBUG_BUILD,
    # C semantics for / and %: kernels never rely on Python's rounding.
    "cdivision": True,
    "embedsignature": True,
}


# Extra release flags of single extensions (GCC and Clang).
#   -fno-trapping-math: the compiler may treat floating-point comparisons and
#   selects as free of side effects (no program of ours reads the IEEE
#   exception flags), so that it vectorises loops with branch-free selects,
#   such as _logistic_simd.h's exp and log1p.  It changes no value.
RELEASE_FLAGS = {
    "linclass._core._logistic": ["-fno-trapping-math"],
}


class BuildExt(build_ext):
    """Choose optimisation flags per compiler (no -march=native, no -ffast-math);
    compile the extensions in parallel, one job per CPU.

    Builds reuse ``build/``: an extension whose C file is older than its
    compiled module is not compiled again (setuptools' own check), so the
    README's second command (``pip install '.[test]'``, the same sources) only
    relinks nothing and copies.  A module compiled by the other flavour
    (release vs ``LINCLASS_DEBUG_BUILD``) must never be reused: the flavour of
    the last build is recorded in ``build_temp`` and a change forces a full
    compile."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self):
        flavour = "debug" if DEBUG_BUILD else "release"
        marker = os.path.join(self.build_temp, "linclass-build-flavour")
        try:
            with open(marker) as fh:
                previous = fh.read().strip()
        except OSError:
            previous = None
        if previous != flavour:
            self.force = True
        super().run()
        os.makedirs(self.build_temp, exist_ok=True)
        with open(marker, "w") as fh:
            fh.write(flavour)

    def build_extensions(self):
        ctype = self.compiler.compiler_type
        for ext in self.extensions:
            if ctype == "msvc":
                ext.extra_compile_args = ["/Od", "/Zi"] if DEBUG_BUILD else ["/O2"]
            else:
                # release: -g0 drops the debug information Python's own CFLAGS
                # ask for (it made up 80% of the installed size: 27 MB -> 5 MB)
                ext.extra_compile_args = (["-O0", "-g", "-UNDEBUG"] if DEBUG_BUILD
                                          else ["-O3", "-g0"])
                ext.extra_compile_args.append("-Wno-unreachable-code")
                if not DEBUG_BUILD:
                    ext.extra_compile_args += RELEASE_FLAGS.get(ext.name, [])
                if not DEBUG_BUILD and sys.platform.startswith("linux"):
                    # strip the symbol table at link time (the dynamic symbols
                    # Python imports, PyInit_*, stay): 6.9 MB -> 6.2 MB of .so
                    ext.extra_link_args = ["-Wl,--strip-all"]
        super().build_extensions()




def _cython_version_of(c_file):
    """The Cython version named in the first line of a generated release C file
    (None: no such file, or C generated for the debug build)."""
    try:
        with open(c_file, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    prefix = b"/* Generated by Cython "
    if not head.startswith(prefix) or b"LINCLASS_DEBUG_BUILD" in head:
        return None
    return head[len(prefix):].split(b" ")[0].decode("ascii", "replace")


def _reusable_c(pyx):
    """The release C file of ``pyx`` when it can be compiled as it is, else None.

    Cython's own freshness check also compares the C file with the ``.pxd``
    files Cython ships (``libc/math.pxd`` ...); pip builds in a fresh isolated
    environment whose Cython files are new each time, so every ``pip install .``
    regenerated and recompiled the whole core (the README's second command
    rebuilt everything the first had built).  Here a C file is reused when it
    was written by the running Cython and is newer than the ``.pyx``, every
    ``.pxd``/``.h`` of ``linclass/_core`` and this ``setup.py``.
    """
    from Cython import __version__ as cython_version
    c_file = os.path.splitext(pyx)[0] + ".c"
    if DEBUG_BUILD or _cython_version_of(os.path.join(HERE, c_file)) != cython_version:
        return None
    deps = [pyx, "setup.py"] + glob.glob(os.path.join(HERE, "linclass", "_core", "*.pxd")) \
        + glob.glob(os.path.join(HERE, "linclass", "_core", "*.h"))
    c_time = os.path.getmtime(os.path.join(HERE, c_file))
    if any(os.path.getmtime(os.path.join(HERE, d)) > c_time for d in deps):
        return None
    return c_file


extensions = [
    Extension(
        "linclass._core." + os.path.splitext(os.path.basename(path))[0],
        [_reusable_c(path) or path],
        # headers next to the .pyx (the debug build compiles its C elsewhere)
        include_dirs=[os.path.join("linclass", "_core")],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("LINCLASS_DEBUG_BUILD", "1")] if DEBUG_BUILD else []),
    )
    for path in pyx_files
]

stale = [ext for ext in extensions if ext.sources[0].endswith(".pyx")]
fresh = [ext for ext in extensions if not ext.sources[0].endswith(".pyx")]

setup(
    ext_modules=fresh + cythonize(
        stale,
        compiler_directives=compiler_directives,
        # The debug build's C goes to its own folder (and is regenerated each
        # time), so the release C next to the .pyx files is never replaced by it.
        force=DEBUG_BUILD,
        build_dir=os.path.join("build", "cython-debug") if DEBUG_BUILD else None,
        quiet=True,
    ),
    cmdclass={"build_ext": BuildExt},
)
