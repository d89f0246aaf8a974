"""The model tables: the public models of ``linclass`` and the families the command line knows.

``PUBLIC_MODELS`` maps each name ``from linclass import <name>`` offers to the
package that defines it; ``linclass`` imports models on first use through it,
and :mod:`linclass.persistence` uses it as the allow-list of classes a model
file may name.

``MODELS`` are the model families known to the ``linclass`` command line.

Each entry: name -> (``module:Class``, task, one-line description).  The task
decides how ``train``/``predict``/``evaluate`` read data:

* ``"sequence"`` -- CoNLL / CoNLL-U files, one label sequence per sentence;
* ``"flat"`` -- svmlight/libsvm files, one label per row;
* ``"ranking"`` -- svmlight files with ``qid:``, graded relevance labels;
* ``"trees"`` -- bracketed (Penn Treebank) tree files; ``predict`` also reads
  plain text, one tokenised sentence per line.

Model families add themselves here as they land.
"""

# public model name -> family or task package exporting it (imported on first use,
# so that ``import linclass`` stays cheap)
PUBLIC_MODELS = {
    "SequenceTagger": "sequence",
    "StructuredPerceptron": "structured",
    "StructuredSVM": "structured",
    "MultiClassSVM": "joint",
    "FeatureTemplate": "features",
    "AmbiguityClasses": "features",
    "WordClusters": "features",
    "RankSVM": "ranking",
    "Perceptron": "linear",
    "LinearSVC": "linear",
    "CrammerSingerSVC": "linear",
    "WestonWatkinsSVC": "linear",
    "OneVsRestClassifier": "linear",
    "OneVsOneClassifier": "linear",
    "LeastSquaresClassifier": "linear",
    "RidgeClassifier": "linear",
    "LassoClassifier": "linear",
    "SVC": "kernels",
    "KernelPerceptron": "kernels",
    "SGDClassifier": "linear",
    "MercerMap": "kernels",
    "LinearRegression": "linear",
    "Ridge": "linear",
    "Lasso": "linear",
    "MixtureNB": "linear",
    "MultinomialNB": "linear",
    "BernoulliNB": "linear",
    "LogisticRegression": "linear",
    "MaxEnt": "linear",
    "AlignmentLearner": "alignment",
    "SubstitutionMatrix": "alignment",
    "CollectiveClassifier": "graph",
    "PCFG": "parsing",
    "DiscriminativeParser": "parsing",
    "CRF": "sequence",
    "HMM": "sequence",
    "GaussianNB": "linear",
    "KernelRidge": "kernels",
    "KernelRidgeClassifier": "kernels",
    "KernelLogisticRegression": "kernels",
    "KernelFunction": "kernels",
    "SumKernel": "kernels",
    "ProductKernel": "kernels",
    "ScaledKernel": "kernels",
    "NormalizedKernel": "kernels",
    "SpectrumKernel": "kernels",
    "SubsequenceKernel": "kernels",
    "CostSensitiveClassifier": "decision",
    "RejectOption": "decision",
    "ThresholdTuner": "decision",
    "PriorShiftClassifier": "decision",
    "CalibratedClassifier": "decision",
    "PosteriorCombiner": "decision",
    "KernelMultiClassSVM": "kernels",
}

# command-line model name -> (module:Class, task, description)
MODELS = {
    "tagger": ("linclass.sequence:SequenceTagger", "sequence",
               "linear-chain tagger (averaged structured perceptron or structural SVM)"),
    "perceptron": ("linclass.linear:Perceptron", "flat",
                   "perceptron (online or batch; averaged or voted), binary and multi-class"),
    "linear-svc": ("linclass.linear:LinearSVC", "flat",
                   "linear SVM, L1/L2 loss, dual coordinate descent (or Pegasos), one-vs-rest"),
    "crammer-singer": ("linclass.linear:CrammerSingerSVC", "flat",
                       "Crammer-Singer multi-class linear SVM (sequential dual method)"),
    "weston-watkins": ("linclass.linear:WestonWatkinsSVC", "flat",
                       "Weston-Watkins multi-class linear SVM (dual block coordinate descent)"),
    "least-squares": ("linclass.linear:LeastSquaresClassifier", "flat",
                      "least-squares classification from the normal equations"),
    "ridge": ("linclass.linear:RidgeClassifier", "flat",
              "ridge classification (Cholesky, conjugate gradients for sparse X)"),
    "lasso": ("linclass.linear:LassoClassifier", "flat",
              "L1-regularised least-squares classification (coordinate descent)"),
    "multiclass-svm": ("linclass.joint:MultiClassSVM", "flat",
                       "multi-class SVM as a structure (one-hot, class descriptions or a "
                       "taxonomy), cutting-plane structural SVM"),
    "svc": ("linclass.kernels:SVC", "flat",
            "kernel SVM by SMO (linear/poly/rbf/sigmoid; one-vs-one; Platt probabilities)"),
    "kernel-perceptron": ("linclass.kernels:KernelPerceptron", "flat",
                          "kernel (dual) perceptron, multi-class, averaged, optional SV budget"),
    "sgd": ("linclass.linear:SGDClassifier", "flat",
            "linear classifier by SGD on a margin loss (hinge, squared hinge, logistic, "
            "exponential, squared, perceptron, modified Huber; L2/L1/elastic net; ASGD)"),
    "multinomial-nb": ("linclass.linear:MultinomialNB", "flat",
                       "multinomial naive Bayes (counts; Lidstone or m-estimate smoothing)"),
    "bernoulli-nb": ("linclass.linear:BernoulliNB", "flat",
                     "multivariate Bernoulli naive Bayes (binary features)"),
    "logistic": ("linclass.linear:LogisticRegression", "flat",
                 "logistic regression, binary/multinomial, Gaussian or Laplace prior (L-BFGS, TRON)"),
    "maxent": ("linclass.linear:MaxEnt", "flat",
               "maximum entropy classifier (GIS, IIS or L-BFGS; Gaussian prior)"),
    "mixture-nb": ("linclass.linear:MixtureNB", "flat",
                   "naive Bayes with mixture class-conditionals (multinomial/Bernoulli, EM)"),
    "ranksvm": ("linclass.ranking:RankSVM", "ranking",
                "ranking SVM on pairwise preferences within queries (O(n log n) truncated Newton)"),
    "crf": ("linclass.sequence:CRF", "sequence",
            "linear-chain CRF (forward-backward; L-BFGS with L2, OWL-QN with L1/elastic net)"),
    "hmm": ("linclass.sequence:HMM", "sequence",
            "generative HMM tagger (smoothed counts, Viterbi, forward-backward marginals)"),
    "parser": ("linclass.parsing:DiscriminativeParser", "trees",
               "discriminative CKY parser (PCFG log-prob + rule + span features, averaged "
               "perceptron or structural SVM)"),
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
