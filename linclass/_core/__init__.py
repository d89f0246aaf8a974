"""Compiled kernels of linclass (Cython, GIL released, no bounds checks).

Nothing in here validates its input: the Python layer (``linclass._validation``)
hands over C-contiguous arrays of the exact dtype with every index in range.
One ``.pyx`` per algorithm family; what several share is in ``.pxd`` files.
May import: nothing of linclass but its own ``.pxd`` files (no Python objects
in inner loops).
"""
