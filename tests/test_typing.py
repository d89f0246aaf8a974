"""The package is typed (PEP 561): ``py.typed`` shipped, and the main entry
points carry annotations that resolve."""
import inspect
import os
import typing

import pytest

import linclass
from linclass import base, cli, persistence
from linclass.linear import LinearSVC
from linclass.linear._common import LinearDecisionMixin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENTRY_POINTS = [
    base.BaseEstimator.get_params, base.BaseEstimator.set_params, base.BaseEstimator.save,
    base.ClassifierMixin.score, base.RegressorMixin.score, base.TransformerMixin.fit_transform,
    persistence.load, persistence.save_model, cli.main, cli.build_parser,
    LinearDecisionMixin.predict, LinearDecisionMixin.decision_function, LinearSVC.fit,
]


def test_py_typed_marker_is_in_the_package():
    assert os.path.isfile(os.path.join(os.path.dirname(linclass.__file__), "py.typed"))


def test_py_typed_is_package_data_and_in_the_sdist():
    tomllib = pytest.importorskip("tomllib")
    pyproject = os.path.join(ROOT, "pyproject.toml")
    if not os.path.exists(pyproject):
        pytest.skip("not a source checkout (installed package under test)")
    with open(pyproject, "rb") as fh:
        config = tomllib.load(fh)
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["linclass"]
    with open(os.path.join(ROOT, "MANIFEST.in")) as fh:
        assert "linclass/py.typed" in fh.read()


@pytest.mark.parametrize("function", ENTRY_POINTS, ids=lambda f: f.__qualname__)
def test_entry_points_are_annotated(function):
    hints = typing.get_type_hints(function)        # raises if an annotation does not resolve
    params = [p for p in inspect.signature(function).parameters.values()
              if p.name != "self" and p.kind not in (p.VAR_KEYWORD,)]
    assert "return" in hints, function.__qualname__
    missing = [p.name for p in params if p.name not in hints]
    assert not missing, "%s: no annotation for %s" % (function.__qualname__, missing)


# Methods of files another helper owns at the time of writing (linclass/sequence):
# listed so that the test catches every new undocumented public method.
KNOWN_UNDOCUMENTED = {("HMM", "predict_single"), ("HMM", "predict_marginals_single")}


def test_every_public_method_of_the_public_models_has_a_docstring():
    from linclass._registry import PUBLIC_MODELS
    missing = []
    for name in PUBLIC_MODELS:
        cls = getattr(linclass, name)
        assert inspect.getdoc(cls), name
        for attr, member in inspect.getmembers(cls):
            if attr.startswith("_") or not callable(member) or isinstance(member, type):
                continue
            if not inspect.getdoc(member) and (name, attr) not in KNOWN_UNDOCUMENTED:
                missing.append("%s.%s" % (name, attr))
    assert not missing, missing
