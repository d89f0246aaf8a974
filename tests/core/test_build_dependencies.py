"""The Cython core compiles with nothing but Cython and a C compiler.

``pyproject.toml``'s build-system requires only setuptools, wheel and Cython:
pip builds the package in an isolated environment that has neither numpy nor
scipy, so a ``cimport`` from them (``scipy.linalg.cython_blas``,
``cimport numpy``) fails the install on a fresh machine even though an
in-place build in a development environment works.  This scan keeps them out.
"""
import pathlib
import re
import pytest

import linclass

CORE = pathlib.Path(linclass.__file__).resolve().parent / "_core"
SOURCES = sorted(CORE.glob("*.pyx")) + sorted(CORE.glob("*.pxd"))
CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport\b|cimport\s+([\w.]+))", re.M)
ALLOWED = (".", "linclass.", "libc.", "libcpp.", "cpython", "cython", "posix.")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_cimports_need_no_build_time_package(path):
    text = path.read_text()
    for match in CIMPORT.finditer(text):
        module = match.group(1) or match.group(2)
        assert module.startswith(ALLOWED), (
            "%s cimports from %r, which the isolated build environment does not have"
            % (path.name, module))


def test_build_requirements_are_only_the_build_tools():
    pyproject = pathlib.Path(linclass.__file__).resolve().parent.parent / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not a source checkout")
    tomllib = pytest.importorskip("tomllib")          # Python >= 3.11
    requires = tomllib.loads(pyproject.read_text())["build-system"]["requires"]
    names = {re.split(r"[<>=!\[ ]", r, maxsplit=1)[0].lower() for r in requires}
    assert names <= {"setuptools", "wheel", "cython"}, names
