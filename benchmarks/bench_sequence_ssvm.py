"""The structural SVM sequence tagger next to the averaged perceptron on CoNLL-2000
(chunking) and CoNLL-2002 (Spanish and Dutch NER).

Both are linclass: the "peer" column is the averaged structured perceptron
(10 epochs, the fused Cython epoch), the "linclass" column the structural SVM
at its defaults (block-coordinate Frank--Wolfe with weighted averaging, fused
Cython passes ``_core._bcfw.chain_pass``, margin rescaling, Hamming loss,
loss-augmented Viterbi, C=0.1, stop at a duality gap of 0.01 per training token).
Times are process CPU seconds of ``fit`` (feature extraction included), one
run each.  ``--quick`` trains on the first 1,000 sentences of CoNLL-2000 only.
"""
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402
from bench_sequence import EPOCHS, _ef1, _read  # noqa: E402

from linclass.sequence import SequenceTagger  # noqa: E402

NOTES = ["SSVM: `SequenceTagger(trainer='ssvm')` at its defaults (BCFW with averaging, C=0.1, "
         "tol=0.01 duality gap per training token); perceptron: "
         "`SequenceTagger(max_iter=%d)`; chunking template on CoNLL-2000, `ner` template on "
         "CoNLL-2002 (word + POS); F1 on the test sets (CoNLL-2002: testb); times are CPU "
         "seconds of fit" % EPOCHS]


def _fit_cpu(model, X, Y):
    t0 = time.process_time()
    model.fit(X, Y)
    return time.process_time() - t0


def _pair(rows, task, data, Xtr, Ytr, Xte, Yte, features):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svm = SequenceTagger(features=features, trainer="ssvm", random_state=0)
        t_svm = _fit_cpu(svm, Xtr, Ytr)
    per = SequenceTagger(features=features, max_iter=EPOCHS, random_state=0)
    t_per = _fit_cpu(per, Xtr, Ytr)
    gap = svm.history_[len(svm.history_) - 1].get("gap") if svm.history_ else None
    obj = svm.history_[len(svm.history_) - 1].get("objective") if svm.history_ else None
    rows.append(_harness.make_row(
        task, data, "linclass perceptron", t_per, t_svm, _ef1(Yte, per.predict(Xte)),
        _ef1(Yte, svm.predict(Xte)),
        note="peer column = linclass averaged perceptron (%d ep); linclass column = "
             "structural SVM at its defaults (BCFW, C=%g, %d passes, duality gap per token %s, "
             "relative %s%s)" % (EPOCHS, svm.C, svm.n_iter_ - 1,
                        "%.4f" % (gap / (svm.C * sum(map(len, Ytr)))) if gap is not None
                        else "n/a",
                        "%.3f" % (gap / obj) if gap is not None and obj else "n/a",
                        "; ConvergenceWarning" if caught else "")))


def case_ssvm(data_dir, quick, rows, repeat):
    folder = data_dir / "conll2000_chunking"
    Xtr, Ytr = _read(folder / "train.txt.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "test.txt.gz", (0, 1), 2)
    if quick:
        Xtr, Ytr = Xtr[:1000], Ytr[:1000]
    _pair(rows, "SSVM vs perceptron tagger (chunking)", "CoNLL-2000 (%d sent)" % len(Xtr),
          Xtr, Ytr, Xte, Yte, "chunking")
    if quick:
        return
    for lang in ("esp", "ned"):
        folder = data_dir / "conll2002_ner"
        Xtr, Ytr = _read(folder / ("%s.train.gz" % lang), (0, 1), 2)
        Xte, Yte = _read(folder / ("%s.testb.gz" % lang), (0, 1), 2)
        _pair(rows, "SSVM vs perceptron tagger (NER)", "CoNLL-2002 %s (%d sent)"
              % (lang, len(Xtr)), Xtr, Ytr, Xte, Yte, "ner")


def run(quick, data_dir):
    rows = []
    case_ssvm(pathlib.Path(data_dir), quick, rows, 1)
    return rows
