"""Compiled kernels of linclass (Cython, GIL released, no bounds checks).

Nothing in here validates its input: the Python layer (``linclass._validation``)
hands over C-contiguous arrays of the exact dtype with every index in range.
One ``.pyx`` per algorithm family; what several share is in ``.pxd`` files.
May import: nothing of linclass but its own ``.pxd`` files (no Python objects
in inner loops).
"""
import importlib.util as _util
import os as _os


def __getattr__(name):
    # reached by ``from linclass._core import _x`` only when the compiled module
    # could not be imported: say why instead of "cannot import name"
    source = _os.path.join(_os.path.dirname(__file__), name + ".pyx")
    if name.startswith("_") and _os.path.exists(source):
        if _util.find_spec(__name__ + "." + name) is None:
            raise ImportError(
                "linclass._core.%s is not compiled: this linclass comes from a source tree "
                "whose Cython core was never built (%s). Install it with `pip install .` "
                "(or `pip install -e .`), or build in place with "
                "`python setup.py build_ext --inplace`, and run Python from outside the "
                "source tree." % (name, _os.path.dirname(__file__)), name=__name__ + "." + name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
