"""Feature extraction for sequence labelling: linclass FeatureTemplate vs the python-crfsuite path.

The peer is the feature extraction of CRFsuite's ``example/chunking.py``
(``crfutils.apply_templates`` plus ``__BOS__``/``__EOS__``), the code the
python-crfsuite examples run before ``Trainer.append``: it builds each
token's attribute strings in Python.  linclass maps the same template to
integer feature ids (a CSR matrix).  Both produce the same features (the
quality columns give the number of distinct features and of feature
occurrences, which must agree).  The peer's time does not include turning
its strings into ids (``Trainer.append``), so the ratio is conservative.

Run directly: ``python benchmarks/bench_features.py [--quick]``.
"""
import gzip
import pathlib
import statistics
import sys
import time

# CRFsuite example/chunking.py templates, written as in the example.
CHUNKING_TEMPLATES = (
    (('w', -2), ), (('w', -1), ), (('w', 0), ), (('w', 1), ), (('w', 2), ),
    (('w', -1), ('w', 0)), (('w', 0), ('w', 1)),
    (('pos', -2), ), (('pos', -1), ), (('pos', 0), ), (('pos', 1), ), (('pos', 2), ),
    (('pos', -2), ('pos', -1)), (('pos', -1), ('pos', 0)), (('pos', 0), ('pos', 1)),
    (('pos', 1), ('pos', 2)),
    (('pos', -2), ('pos', -1), ('pos', 0)), (('pos', -1), ('pos', 0), ('pos', 1)),
    (('pos', 0), ('pos', 1), ('pos', 2)),
)


def read_conll2000(path):
    """Sentences of (word, pos) tuples from a ``word POS chunk`` file."""
    sentences, current = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            if fields:
                current.append((fields[0], fields[1]))
            elif current:
                sentences.append(current)
                current = []
    if current:
        sentences.append(current)
    return sentences


def crfsuite_example_features(sentences):
    """The peer: crfutils.apply_templates + BOS/EOS, per sentence, as string lists."""
    out = []
    for sentence in sentences:
        X = [{"w": w, "pos": p, "F": []} for w, p in sentence]
        n = len(X)
        for template in CHUNKING_TEMPLATES:
            name = '|'.join(['%s[%d]' % (f, o) for f, o in template])
            for t in range(n):
                values = []
                for field, offset in template:
                    p = t + offset
                    if p < 0 or p >= n:
                        values = []
                        break
                    values.append(X[p][field])
                if values:
                    X[t]['F'].append('%s=%s' % (name, '|'.join(values)))
        if X:
            X[0]['F'].append('__BOS__')
            X[-1]['F'].append('__EOS__')
        out.append([x['F'] for x in X])
    return out


def _median_time(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _peer_quality(features):
    distinct = set()
    total = 0
    for sentence in features:
        for attrs in sentence:
            distinct.update(attrs)
            total += len(attrs)
    return len(distinct), total


def run(quick, data_dir):
    """Benchmark rows (see benchmarks/README or the common brief for the keys)."""
    from linclass.features import CRFSUITE_CHUNKING, FeatureTemplate
    data_dir = pathlib.Path(data_dir)
    train_path = data_dir / "conll2000_chunking" / "train.txt.gz"
    test_path = data_dir / "conll2000_chunking" / "test.txt.gz"
    base = dict(peer="python-crfsuite example feature extraction (crfutils, Python strings)")
    if not train_path.exists():
        return [dict(base, task="features: CRFsuite chunking template", data="conll2000",
                     peer_seconds=None, linclass_seconds=None, ratio=None,
                     peer_quality=None, linclass_quality=None,
                     note="data not found at %s" % train_path)]
    train = read_conll2000(train_path)
    test = read_conll2000(test_path)
    repeats = 3 if quick else 7
    rows = []
    n_train_tokens = sum(map(len, train))

    # fit_transform on train (vocabulary built from scratch every repeat)
    peer_s, peer_feats = _median_time(lambda: crfsuite_example_features(train), repeats)
    peer_distinct, peer_total = _peer_quality(peer_feats)
    del peer_feats
    ft = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"))
    lin_s, (X, _) = _median_time(lambda: ft.fit_transform(train), repeats)
    rows.append(dict(base, task="features: chunking template fit_transform",
                     data="conll2000 train (%d sentences, %d tokens)" % (len(train),
                                                                         n_train_tokens),
                     peer_seconds=peer_s, linclass_seconds=lin_s, ratio=peer_s / lin_s,
                     peer_quality="%d features, %d occurrences" % (peer_distinct, peer_total),
                     linclass_quality="%d features, %d occurrences" % (X.shape[1], X.nnz)))

    # transform of the test set with the fitted vocabulary
    peer_s, _ = _median_time(lambda: crfsuite_example_features(test), repeats)
    lin_s, (Xt, _) = _median_time(lambda: ft.transform(test), repeats)
    rows.append(dict(base, task="features: chunking template transform (known features)",
                     data="conll2000 test (%d tokens)" % sum(map(len, test)),
                     peer_seconds=peer_s, linclass_seconds=lin_s, ratio=peer_s / lin_s,
                     peer_quality=None,
                     linclass_quality="%d occurrences of known features" % Xt.nnz))

    # hashing mode (no vocabulary)
    peer_s, _ = _median_time(lambda: crfsuite_example_features(train), repeats)
    fh = FeatureTemplate(CRFSUITE_CHUNKING, ("w", "pos"), n_hash=2 ** 20)
    lin_s, (Xh, _) = _median_time(lambda: fh.fit_transform(train), repeats)
    rows.append(dict(base, task="features: chunking template, hashing n_hash=2**20",
                     data="conll2000 train", peer_seconds=peer_s, linclass_seconds=lin_s,
                     ratio=peer_s / lin_s, peer_quality=None,
                     linclass_quality="%d stored values" % Xh.nnz))
    return rows


if __name__ == "__main__":
    here = pathlib.Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    import os
    data = pathlib.Path(os.environ.get("LINCLASS_DATA", here.parent / "shared" / "data"))
    for row in run("--quick" in sys.argv, data):
        print(row)
