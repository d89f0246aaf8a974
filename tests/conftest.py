"""Test-suite settings.

The benchmark data lives next to the checkout (``../shared/data``) and is
never installed with the package, so ``linclass.datasets.data_home()`` cannot
find it from an installed (non-editable) linclass.  When ``LINCLASS_DATA`` is
not set, point it at the checkout's neighbour; tests that need the data skip
with a reason when it is absent.
"""
import os
import pathlib

_CHECKOUT_DATA = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"

if not os.environ.get("LINCLASS_DATA") and _CHECKOUT_DATA.is_dir():
    os.environ["LINCLASS_DATA"] = str(_CHECKOUT_DATA)
