"""The ``linclass`` command: demo, train, predict, evaluate, bench, models.

Examples
--------
::

    linclass demo
    linclass train --model tagger -p max_iter=10 train.conll -o chunker.npz
    linclass predict chunker.npz test.conll -o predicted.conll
    linclass evaluate chunker.npz test.conll
    linclass bench --quick svmlight
"""
import argparse
import ast
import os
import sys
import time

from ._version import __version__
from ._registry import MODELS, resolve


# ----------------------------------------------------------------- data ---

def _guess_format(path, fmt):
    if fmt != "auto":
        return fmt
    name = os.fspath(path).lower()
    for suffix in (".gz", ".bz2"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith(".conllu"):
        return "conllu"
    if name.endswith((".svm", ".svmlight", ".libsvm", ".txt.svm")) or \
            os.path.basename(name) in ("a9a", "a9a.t", "w8a"):
        return "svmlight"
    return "conll"


def _column_index(spec, sentence, default):
    if spec is None:
        return default
    if isinstance(spec, int) or spec.lstrip("-").isdigit():
        return int(spec)
    if sentence.columns and spec in sentence.columns:
        return sentence.columns.index(spec)
    raise SystemExit("linclass: no column %r (columns: %s)" % (spec, sentence.columns))


def read_sequence_data(path, input_spec):
    """(sentences, X, Y) from a CoNLL/CoNLL-U file according to input_spec."""
    from .datasets import read_conll
    fmt = input_spec["format"]
    sentences = read_conll(path, format=fmt)
    first = next((s for s in sentences if len(s)), None)
    if first is None:
        raise SystemExit("linclass: %s holds no tokens" % path)
    n_cols = len(first[0])
    if fmt == "conllu":
        label = _column_index(input_spec.get("label_column") or "upos", first, 3)
        tokens = [_column_index(c, first, None) for c in (input_spec.get("token_columns")
                                                          or ["form"])]
    else:
        label = _column_index(input_spec.get("label_column"), first, n_cols - 1)
        tokens = [_column_index(c, first, None) for c in input_spec.get("token_columns") or []] \
            or [i for i in range(n_cols) if i != label % n_cols]
    label %= n_cols
    X = [[tuple(row[i] for i in tokens) for row in s] for s in sentences]
    Y = [[row[label] for row in s] for s in sentences]
    return sentences, X, Y, label


def _parse_params(pairs):
    params = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit("linclass: parameter %r must look like name=value" % pair)
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


# ------------------------------------------------------------- commands ---

def cmd_models(args):
    for name, (target, task, description) in sorted(MODELS.items()):
        print("%-18s %-9s %s  (%s)" % (name, task, description, target.replace(":", ".")))
    return 0


def cmd_train(args):
    cls, task = resolve(args.model)
    params = _parse_params(args.param)
    if args.verbose and "verbose" in cls().get_params():
        params.setdefault("verbose", 1)
    try:
        model = cls(**params)
    except TypeError as exc:
        raise SystemExit("linclass: bad parameter for %s: %s" % (args.model, exc))
    fmt = _guess_format(args.train, args.format)
    t0 = time.perf_counter()
    if task == "sequence":
        if fmt == "svmlight":
            raise SystemExit("linclass: model %r needs a CoNLL/CoNLL-U file" % args.model)
        spec = {"format": fmt, "label_column": args.label_column,
                "token_columns": args.token_columns.split(",") if args.token_columns else None}
        _, X, Y, label = read_sequence_data(args.train, spec)
        spec["label_column"] = label
        n_items = "%d sentences, %d tokens" % (len(X), sum(map(len, X)))
    elif task == "trees":
        X, Y = _read_trees(args.train), None
        spec = {"format": "trees", "task": "trees"}
        n_items = "%d trees, %d words" % (len(X), sum(len(_tree_words(t)) for t in X))
    elif task == "ranking":
        X, Y, qid = _read_ranking(args.train)
        spec = {"format": "svmlight", "task": "ranking", "n_features": X.shape[1]}
        n_items = "%d documents, %d queries, %d features" % (X.shape[0], len(set(qid)),
                                                              X.shape[1])
    else:
        from .datasets import load_svmlight_file
        X, Y = load_svmlight_file(args.train)
        spec = {"format": "svmlight", "n_features": X.shape[1]}
        n_items = "%d samples, %d features" % X.shape
    t_read = time.perf_counter() - t0
    if task == "ranking":
        model.fit(X, Y, qid=qid)
    else:
        model.fit(X, Y)
    t_fit = time.perf_counter() - t0 - t_read
    model.input_spec_ = spec
    model.save(args.output)
    print("trained %s on %s (%s): read %.2fs, fit %.2fs -> %s"
          % (args.model, args.train, n_items, t_read, t_fit, args.output))
    return 0


def _read_trees(path):
    from .datasets import read_trees
    trees = read_trees(path)
    if not trees:
        raise SystemExit("linclass: no bracketed trees in %s" % path)
    return trees


def _tree_words(tree):
    return [w for w, t in tree.pos() if t != "-NONE-"]


def _read_sentences(path):
    """Sentences of a tree file (its words without -NONE-) or of a text file
    (one tokenised sentence per line, blank lines skipped)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text.lstrip().startswith("("):
        return [_tree_words(t) for t in _read_trees(path)]
    return [line.split() for line in text.splitlines() if line.strip()]


def _read_ranking(path, n_features=None):
    from .datasets import load_svmlight_file
    X, y, qid = load_svmlight_file(path, n_features=n_features, query_id=True)
    if len(qid) != X.shape[0]:
        raise SystemExit("linclass: ranking needs 'qid:' on every line of %s" % path)
    return X, y, qid


def _load_for(path):
    from .persistence import load
    model = load(path)
    spec = getattr(model, "input_spec_", None)
    if spec is None:
        raise SystemExit("linclass: %s was not saved by 'linclass train' (no input "
                         "description); use the Python API" % path)
    return model, spec


def cmd_predict(args):
    model, spec = _load_for(args.model)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if spec.get("task") == "ranking":
            X, _, _ = _read_ranking(args.input, spec["n_features"])
            for score in model.predict(X):
                out.write("%.17g\n" % score)
        elif spec.get("task") == "trees":
            sentences = _read_sentences(args.input)
            for words, tree in zip(sentences, model.predict(sentences)):
                # a sentence without parse gets a flat tree under NOPARSE
                out.write("%s\n" % (tree if tree is not None else
                                    "(NOPARSE %s)" % " ".join("(X %s)" % w for w in words)))
        elif spec["format"] == "svmlight":
            from .datasets import load_svmlight_file
            X, _ = load_svmlight_file(args.input, n_features=spec["n_features"])
            for label in model.predict(X):
                out.write("%s\n" % (label,))
        else:
            from .datasets import write_conll
            sentences, X, _, label = read_sequence_data(args.input, spec)
            pred = model.predict(X)
            rows = []
            for s, p in zip(sentences, pred):
                new = s.copy()
                new[:] = [row[:label] + (tag,) + row[label + 1:] for row, tag in zip(s, p)]
                rows.append(new)
            write_conll(rows, out, format=spec["format"])
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def cmd_evaluate(args):
    from . import metrics
    model, spec = _load_for(args.model)
    if spec.get("task") == "ranking":
        from .metrics.ranking import ranking_report
        X, y, qid = _read_ranking(args.input, spec["n_features"])
        print(ranking_report(y, model.predict(X), qid, k=10, max_queries=args.max_queries))
        return 0
    if spec.get("task") == "trees":
        from .metrics.parsing import parseval
        gold = _read_trees(args.input)
        t0 = time.perf_counter()
        pred = model.predict([_tree_words(t) for t in gold])
        elapsed = time.perf_counter() - t0
        res = parseval(gold, pred)
        print("PARSEVAL (evalb COLLINS.prm conventions), %d sentences, %d without parse, "
              "%.1f ms per sentence" % (len(gold), sum(p is None for p in pred),
                                         1000 * elapsed / len(gold)))
        print("bracketing precision %.2f  recall %.2f  F1 %.2f  exact match %.2f%%  "
              "tagging accuracy %.2f%%"
              % (100 * res["precision"], 100 * res["recall"], 100 * res["f1"],
                 100 * res["exact_match"], 100 * res["tagging_accuracy"]))
        return 0
    if spec["format"] == "svmlight":
        from .datasets import load_svmlight_file
        X, y = load_svmlight_file(args.input, n_features=spec["n_features"])
        pred = model.predict(X)
        print("accuracy: %.4f  (%d samples)" % (metrics.accuracy_score(y, pred), len(y)))
        print(metrics.classification_report(y, pred))
        if args.plot:
            from .metrics.plotting import plot_roc
            if not hasattr(model, "decision_function") or len(model.classes_) != 2:
                raise SystemExit("linclass: --plot draws a ROC curve: needs a binary model "
                                 "with decision_function")
            scores = model.decision_function(X)
            fig = plot_roc(y, scores, pos_label=model.classes_[1])
            fig.savefig(args.plot)
            print("ROC curve written to %s" % args.plot)
        return 0
    _, X, Y, _ = read_sequence_data(args.input, spec)
    pred = model.predict(X)
    print("token accuracy: %.4f   sentence accuracy: %.4f   (%d sentences, %d tokens)"
          % (metrics.token_accuracy(Y, pred), metrics.sentence_accuracy(Y, pred),
             len(Y), sum(map(len, Y))))
    tags = {t for sent in Y for t in sent}
    if args.scheme != "none" and any(t[:2] in ("B-", "I-", "E-", "S-") for t in tags):
        scheme = None if args.scheme == "conlleval" else args.scheme
        print(metrics.conlleval_report(Y, pred, scheme=scheme))
    if args.plot:
        raise SystemExit("linclass: --plot is available for flat (svmlight) models")
    return 0


def cmd_bench(args):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runner = os.path.join(here, "benchmarks", "run.py")
    if not os.path.exists(runner):
        raise SystemExit("linclass: the benchmarks live in the source checkout "
                         "(benchmarks/run.py); this installation has none. Run "
                         "'python benchmarks/run.py' from a clone of linclass.")
    import runpy
    sys.argv = [runner] + args.bench_args
    runpy.run_path(runner, run_name="__main__")
    return 0


def cmd_demo(args):
    from .demo import run_demo
    return run_demo(quick=args.quick)


# ---------------------------------------------------------------- parser ---

def build_parser():
    parser = argparse.ArgumentParser(
        prog="linclass",
        description="Linear classifiers and structured predictors: F(x, y) = w . Phi(x, y).")
    parser.add_argument("--version", action="version", version="linclass " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("demo", help="train and evaluate models on the data shipped with linclass")
    p.add_argument("--quick", action="store_true", help="fewer epochs")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("models", help="list the model names accepted by 'train --model'")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("train", help="fit a model on a data file and save it")
    p.add_argument("train", help="training file (CoNLL, CoNLL-U or svmlight; .gz accepted)")
    p.add_argument("--model", "-m", required=True, help="model name (see 'linclass models')")
    p.add_argument("--param", "-p", action="append", metavar="NAME=VALUE",
                   help="model parameter, repeatable (values parsed as Python literals)")
    p.add_argument("--output", "-o", required=True, help="model file to write (.npz)")
    p.add_argument("--format", choices=["auto", "conll", "conllu", "svmlight"], default="auto")
    p.add_argument("--label-column", help="label column (index or CoNLL-U name; default: "
                   "last column for CoNLL, upos for CoNLL-U)")
    p.add_argument("--token-columns", help="comma-separated token columns given to the "
                   "feature template (default: all but the label; CoNLL-U: form)")
    p.add_argument("--verbose", "-v", action="store_true", help="show training progress")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("predict", help="label a data file with a saved model")
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--output", "-o", help="output file (default: standard output); sequence "
                   "models write the input back with the label column replaced")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", help="score a saved model on a labelled data file")
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--scheme", default="conlleval",
                   choices=["conlleval", "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "none"],
                   help="chunk tagging scheme for the conlleval table (default: exactly the "
                   "rules of the conlleval script; 'none' prints no chunk table)")
    p.add_argument("--plot", metavar="FILE.png", help="write a ROC curve (binary flat models; "
                   "needs the 'plot' extra)")
    p.add_argument("--max-queries", type=int, default=20,
                   help="ranking models: per-query rows to print (the mean covers all)")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("bench", help="run the benchmark suites (source checkout only)",
                       add_help=False)
    p.add_argument("bench_args", nargs=argparse.REMAINDER,
                   help="arguments of benchmarks/run.py, e.g. --quick svmlight")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None):
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        # everything after 'bench' (including --help) belongs to benchmarks/run.py
        return cmd_bench(argparse.Namespace(command="bench", bench_args=argv[1:]))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:
        print("linclass %s: error: %s" % (args.command, exc), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
