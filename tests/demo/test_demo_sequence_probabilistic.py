"""The HMM / CRF demo section runs on the bundled data and its models learn."""
from linclass.demo.sequence import demo_crf_hmm


def test_demo_crf_hmm_quick(capsys):
    hmm_acc, crf_acc, err_low, err_all = demo_crf_hmm(quick=True)
    out = capsys.readouterr().out
    assert "HMM" in out and "CRF" in out
    assert 0.6 < hmm_acc < crf_acc          # the discriminative model wins
    assert crf_acc > 0.78
    assert err_low > 2 * err_all            # low marginal confidence flags the errors
