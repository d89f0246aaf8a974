"""Demo section: a POS tagger on the UD English EWT slice shipped with linclass."""
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
