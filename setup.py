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
        super().build_extensions()


extensions = [
    Extension(
        "linclass._core." + os.path.splitext(os.path.basename(path))[0],
        [path],
        # headers next to the .pyx (the debug build compiles its C elsewhere)
        include_dirs=[os.path.join("linclass", "_core")],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("LINCLASS_DEBUG_BUILD", "1")] if DEBUG_BUILD else []),
    )
    for path in pyx_files
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=compiler_directives,
        # The debug build's C goes to its own folder (and is regenerated each
        # time), so the release C next to the .pyx files is never replaced by it.
        force=DEBUG_BUILD,
        build_dir=os.path.join("build", "cython-debug") if DEBUG_BUILD else None,
        quiet=True,
    ),
    cmdclass={"build_ext": BuildExt},
)
