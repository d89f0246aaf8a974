"""Model families known to the ``linclass`` command line.

Each entry: name -> (``module:Class``, task, one-line description).  The task
decides how ``train``/``predict``/``evaluate`` read data:

* ``"sequence"`` -- CoNLL / CoNLL-U files, one label sequence per sentence;
* ``"flat"`` -- svmlight/libsvm files, one label per row;
* ``"ranking"`` -- svmlight files with ``qid:``, graded relevance labels.

Model families add themselves here as they land.
"""

MODELS = {
    "tagger": ("linclass.sequence:SequenceTagger", "sequence",
               "linear-chain tagger (averaged structured perceptron or structural SVM)"),
    "perceptron": ("linclass.perceptron:Perceptron", "flat",
                   "perceptron (online or batch; averaged or voted), binary and multi-class"),
    "linear-svc": ("linclass.svm:LinearSVC", "flat",
                   "linear SVM, L1/L2 loss, dual coordinate descent (or Pegasos), one-vs-rest"),
    "crammer-singer": ("linclass.multiclass:CrammerSingerSVC", "flat",
                       "Crammer-Singer multi-class linear SVM (sequential dual method)"),
    "weston-watkins": ("linclass.multiclass:WestonWatkinsSVC", "flat",
                       "Weston-Watkins multi-class linear SVM (dual block coordinate descent)"),
    "least-squares": ("linclass.least_squares:LeastSquaresClassifier", "flat",
                      "least-squares classification from the normal equations"),
    "ridge": ("linclass.least_squares:RidgeClassifier", "flat",
              "ridge classification (Cholesky, conjugate gradients for sparse X)"),
    "lasso": ("linclass.least_squares:LassoClassifier", "flat",
              "L1-regularised least-squares classification (coordinate descent)"),
    "multiclass-svm": ("linclass.multiclass_svm:MultiClassSVM", "flat",
                       "multi-class SVM as a structure (one-hot, class descriptions or a "
                       "taxonomy), cutting-plane structural SVM"),
    "svc": ("linclass.svc:SVC", "flat",
            "kernel SVM by SMO (linear/poly/rbf/sigmoid; one-vs-one; Platt probabilities)"),
    "kernel-perceptron": ("linclass.kernel_perceptron:KernelPerceptron", "flat",
                          "kernel (dual) perceptron, multi-class, averaged, optional SV budget"),
    "sgd": ("linclass.sgd:SGDClassifier", "flat",
            "linear classifier by SGD on a margin loss (hinge, squared hinge, logistic, "
            "exponential, squared, perceptron, modified Huber; L2/L1/elastic net; ASGD)"),
    "multinomial-nb": ("linclass.naive_bayes:MultinomialNB", "flat",
                       "multinomial naive Bayes (counts; Lidstone or m-estimate smoothing)"),
    "bernoulli-nb": ("linclass.naive_bayes:BernoulliNB", "flat",
                     "multivariate Bernoulli naive Bayes (binary features)"),
    "logistic": ("linclass.logistic:LogisticRegression", "flat",
                 "logistic regression, binary/multinomial, Gaussian or Laplace prior (L-BFGS, TRON)"),
    "maxent": ("linclass.maxent:MaxEnt", "flat",
               "maximum entropy classifier (GIS, IIS or L-BFGS; Gaussian prior)"),
    "mixture-nb": ("linclass.mixture_nb:MixtureNB", "flat",
                   "naive Bayes with mixture class-conditionals (multinomial/Bernoulli, EM)"),
    "ranksvm": ("linclass.ranking:RankSVM", "ranking",
                "ranking SVM on pairwise preferences within queries (O(n log n) truncated Newton)"),
}


def resolve(name):
    """(class, task) of a registered model name; ValueError lists the choices."""
    import importlib
    try:
        target, task, _ = MODELS[name]
    except KeyError:
        raise ValueError("unknown model %r; available: %s" % (name, ", ".join(sorted(MODELS))))
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls), task
