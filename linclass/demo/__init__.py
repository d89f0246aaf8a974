"""``linclass demo``: every family trained and evaluated on data shipped with the package.

One module per section -- ``sequence`` (POS tagger, HMM and CRF on the bundled
UD English slice), ``parsing`` (PCFG and discriminative parser), ``structured``
(alignment, collective classification), ``margin`` (perceptron, linear and
multi-class SVMs), ``kernel`` (SVC, kernel perceptron), ``erm`` (SGD, Mercer
map, ridge / lasso), ``probabilistic`` (naive Bayes, logistic regression,
MaxEnt), ``ranking`` (RankSVM from clicks).  Each section is a function
``demo_<name>(quick=False)`` that prints what it trains and measures.

May import any public linclass module; nothing imports from here but the CLI.
"""
import time


def _demos():
    from .erm import demo_erm
    from .kernel import demo_kernel
    from .margin import demo_margin
    from .parsing import demo_parsing
    from .structured import demo_alignment, demo_graph
    from .probabilistic import demo_probabilistic
    from .ranking import demo_ranking
    from .sequence import demo_crf_hmm, demo_pos_tagger
    return [demo_pos_tagger, demo_crf_hmm, demo_parsing, demo_alignment, demo_graph, demo_margin,
            demo_kernel, demo_erm, demo_probabilistic, demo_ranking]


def run_demo(quick=False):
    t0 = time.perf_counter()
    for demo in _demos():
        demo(quick=quick)
        print()
    print("demo finished in %.1fs" % (time.perf_counter() - t0))
    return 0
