"""The ``linclass`` command: demo, train, predict, parse, evaluate, bench, models.

Examples
--------
::

    linclass demo
    linclass train --model tagger -p features=chunking -p max_iter=10 train.conll -o chunker.npz
    linclass predict chunker.npz test.conll -o predicted.conll
    linclass predict --with-gold chunker.npz test.conll -o gold_and_predicted.conll
    linclass evaluate chunker.npz test.conll
    linclass evaluate --conll gold_and_predicted.conll      # conlleval on an existing file
    linclass train --model linear-svc -v 5 a9a.svm          # 5-fold cross-validation
    linclass predict --proba logistic.npz a9a.t.svm
    linclass parse parser.npz sentences.txt -o parsed.mrg
    linclass evaluate --evalb parser.npz test.mrg
    linclass bench --quick svmlight

Exit status
-----------
0
    success;
2
    usage error (unknown option, model or parameter, a value out of range,
    an option that does not apply to this model or task; argparse's status)
    or data error (an input file that is missing, unreadable or malformed,
    labels/features the model cannot use, or an output file that cannot be
    written: its directory is missing, it is a directory, it names an input);
3
    model file error: a model file that is missing, not a linclass model,
    corrupt, or not saved by ``linclass train``.
141
    the standard output was closed by its reader (``linclass predict ... |
    head``); nothing is printed.

Errors print one line ``linclass COMMAND: error: ...`` on standard error,
never a Python traceback (``--debug`` shows the traceback of an error).
Warnings (such as features unknown to the model, which are ignored as
LIBLINEAR does) print one line ``linclass COMMAND: warning: ...``; progress
lines appear only with ``--verbose``, on standard error.

Notes
-----
Every command reads all its inputs before it writes anything.  An output
(``-o``, ``--plot``) that names one of the command's inputs is refused before
anything is read; outputs are written to a temporary file beside the target
and renamed over it only when complete, so a failed run leaves every existing
file as it was.  ``-o -`` writes to standard output.  Data files may be
regular files or pipes (``/dev/stdin``); devices such as ``/dev/zero`` are
refused.  Inputs are read as UTF-8; a leading byte order mark is skipped.
"""
import argparse
import ast
import bz2
import gzip
import io
import os
import stat
import sys
import time
from typing import List, Optional, Sequence

from ._atomic import atomic_output, refuse_overwriting_inputs
from ._version import __version__
from ._registry import MODELS, resolve

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_MODEL = 0, 2, 2, 3
EXIT_BROKEN_PIPE = 141      # 128 + SIGPIPE, as a shell reports a command killed by it


class CLIError(Exception):
    """An error the command reports in one line, with its exit status."""

    def __init__(self, message, code=EXIT_USAGE):
        super().__init__(message)
        self.code = code


def usage_error(message):
    return CLIError(message, EXIT_USAGE)


def data_error(message):
    return CLIError(message, EXIT_DATA)


def model_error(message):
    return CLIError(message, EXIT_MODEL)


def _progress(args, message):
    """A progress line on standard error with ``--verbose``."""
    if getattr(args, "verbose", False):
        print("linclass %s: %s" % (args.command, message), file=sys.stderr, flush=True)


def _warn(args, message):
    print("linclass %s: warning: %s" % (args.command, message), file=sys.stderr, flush=True)


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


def _column_index(spec, sentence, n_cols, path, what):
    """The 0-based column ``spec`` (an index, negative from the end, or a
    CoNLL-U column name) of a file with ``n_cols`` columns; never wrapped."""
    index = None
    if isinstance(spec, int):
        index = spec
    else:
        try:
            index = int(str(spec).strip())
        except ValueError:
            names = sentence.columns or ()
            if spec in names:
                return list(names).index(spec)
            raise data_error("%s: no column %r in %s (%s)"
                             % (what, spec, path, "columns: " + ", ".join(names) if names
                                else "its columns have no names: give a 0-based index"))
    if not -n_cols <= index < n_cols:
        raise data_error("%s %d is out of range: %s has %d columns per token (0 to %d)"
                         % (what, index, path, n_cols, n_cols - 1))
    return index % n_cols          # a negative index counts from the end


def _token_column_specs(text):
    """The ``--token-columns`` option as a list (None when not given)."""
    if not text:
        return None
    specs = [c.strip() for c in text.split(",")]
    if not all(specs):
        raise usage_error("--token-columns %r has an empty entry; give comma-separated "
                          "column indices or names" % text)
    return specs


def read_sequence_data(path, input_spec):
    """(sentences, X, Y, label column) from a CoNLL/CoNLL-U file according to input_spec."""
    from .datasets import read_conll
    fmt = input_spec["format"]
    sentences = read_conll(path, format=fmt)
    first = next((s for s in sentences if len(s)), None)
    if first is None:
        raise data_error("%s holds no tokens" % path)
    n_cols = len(first[0])
    expected = input_spec.get("n_columns")
    if expected is not None and n_cols != expected:
        raise data_error("%s has %d columns per token, but the model was trained on a file "
                         "with %d" % (path, n_cols, expected))
    if n_cols < 2 and fmt != "conllu":
        raise data_error("%s has one column per token; a sequence file needs the token "
                         "and its label" % path)
    if fmt == "conllu":
        label = _column_index(input_spec.get("label_column") or "upos", first, n_cols, path,
                              "label column")
        token_specs = input_spec.get("token_columns") or ["form"]
    else:
        label_spec = input_spec.get("label_column")
        label = n_cols - 1 if label_spec is None else \
            _column_index(label_spec, first, n_cols, path, "label column")
        token_specs = input_spec.get("token_columns")
    if token_specs:
        tokens = [_column_index(c, first, n_cols, path, "token column") for c in token_specs]
    else:
        tokens = [i for i in range(n_cols) if i != label]
    X = [[tuple(row[i] for i in tokens) for row in s] for s in sentences]
    Y = [[row[label] for row in s] for s in sentences]
    return sentences, X, Y, label


def _open_text(path, errors="strict"):
    """A text stream of ``path`` (UTF-8; a leading byte order mark skipped)."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        return gzip.open(name, "rt", encoding="utf-8-sig", errors=errors)
    if name.endswith(".bz2"):
        return bz2.open(name, "rt", encoding="utf-8-sig", errors=errors)
    return open(name, encoding="utf-8-sig", errors=errors)


def _read_text(path, errors="strict"):
    """The whole text of ``path``; undecodable bytes are a data error naming the file."""
    try:
        with _open_text(path, errors) as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise data_error("%s: cannot decode the file as UTF-8 (%s at byte %d)"
                         % (path, exc.reason, exc.start))
    except (EOFError, OSError) as exc:
        if not os.fspath(path).endswith((".gz", ".bz2")) or \
                isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        raise data_error("%s: cannot decompress the file (%s)" % (path, exc))
    except Exception as exc:
        if type(exc).__module__ == "zlib":       # zlib.error
            raise data_error("%s: cannot decompress the file (%s)" % (path, exc))
        raise


def _label_tokens(path):
    """The label of each line of an svmlight file as written there ("+1", "3")."""
    tokens = {}
    for line in _read_text(path, errors="replace").splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            try:
                tokens.setdefault(float(line[0]), line[0])
            except ValueError:
                pass                                      # the reader reports it
    return [tokens[k] for k in sorted(tokens)]


def _format_label(label, spec):
    """A predicted label written as the training file wrote it (``1``, not ``1.0``)."""
    table = spec.get("_label_table")
    if table is None:
        table = spec["_label_table"] = {float(t): t for t in spec.get("label_tokens") or []}
    try:
        value = float(label)
    except (TypeError, ValueError):
        return str(label)
    if value in table:
        return table[value]
    return "%d" % value if value.is_integer() else repr(value)


def _load_flat(args, path, n_features, query_id=False):
    """X, y (and qid) of an svmlight file, cut or padded to the model's width.

    Features beyond the training width are ignored with a one-line warning,
    as LIBLINEAR's ``predict`` does."""
    import scipy.sparse as sp
    from .datasets import load_svmlight_file
    t0 = time.perf_counter()
    loaded = load_svmlight_file(path, query_id=query_id)
    X = loaded[0]
    if n_features is not None and X.shape[1] != n_features:
        if X.shape[1] > n_features:
            extra = X[:, n_features:]
            _warn(args, "%d value(s) of %d feature(s) unknown to the model (index above the "
                  "training maximum %d) in %d row(s) of %s: ignored"
                  % (extra.nnz, len(set(extra.indices.tolist())), n_features,
                     int((extra.getnnz(axis=1) > 0).sum()), path))
            X = X[:, :n_features].tocsr()
        else:
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    _progress(args, "read %s: %d samples, %d features in %.2fs"
              % (path, X.shape[0], X.shape[1], time.perf_counter() - t0))
    return (X,) + tuple(loaded[1:])


def _parse_params(pairs):
    params = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise usage_error("parameter %r must look like name=value" % pair)
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _make_model(cls, name, params):
    valid = cls._get_param_names() if hasattr(cls, "_get_param_names") else None
    if valid is not None:
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise usage_error("unknown parameter(s) %s for model %r; valid: %s"
                              % (", ".join(unknown), name, ", ".join(valid)))
    try:
        return cls(**params)
    except TypeError as exc:
        raise usage_error("bad parameter for %s: %s" % (name, exc))


# -------------------------------------------------------------- outputs ---

def _check_outputs(outputs, inputs):
    """Refuse, before anything is read or written, an output that names an
    input or that cannot be written (a directory, a device, a missing or
    read-only directory).  ``outputs``: (option, path or None) pairs."""
    for option, path in outputs:
        if path is None or path == "-":
            continue
        if not str(path).strip():
            raise usage_error("%s needs a file name (got an empty one)" % option)
        try:
            refuse_overwriting_inputs(path, inputs, what="output (%s)" % option)
        except ValueError as exc:
            raise data_error(str(exc))
        if os.path.isdir(path):
            raise data_error("%s %s is a directory; give a file name" % (option, path))
        if os.path.exists(path) and not os.path.isfile(path):
            raise data_error("%s %s exists and is not a regular file; refusing to write "
                             "over it" % (option, path))
        directory = os.path.dirname(os.path.realpath(path))     # where the file will go
        if not os.path.isdir(directory):
            raise data_error("%s %s: the directory %s does not exist"
                             % (option, path, directory))
        if not os.access(directory, os.W_OK | os.X_OK):
            raise data_error("%s %s: cannot create a file in %s (permission denied)"
                             % (option, path, directory))


def _check_inputs(*paths):
    """Refuse a device as a data file (``/dev/zero`` would be read without end);
    regular files, pipes and a terminal are read as usual."""
    for path in paths:
        if path is None:
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue                     # the reader reports a missing file
        if not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            interactive = os.isatty(fd)
        finally:
            os.close(fd)
        if not interactive:
            raise data_error("%s is a device, not a data file" % path)


def _emit(path, text):
    """Write ``text`` to standard output (``path`` None or ``-``) or, atomically, to
    ``path``: the file is replaced only once all of it is written."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_output(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def _os_error_message(exc):
    """``file: reason`` for an OSError (no ``[Errno n]`` noise)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        return "%s: %s" % (exc.filename, reason)
    return reason


# ------------------------------------------------------------- commands ---

def cmd_models(args):
    for name, (target, task, description) in sorted(MODELS.items()):
        print("%-18s %-9s %s  (%s)" % (name, task, description, target.replace(":", ".")))
    return EXIT_OK


def _check_training_options(args, task):
    """Options that do not apply to the model's task are usage errors, not ignored."""
    if task != "sequence":
        for option, value in (("--label-column", args.label_column),
                              ("--token-columns", args.token_columns)):
            if value is not None:
                raise usage_error("%s applies to sequence models (CoNLL files), not to "
                                  "model %r" % (option, args.model))
    fits = {"sequence": ("conll", "conllu"), "trees": ()}.get(task, ("svmlight",))
    if args.format != "auto" and args.format not in fits:
        raise usage_error("--format %s does not apply to model %r (%s)"
                          % (args.format, args.model, "it reads bracketed trees"
                             if task == "trees" else "it reads " + " or ".join(fits)))


def _read_training_data(args, task):
    _check_training_options(args, task)
    fmt = _guess_format(args.train, args.format)
    if task == "sequence":
        if fmt == "svmlight":
            raise usage_error("model %r needs a CoNLL/CoNLL-U file" % args.model)
        spec = {"format": fmt, "label_column": args.label_column,
                "token_columns": _token_column_specs(args.token_columns)}
        sentences, X, Y, label = read_sequence_data(args.train, spec)
        spec["label_column"] = label
        spec["n_columns"] = len(next(s for s in sentences if len(s))[0])
        n_items = "%d sentences, %d tokens" % (len(X), sum(map(len, X)))
        return X, Y, None, spec, n_items
    if task == "trees":
        X = _read_trees(args.train)
        spec = {"format": "trees", "task": "trees"}
        n_items = "%d trees, %d words" % (len(X), sum(len(_tree_words(t)) for t in X))
        return X, None, None, spec, n_items
    if task == "ranking":
        X, Y, qid = _read_ranking(args, args.train)
        spec = {"format": "svmlight", "task": "ranking", "n_features": X.shape[1]}
        n_items = "%d documents, %d queries, %d features" % (X.shape[0], len(set(qid)),
                                                              X.shape[1])
        return X, Y, qid, spec, n_items
    X, Y = _load_flat(args, args.train, None)
    if X.shape[0] == 0:
        raise data_error("%s holds no samples" % args.train)
    spec = {"format": "svmlight", "n_features": X.shape[1],
            "label_tokens": _label_tokens(args.train)}
    n_items = "%d samples, %d features" % X.shape
    return X, Y, None, spec, n_items


def _cross_validate(args, cls, params, task, X, Y):
    """LIBLINEAR's ``-v n``: accuracy of n-fold cross-validation (folds drawn
    by a seeded random permutation); no model is written."""
    import numpy as np
    n_folds = args.cross_validation
    if task not in ("flat", "sequence"):
        raise usage_error("-v (cross-validation) is available for flat and sequence models, "
                          "not %s models" % task)
    n = X.shape[0] if task == "flat" else len(X)
    if not 2 <= n_folds <= n:
        raise usage_error("-v needs 2 <= n_folds <= %d (the number of %s), got %d"
                          % (n, "samples" if task == "flat" else "sentences", n_folds))
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(0).permutation(n)] = np.arange(n) % n_folds
    correct = total = 0
    for k in range(n_folds):
        t0 = time.perf_counter()
        test = np.flatnonzero(fold == k)
        train = np.flatnonzero(fold != k)
        model = _make_model(cls, args.model, params)
        if task == "flat":
            model.fit(X[train], Y[train])
            pred = model.predict(X[test])
            correct += int(np.sum(np.asarray(pred) == Y[test]))
            total += len(test)
        else:
            model.fit([X[i] for i in train], [Y[i] for i in train])
            pred = model.predict([X[i] for i in test])
            for i, p in zip(test, pred):
                correct += sum(a == b for a, b in zip(Y[i], p))
                total += len(Y[i])
        _progress(args, "fold %d/%d: %d %s held out, fit and predict %.2fs"
                  % (k + 1, n_folds, len(test), "samples" if task == "flat" else "sentences",
                     time.perf_counter() - t0))
    what = "Accuracy" if task == "flat" else "Token Accuracy"
    print("Cross Validation %s = %g%%" % (what, 100.0 * correct / total))
    return EXIT_OK


def cmd_train(args):
    try:
        cls, task = resolve(args.model)
    except ValueError as exc:
        raise usage_error(str(exc))
    params = _parse_params(args.param)
    if args.verbose and "verbose" in cls().get_params():
        params.setdefault("verbose", 1)
    model = _make_model(cls, args.model, params)
    if args.cross_validation is None and not args.output:
        raise usage_error("the model file to write is required (-o FILE), unless -v N "
                          "asks for cross-validation")
    if args.cross_validation is not None and args.cross_validation < 2:
        raise usage_error("-v needs 2 or more folds, got %d" % args.cross_validation)
    if args.cross_validation is None:
        _check_outputs([("-o", args.output)], [args.train])
    _check_inputs(args.train)
    t0 = time.perf_counter()
    X, Y, qid, spec, n_items = _read_training_data(args, task)
    t_read = time.perf_counter() - t0
    _progress(args, "read %s (%s) in %.2fs" % (args.train, n_items, t_read))
    if args.cross_validation is not None:
        return _cross_validate(args, cls, params, task, X, Y)
    if task == "ranking":
        model.fit(X, Y, qid=qid)
    else:
        model.fit(X, Y)
    t_fit = time.perf_counter() - t0 - t_read
    model.input_spec_ = spec
    model.save(args.output)
    print("trained %s on %s (%s): read %.2fs, fit %.2fs -> %s"
          % (args.model, args.train, n_items, t_read, t_fit, args.output))
    return EXIT_OK


def _read_trees(path):
    from .datasets import read_trees
    trees = read_trees(path)
    if not trees:
        raise data_error("no bracketed trees in %s" % path)
    return trees


def _tree_words(tree):
    return [w for w, t in tree.pos() if t != "-NONE-"]


def _sentences_of_trees(trees, path):
    """The words of each tree (without -NONE- elements); a tree with no word
    is a data error (it cannot be parsed nor written back)."""
    sentences = [_tree_words(t) for t in trees]
    for k, words in enumerate(sentences):
        if not words:
            raise data_error("tree %d of %s has no words (only empty elements): there is "
                             "nothing to parse" % (k + 1, path))
    return sentences


def _read_sentences(path):
    """Sentences of a tree file (its words without -NONE-) or of a text file
    (one tokenised sentence per line, blank lines skipped)."""
    text = _read_text(path)
    if text.lstrip().startswith("("):
        return _sentences_of_trees(_read_trees(path), path)
    # brackets in words as the Penn Treebank writes them, so that every parse
    # (and NOPARSE line) can be written, and read back, as a bracketed tree
    text = text.replace("(", "-LRB-").replace(")", "-RRB-")
    sentences = [line.split() for line in text.splitlines() if line.strip()]
    if not sentences:
        raise data_error("%s holds no sentences" % path)
    return sentences


def _read_ranking(args, path, n_features=None):
    X, y, qid = _load_flat(args, path, n_features, query_id=True)
    if len(qid) != X.shape[0]:
        raise data_error("ranking needs 'qid:' on every line of %s" % path)
    return X, y, qid


def _load_for(path):
    from .exceptions import ModelFormatError
    from .persistence import load
    if not os.path.exists(path):
        raise model_error("no model file %s" % path)
    if os.path.isdir(path):
        raise model_error("%s is a directory, not a linclass model file" % path)
    try:
        model = load(path)
    except OSError as exc:
        raise model_error("%s is not a readable linclass model: %s"
                          % (path, _os_error_message(exc)))
    except (ModelFormatError, ValueError, KeyError) as exc:
        raise model_error("%s is not a readable linclass model: %s" % (path, exc))
    spec = getattr(model, "input_spec_", None)
    if spec is None:
        raise model_error("%s was not saved by 'linclass train' (no input description); "
                          "use the Python API" % path)
    return model, dict(spec)


def _check_output_options(args, spec):
    flat = spec["format"] == "svmlight" and spec.get("task") is None
    if (args.proba or args.decision) and not flat:
        raise usage_error("--proba/--decision apply to flat (svmlight) models")
    if args.proba and args.decision:
        raise usage_error("choose one of --proba and --decision")
    if args.with_gold and spec.get("task") in ("ranking", "trees"):
        raise usage_error("--with-gold applies to flat and sequence models")


def _write_flat_predictions(args, model, spec, X, y, out):
    import numpy as np
    labels = [_format_label(c, spec) for c in model.classes_]
    if args.proba:
        if not hasattr(model, "predict_proba"):
            raise usage_error("--proba: this %s model has no probabilities (use "
                              "--decision, or a probabilistic model such as logistic)"
                              % type(model).__name__)
        scores = np.asarray(model.predict_proba(X))
        out.write("labels %s\n" % " ".join(labels))          # LIBLINEAR's -b 1 header
    elif args.decision:
        if not hasattr(model, "decision_function"):
            raise usage_error("--decision: this %s model has no decision_function"
                              % type(model).__name__)
        scores = np.asarray(model.decision_function(X))
        if scores.ndim == 1:              # binary: the score of the second class
            out.write("decision %s\n" % labels[len(labels) - 1])
            scores = scores[:, None]
        else:
            out.write("labels %s\n" % " ".join(labels))
    else:
        scores = None
    pred = model.predict(X)
    for i, label in enumerate(pred):
        fields = [_format_label(label, spec)]
        if args.with_gold:
            fields.insert(0, _format_label(y[i], spec))
        if scores is not None:
            fields.extend("%.6g" % v for v in scores[i])
        out.write(" ".join(fields) + "\n")


def cmd_predict(args):
    _check_outputs([("-o", args.output)], [args.model, args.input])
    _check_inputs(args.input)
    model, spec = _load_for(args.model)
    _check_output_options(args, spec)
    t0 = time.perf_counter()
    out = io.StringIO()            # everything is computed before the output is touched
    if spec.get("task") == "ranking":
        X, _, _ = _read_ranking(args, args.input, spec["n_features"])
        for score in model.predict(X):
            out.write("%.17g\n" % score)
    elif spec.get("task") == "trees":
        _write_parses(args, model, args.input, out)
    elif spec["format"] == "svmlight":
        X, y = _load_flat(args, args.input, spec["n_features"])
        _write_flat_predictions(args, model, spec, X, y, out)
    else:
        _write_sequence_predictions(args, model, spec, out)
    _emit(args.output, out.getvalue())
    _progress(args, "predicted %s in %.2fs" % (args.input, time.perf_counter() - t0))
    return EXIT_OK


def _write_sequence_predictions(args, model, spec, out):
    from .datasets import write_conll
    sentences, X, _, label = read_sequence_data(args.input, spec)
    pred = model.predict(X)
    rows = []
    for s, p in zip(sentences, pred):
        new = s.copy()
        if args.with_gold:        # conlleval layout: ... gold predicted
            new[:] = [row[:label] + row[label + 1:] + (row[label], tag)
                      for row, tag in zip(s, p)]
            new.columns = None
        else:
            new[:] = [row[:label] + (tag,) + row[label + 1:] for row, tag in zip(s, p)]
        rows.append(new)
    write_conll(rows, out, format="conll" if args.with_gold else spec["format"])


def _parse_all(model, sentences):
    """The parse of each sentence, None where there is none; a sentence the
    model refuses (a ValueError) gets None with the reason, not a failed run."""
    try:
        return model.predict(sentences), {}
    except ValueError:
        pass
    trees, reasons = [], {}
    for i, words in enumerate(sentences):
        try:
            trees.append(model.predict([words])[0])
        except ValueError as exc:
            trees.append(None)
            reasons[i] = str(exc)
    return trees, reasons


def _write_parses(args, model, path, out):
    sentences = _read_sentences(path)
    t0 = time.perf_counter()
    trees, reasons = _parse_all(model, sentences)
    for words, tree in zip(sentences, trees):
        # a sentence without parse gets a flat tree under NOPARSE
        out.write("%s\n" % (tree if tree is not None else
                            "(NOPARSE %s)" % " ".join("(X %s)" % w for w in words)))
    n_failed = sum(tree is None for tree in trees)
    if n_failed:
        first = min(reasons) if reasons else None
        _warn(args, "%d of %d sentence(s) without parse, written as (NOPARSE ...)%s"
              % (n_failed, len(sentences), "" if first is None else
                 "; sentence %d: %s" % (first + 1, reasons[first])))
    _progress(args, "parsed %d sentences in %.2fs" % (len(sentences), time.perf_counter() - t0))


def cmd_parse(args):
    _check_outputs([("-o", args.output)], [args.model, args.input])
    _check_inputs(args.input)
    model, spec = _load_for(args.model)
    if spec.get("task") != "trees":
        raise usage_error("%s is not a parser model (train one with --model parser)"
                          % args.model)
    out = io.StringIO()            # everything is parsed before the output is touched
    _write_parses(args, model, args.input, out)
    _emit(args.output, out.getvalue())
    return EXIT_OK


def _evalb_table(gold, pred):
    """evalb's per-sentence table and summary (no crossing-bracket columns)."""
    from .metrics.parsing import parseval_counts
    lines = ["  Sent.                     Matched  Bracket      Correct Tag",
             " ID  Len.  Stat. Recal  Prec.  Bracket gold test   Words  Tags Accracy",
             "=" * 69]
    tot = dict(matched=0, gold=0, predicted=0, tags_correct=0, n_words=0, exact=0, n=0,
               skipped=0)
    for i, (g, p) in enumerate(zip(gold, pred), 1):
        if p is None:
            tot["skipped"] += 1
            lines.append("%4d  %4d    2     0.00   0.00      0    0    0       0     0   0.00"
                         % (i, len(_tree_words(g))))
            continue
        c = parseval_counts(g, p)
        recall = 100.0 * c["matched"] / c["gold"] if c["gold"] else 0.0
        precision = 100.0 * c["matched"] / c["predicted"] if c["predicted"] else 0.0
        tag_acc = 100.0 * c["tags_correct"] / c["n_words"] if c["n_words"] else 0.0
        lines.append("%4d  %4d    0   %6.2f %6.2f  %5d %4d %4d   %5d %5d %6.2f"
                     % (i, c["n_words"], recall, precision, c["matched"], c["gold"],
                        c["predicted"], c["n_words"], c["tags_correct"], tag_acc))
        tot["n"] += 1
        for key in ("matched", "gold", "predicted", "tags_correct", "n_words"):
            tot[key] += c[key]
        tot["exact"] += bool(c["exact"])
    lines.append("=" * 69)
    recall = 100.0 * tot["matched"] / tot["gold"] if tot["gold"] else 0.0
    precision = 100.0 * tot["matched"] / tot["predicted"] if tot["predicted"] else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    lines += ["", "-- All --",
              "Number of sentence        = %6d" % len(gold),
              "Number of Error sentence  = %6d" % 0,
              "Number of Skip  sentence  = %6d" % tot["skipped"],
              "Number of Valid sentence  = %6d" % tot["n"],
              "Bracketing Recall         = %6.2f" % recall,
              "Bracketing Precision      = %6.2f" % precision,
              "Bracketing FMeasure       = %6.2f" % f1,
              "Complete match            = %6.2f" % (100.0 * tot["exact"] / tot["n"]
                                                     if tot["n"] else 0.0),
              "Tagging accuracy          = %6.2f" % (100.0 * tot["tags_correct"] / tot["n_words"]
                                                     if tot["n_words"] else 0.0)]
    return "\n".join(lines)


_EVALUATE_OPTIONS = (   # option, attribute, the evaluations it applies to, its default
    ("--scheme", "scheme", ("sequence", "conll file"), "conlleval"),
    ("--max-queries", "max_queries", ("ranking",), 20),
    ("--evalb", "evalb", ("trees",), False),
    ("--plot", "plot", ("flat",), None),
    ("--plot-kind", "plot_kind", ("flat",), "auto"),
)


def _check_evaluate_options(args, what):
    """Refuse an option that does not apply to this evaluation (``what``: flat,
    sequence, ranking, trees or conll file), then fill in the defaults."""
    for option, name, applies, default in _EVALUATE_OPTIONS:
        value = getattr(args, name)
        if value is None or value is False:
            setattr(args, name, default)
        elif what not in applies:
            raise usage_error("%s applies to %s, not to %s"
                              % (option, " and ".join(
                                  {"flat": "flat (svmlight) models", "trees": "parser models",
                                   "ranking": "ranking models", "sequence": "sequence models",
                                   "conll file": "--conll FILE"}[a] for a in applies),
                                 {"flat": "a flat model", "trees": "a parser model",
                                  "ranking": "a ranking model", "sequence": "a sequence model",
                                  "conll file": "--conll FILE"}[what]))
    if args.plot_kind != "auto" and not args.plot:
        raise usage_error("--plot-kind needs --plot FILE")


def _evaluation_kind(spec):
    if spec.get("task") in ("ranking", "trees"):
        return spec["task"]
    return "flat" if spec["format"] == "svmlight" else "sequence"


def cmd_evaluate(args):
    if args.conll is not None:
        _check_evaluate_options(args, "conll file")
        return _evaluate_conll_file(args)
    if args.model is None or args.input is None:
        raise usage_error("evaluate needs MODEL and INPUT (or --conll FILE)")
    from . import metrics
    _check_outputs([("--plot", args.plot)], [args.model, args.input])
    _check_inputs(args.input)
    model, spec = _load_for(args.model)
    _check_evaluate_options(args, _evaluation_kind(spec))
    plot_format = _plot_format(args.plot) if args.plot else None
    if spec.get("task") == "ranking":
        from .metrics.ranking import ranking_report
        X, y, qid = _read_ranking(args, args.input, spec["n_features"])
        print(ranking_report(y, model.predict(X), qid, k=10, max_queries=args.max_queries))
        return EXIT_OK
    if spec.get("task") == "trees":
        from .metrics.parsing import parseval
        gold = _read_trees(args.input)
        t0 = time.perf_counter()
        pred, _ = _parse_all(model, _sentences_of_trees(gold, args.input))
        elapsed = time.perf_counter() - t0
        _progress(args, "parsed %d sentences in %.2fs" % (len(gold), elapsed))
        if args.evalb:
            print(_evalb_table(gold, pred))
            return EXIT_OK
        res = parseval(gold, pred)
        print("PARSEVAL (evalb COLLINS.prm conventions), %d sentences, %d without parse, "
              "%.1f ms per sentence" % (len(gold), sum(p is None for p in pred),
                                         1000 * elapsed / len(gold)))
        print("bracketing precision %.2f  recall %.2f  F1 %.2f  exact match %.2f%%  "
              "tagging accuracy %.2f%%"
              % (100 * res["precision"], 100 * res["recall"], 100 * res["f1"],
                 100 * res["exact_match"], 100 * res["tagging_accuracy"]))
        return EXIT_OK
    if spec["format"] == "svmlight":
        X, y = _load_flat(args, args.input, spec["n_features"])
        pred = model.predict(X)
        print("accuracy: %.4f  (%d samples)" % (metrics.accuracy_score(y, pred), len(y)))
        print(metrics.classification_report(y, pred))
        if args.plot:
            _evaluate_plot(args, model, X, y, pred, plot_format)
        return EXIT_OK
    _, X, Y, _ = read_sequence_data(args.input, spec)
    pred = model.predict(X)
    _print_sequence_scores(args, Y, pred)
    return EXIT_OK


def _print_sequence_scores(args, Y, pred):
    from . import metrics
    print("token accuracy: %.4f   sentence accuracy: %.4f   (%d sentences, %d tokens)"
          % (metrics.token_accuracy(Y, pred), metrics.sentence_accuracy(Y, pred),
             len(Y), sum(map(len, Y))))
    tags = {t for sent in Y for t in sent}
    if args.scheme != "none" and any(t[:2] in ("B-", "I-", "E-", "S-") for t in tags):
        scheme = None if args.scheme == "conlleval" else args.scheme
        print(metrics.conlleval_report(Y, pred, scheme=scheme), end="")


def _plot_format(path):
    """The image format of ``--plot FILE`` (its extension; png without one),
    checked before anything is computed."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise usage_error("--plot needs matplotlib (pip install 'linclass[plot]')") from None
    extension = os.path.splitext(os.fspath(path))[1][1:].lower()
    supported = FigureCanvasBase.get_supported_filetypes()
    if extension and extension not in supported:
        raise usage_error("--plot %s: unknown image format %r (supported: %s)"
                          % (path, extension, ", ".join(sorted(supported))))
    return extension or "png"


def _evaluate_plot(args, model, X, y, pred, plot_format):
    """``evaluate --plot FILE.png [--plot-kind KIND]`` for flat models."""
    from .metrics import plotting
    kind = args.plot_kind
    binary_scores = hasattr(model, "decision_function") and len(model.classes_) == 2
    if kind == "auto":
        kind = "roc" if binary_scores else "confusion"
    if kind in ("roc", "pr") and not binary_scores:
        raise usage_error("--plot-kind %s needs a binary model with decision_function; "
                          "use --plot-kind confusion" % kind)
    if kind == "confusion":
        fig = plotting.plot_confusion_matrix(y, pred)
        what = "confusion matrix"
    else:
        scores = model.decision_function(X)
        draw = plotting.plot_roc if kind == "roc" else plotting.plot_precision_recall
        fig = draw(y, scores, pos_label=model.classes_[1])
        what = "ROC curve" if kind == "roc" else "precision-recall curve"
    with atomic_output(args.plot, "wb") as fh:     # exactly args.plot, never args.plot.png
        fig.savefig(fh, format=plot_format)
    print("%s written to %s" % (what, args.plot))


def _evaluate_conll_file(args):
    """conlleval on an existing file: gold and predicted tags in the last two columns."""
    from .metrics import conlleval_report_from_lines, read_conlleval_lines
    if args.model is not None or args.input is not None:
        raise usage_error("--conll FILE scores an existing file: give no MODEL/INPUT")
    _check_inputs(args.conll)
    lines = io.StringIO(_read_text(args.conll))
    if not lines.getvalue().strip():
        raise data_error("%s holds no tokens" % args.conll)
    if args.scheme not in ("conlleval", "none"):
        Y, pred = read_conlleval_lines(lines, filename=args.conll)
        Y, pred = [s for s in Y if s], [s for s in pred if s]
        _print_sequence_scores(args, Y, pred)
        return EXIT_OK
    report = conlleval_report_from_lines(lines, filename=args.conll)
    print(report, end="")
    return EXIT_OK


def cmd_bench(args):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runner = os.path.join(here, "benchmarks", "run.py")
    if not os.path.exists(runner):
        raise usage_error("the benchmarks live in the source checkout (benchmarks/run.py); "
                          "this installation has none. Run 'python benchmarks/run.py' from "
                          "a clone of linclass.")
    import runpy
    sys.argv = [runner] + args.bench_args
    runpy.run_path(runner, run_name="__main__")
    return EXIT_OK


def cmd_liblinear(args):
    """``liblinear-train`` / ``liblinear-predict``: LIBLINEAR's command lines
    (:mod:`linclass.interop.liblinear_cli`)."""
    from .interop import liblinear_cli
    try:
        return liblinear_cli.run(args, check_inputs=_check_inputs, check_outputs=_check_outputs,
                                 emit=_emit)
    except liblinear_cli.CommandError as exc:
        raise CLIError(str(exc), exc.code) from exc


def cmd_demo(args):
    from .demo import run_demo
    return run_demo(quick=args.quick)


# ---------------------------------------------------------------- parser ---

class _Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line, exiting with status 2 (as
    argparse does)."""

    def error(self, message):
        self.exit(EXIT_USAGE, "%s: error: %s (see '%s --help')\n"
                  % (self.prog, message, self.prog))


def _int_at_least(minimum):
    """An argparse type: an integer >= ``minimum``."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("expected an integer, got %r" % text) from None
        if value < minimum:
            raise argparse.ArgumentTypeError("must be >= %d, got %d" % (minimum, value))
        return value
    parse.__name__ = "integer >= %d" % minimum
    return parse


def _add_debug(parser, default=False):
    parser.add_argument("--debug", action="store_true", default=default,
                        help="show the Python traceback of an error")


def build_parser() -> argparse.ArgumentParser:
    """The ``argparse`` parser of the ``linclass`` command."""
    parser = _Parser(
        prog="linclass",
        description="Linear classifiers and structured predictors: F(x, y) = w . Phi(x, y).",
        epilog="exit status: 0 ok, 2 usage or data error, 3 model file error",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="linclass " + __version__)
    _add_debug(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parser.commands = sub.choices          # command name -> its parser

    p = sub.add_parser("demo", help="train and evaluate models on the data shipped with linclass")
    p.add_argument("--quick", action="store_true", help="fewer epochs")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("models", help="list the model names accepted by 'train --model'")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_models)

    p = sub.add_parser(
        "train", help="fit a model on a data file and save it",
        epilog="example: linclass train --model tagger -p features=chunking -p max_iter=10 "
               "train.conll -o chunker.npz")
    p.add_argument("train", help="training file (CoNLL, CoNLL-U or svmlight; .gz accepted)")
    p.add_argument("--model", "-m", required=True, help="model name (see 'linclass models')")
    p.add_argument("--param", "-p", action="append", metavar="NAME=VALUE",
                   help="model parameter, repeatable (values parsed as Python literals), "
                   "e.g. -p features=chunking -p C=0.5")
    p.add_argument("--output", "-o", help="model file to write (.npz); required unless -v")
    p.add_argument("-v", dest="cross_validation", type=int, metavar="N",
                   help="N-fold cross-validation (as LIBLINEAR's -v): print the accuracy "
                   "and write no model")
    p.add_argument("--format", choices=["auto", "conll", "conllu", "svmlight"], default="auto")
    p.add_argument("--label-column", help="label column (index or CoNLL-U name; default: "
                   "last column for CoNLL, upos for CoNLL-U)")
    p.add_argument("--token-columns", help="comma-separated token columns given to the "
                   "feature template (default: all but the label; CoNLL-U: form)")
    p.add_argument("--verbose", action="store_true",
                   help="progress lines (reading, each fold, the model's own progress)")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("predict", help="label a data file with a saved model")
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--output", "-o", help="output file (default: standard output); sequence "
                   "models write the input back with the label column replaced")
    p.add_argument("--proba", action="store_true", help="flat models: a header 'labels "
                   "L1 L2 ...' then 'label p1 p2 ...' per line (LIBLINEAR's -b 1 format)")
    p.add_argument("--decision", action="store_true", help="flat models: decision values "
                   "after each label (header 'labels ...', or 'decision L' for one score)")
    p.add_argument("--with-gold", action="store_true", help="write the gold label too: "
                   "'gold predicted' per line (flat), or the gold column followed by the "
                   "predicted one at the end of each token line (sequence; the input of "
                   "'evaluate --conll')")
    p.add_argument("--verbose", action="store_true", help="progress lines on standard error")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("parse", help="parse tokenised text (one sentence per line) or the "
                       "words of a tree file with a saved parser model")
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--output", "-o", help="output file (default: standard output), one "
                   "bracketed tree per line; a sentence without parse gets a flat tree "
                   "(NOPARSE (X word) ...); brackets in words are written -LRB- and -RRB-")
    p.add_argument("--verbose", action="store_true", help="progress lines on standard error")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("evaluate", help="score a saved model on a labelled data file, or "
                       "an existing prediction file (--conll)")
    p.add_argument("model", nargs="?")
    p.add_argument("input", nargs="?")
    p.add_argument("--conll", metavar="FILE", help="score FILE with gold and predicted tags "
                   "in its last two columns (the conlleval script's input) instead of a model")
    p.add_argument("--scheme",
                   choices=["conlleval", "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "none"],
                   help="chunk tagging scheme for the conlleval table (default: exactly the "
                   "rules of the conlleval script; 'none' prints no chunk table)")
    p.add_argument("--evalb", action="store_true", help="parser models: evalb's "
                   "per-sentence table and summary")
    p.add_argument("--plot", metavar="FILE.png", help="flat models: write a plot of the "
                   "evaluation (see --plot-kind; needs the 'plot' extra)")
    p.add_argument("--plot-kind", choices=["auto", "roc", "pr", "confusion"],
                   help="what --plot draws: ROC or precision-recall curve (binary models "
                   "with decision values) or confusion matrix (default auto: ROC for "
                   "binary models, else the confusion matrix)")
    p.add_argument("--max-queries", type=_int_at_least(0),
                   help="ranking models: per-query rows to print (default 20; the mean "
                   "covers all)")
    p.add_argument("--verbose", action="store_true", help="progress lines on standard error")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=cmd_evaluate)

    for name, usage in (("liblinear-train", "[options] training_set_file [model_file]"),
                        ("liblinear-predict", "[options] test_file model_file output_file")):
        p = sub.add_parser(name, add_help=False, usage="linclass %s %s" % (name, usage),
                           help="LIBLINEAR's %s command line, run by linclass (see "
                           "'linclass %s --help')" % (name.split("-")[1], name))
        p.add_argument("liblinear_args", nargs=argparse.REMAINDER, help="LIBLINEAR's options "
                       "and file names")
        p.set_defaults(func=cmd_liblinear)

    p = sub.add_parser("bench", help="run the benchmark suites (source checkout only)",
                       add_help=False)
    p.add_argument("bench_args", nargs=argparse.REMAINDER,
                   help="arguments of benchmarks/run.py, e.g. --quick svmlight")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``linclass`` command with ``argv`` (default ``sys.argv[1:]``).

    Returns the exit status (0 ok, 2 usage or data, 3 model file; see the
    module docstring); argparse's own usage errors and ``--help`` raise
    ``SystemExit`` with status 1 and 0.
    """
    parser = build_parser()
    argv: List[str] = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        # everything after 'bench' (including --help) belongs to benchmarks/run.py
        return cmd_bench(argparse.Namespace(command="bench", bench_args=argv[1:]))
    debug = argv[:1] == ["--debug"]
    if argv[debug:debug + 1] in (["liblinear-train"], ["liblinear-predict"]):
        # LIBLINEAR's options (-c 4, -w-1 0.5, -B -1) are not argparse's: parsed by the command
        args = argparse.Namespace(command=argv[debug], func=cmd_liblinear, debug=debug,
                                  liblinear_args=argv[debug + 1:])
    else:
        args, unknown = parser.parse_known_args(argv)
        if unknown:     # reported by the command's own parser: "linclass predict: error: ..."
            parser.commands.get(args.command, parser).error(
                "unrecognized arguments: %s" % " ".join(unknown))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("linclass %s: interrupted" % args.command, file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of the standard output went away (``| head``): stop quietly
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        code, message = _error_line(exc)
    print("linclass %s: error: %s" % (args.command, message), file=sys.stderr)
    return code


def _silence_stdout():
    """Point the standard output at /dev/null, so that the interpreter's final
    flush does not report the broken pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def _error_line(exc):
    """(exit status, one-line message) of an exception raised by a command."""
    if isinstance(exc, CLIError):
        code, message = exc.code, str(exc)
    elif isinstance(exc, OSError):
        code, message = EXIT_DATA, _os_error_message(exc)
    elif isinstance(exc, (ValueError, KeyError)):     # DataFormatError is a ValueError
        code, message = EXIT_DATA, str(exc) if isinstance(exc, ValueError) else repr(exc)
    elif isinstance(exc, (MemoryError, RecursionError)):
        code, message = EXIT_DATA, "%s: the input is too large or too deeply nested" \
            % type(exc).__name__
    else:
        code, message = EXIT_DATA, "%s: %s (an unexpected error; --debug shows where)" \
            % (type(exc).__name__, exc)
    message = " ".join(message.split()) or type(exc).__name__      # one line
    return code, message


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
