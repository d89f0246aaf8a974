"""Demo section: a POS tagger on the UD English EWT slice shipped with linclass."""
import gc
import time
from collections import Counter, defaultdict


def _most_frequent_tag_baseline(train_X, train_Y, test_X, test_Y):
    counts = defaultdict(Counter)
    overall = Counter()
    for sent, tags in zip(train_X, train_Y):
        for tok, tag in zip(sent, tags):
            counts[tok[0]][tag] += 1
            overall[tag] += 1
    default = overall.most_common(1)[0][0]
    best = {w: c.most_common(1)[0][0] for w, c in counts.items()}
    n = correct = 0
    for sent, tags in zip(test_X, test_Y):
        for tok, tag in zip(sent, tags):
            n += 1
            correct += best.get(tok[0], default) == tag
    return correct / n


def demo_pos_tagger(quick=False):
    from ..datasets import load_bundled_ud_english
    from ..sequence.tagger import SequenceTagger
    train = load_bundled_ud_english("train")
    test = load_bundled_ud_english("test")

    def split(sentences):
        return ([[(w,) for w in s.column("form")] for s in sentences],
                [s.column("upos") for s in sentences])

    train_X, train_Y = split(train)
    test_X, test_Y = split(test)
    n_tok = sum(map(len, train_X))
    print("== POS tagging: UD English EWT slice shipped with linclass (CC BY-SA 4.0)")
    print("   train %d sentences / %d tokens, test %d sentences / %d tokens, %d UPOS tags"
          % (len(train_X), n_tok, len(test_X), sum(map(len, test_X)),
             len({t for s in train_Y for t in s})))
    epochs = 3 if quick else 10
    tagger = SequenceTagger(features="pos", max_iter=epochs, random_state=0)
    t0 = time.perf_counter()
    tagger.fit(train_X, train_Y)
    fit_s = time.perf_counter() - t0
    # Pay the interpreter's pending garbage-collection work (a full collection
    # that the objects built above make due) outside the timed call, as timeit
    # does: otherwise ~8 ms of collecting the data lists lands in "tagging".
    gc.collect()
    t0 = time.perf_counter()
    acc = tagger.score(test_X, test_Y)
    pred_s = time.perf_counter() - t0
    base = _most_frequent_tag_baseline(train_X, train_Y, test_X, test_Y)
    print("   averaged structured perceptron, %d epochs, %d features: trained in %.2fs "
          "(%.0f tokens/s incl. feature extraction)"
          % (tagger.n_iter_, tagger.n_features_, fit_s, epochs * n_tok / fit_s))
    print("   test token accuracy %.4f  (most-frequent-tag baseline %.4f); tagging %.0f "
          "tokens/s" % (acc, base, sum(map(len, test_X)) / pred_s))
    example = "The quick brown fox jumps over the lazy dog .".split()
    tags = tagger.predict([[(w,) for w in example]])[0]
    print("   " + " ".join("%s/%s" % wt for wt in zip(example, tags)))
    return acc


def demo_crf_hmm(quick=False):
    """The probabilistic taggers on the same data: a generative HMM, a CRF
    trained by L-BFGS, and the confidence the CRF's marginals give."""
    from ..datasets import load_bundled_ud_english
    from ..sequence import CRF, HMM
    train = load_bundled_ud_english("train")
    test = load_bundled_ud_english("test")
    if quick:
        train = train[:800]
    train_X = [s.column("form") for s in train]
    train_Y = [s.column("upos") for s in train]
    test_X = [s.column("form") for s in test]
    test_Y = [s.column("upos") for s in test]
    print("== Probabilistic taggers on the same UD English slice (%d training sentences)"
          % len(train_X))
    t0 = time.perf_counter()
    hmm = HMM().fit(train_X, train_Y)
    hmm_s = time.perf_counter() - t0
    hmm_acc = hmm.score(test_X, test_Y)
    print("   HMM (add-one smoothed counts, Viterbi): test accuracy %.4f, trained in %.2fs"
          % (hmm_acc, hmm_s))
    iterations = 15 if quick else 30
    t0 = time.perf_counter()
    crf = CRF(features="pos", c2=1.0, max_iterations=iterations).fit(train_X, train_Y)
    crf_s = time.perf_counter() - t0
    crf_acc = crf.score(test_X, test_Y)
    print("   CRF (L-BFGS, L2 c2=1, %d iterations): test accuracy %.4f, trained in %.2fs"
          % (crf.n_iter_, crf_acc, crf_s))
    marginals = crf.predict_marginals(test_X)
    predicted = crf.predict(test_X)
    confidence, wrong = [], []
    for ms, ps, gs in zip(marginals, predicted, test_Y):
        for m, p, g in zip(ms, ps, gs):
            confidence.append(m[p])
            wrong.append(p != g)
    order = sorted(range(len(confidence)), key=confidence.__getitem__)
    low = order[:len(order) // 10]
    err_low = sum(wrong[i] for i in low) / max(len(low), 1)
    err_all = sum(wrong) / max(len(wrong), 1)
    print("   error rate on the 10%% least confident tokens (CRF marginals): %.3f, overall %.3f"
          % (err_low, err_all))
    return hmm_acc, crf_acc, err_low, err_all
