"""The structural SVM sequence tagger next to the averaged perceptron on CoNLL-2000.

Both are linclass: the "peer" column is the averaged structured perceptron
(10 epochs, the fused Cython epoch), the "linclass" column the structural SVM
at its defaults (block-coordinate Frank--Wolfe, fused Cython passes, margin
rescaling, Hamming loss, loss-augmented Viterbi, C=1, at least 30 passes).  ``--quick`` trains on the first 1,000 sentences.
"""
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402
from bench_sequence import EPOCHS, _ef1, _read  # noqa: E402

from linclass.sequence import SequenceTagger  # noqa: E402

NOTES = ["SSVM: `SequenceTagger(trainer='ssvm')` at its defaults (BCFW); perceptron: "
         "`SequenceTagger(max_iter=%d)`; both with the CRFsuite chunking template; F1 on the "
         "CoNLL-2000 test set" % EPOCHS]


def case_ssvm(data_dir, quick, rows, repeat):
    folder = data_dir / "conll2000_chunking"
    Xtr, Ytr = _read(folder / "train.txt.gz", (0, 1), 2)
    Xte, Yte = _read(folder / "test.txt.gz", (0, 1), 2)
    if quick:
        Xtr, Ytr = Xtr[:1000], Ytr[:1000]
    t0 = time.perf_counter()
    svm = SequenceTagger(features="chunking", trainer="ssvm", random_state=0).fit(Xtr, Ytr)
    t_svm = time.perf_counter() - t0
    t0 = time.perf_counter()
    per = SequenceTagger(features="chunking", max_iter=EPOCHS, random_state=0).fit(Xtr, Ytr)
    t_per = time.perf_counter() - t0
    rows.append(_harness.make_row(
        "SSVM vs perceptron tagger", "CoNLL-2000 (%d sent)" % len(Xtr), "linclass perceptron",
        t_per, t_svm, _ef1(Yte, per.predict(Xte)), _ef1(Yte, svm.predict(Xte)),
        note="peer column = linclass averaged perceptron (10 ep); linclass column = "
             "structural SVM at its defaults (BCFW, C=1, >= 30 passes)"))



def run(quick, data_dir):
    rows = []
    case_ssvm(pathlib.Path(data_dir), quick, rows, 1)
    return rows
