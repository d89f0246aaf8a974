"""The ERM demo runs on generated data and its models learn."""
from linclass.demo.erm import demo_erm


def test_demo_erm_quick(capsys):
    results = dict((name, quality) for name, quality, _ in demo_erm(quick=True))
    assert results["SGD hinge"] > 0.9
    assert results["SGD exponential"] > 0.9
    assert results["MercerMap(m=50) + LinearSVC"] > results["LinearSVC on raw inputs"] + 0.2
    assert results["lasso (coordinate descent)"] > 0.95
    assert "Mercer map" in capsys.readouterr().out
