"""Compiled kernels of linclass (Cython, GIL released, no bounds checks).

Nothing in here validates its input: the Python layer (``linclass._validation``)
hands over C-contiguous arrays of the exact dtype with every index in range.
"""
