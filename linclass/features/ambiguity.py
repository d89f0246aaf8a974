"""Ambiguity classes (tag-dictionary features) as an extra token column.

The *ambiguity class* of a word is the set of tags it carries in the
training data (``"ADJ|NOUN|VERB"``), the feature of Cutting et al.'s HMM
tagger [1]_ and of many later taggers: it lets a tagger generalise over words
that share the same ambiguity, and, at the neighbours ``a[-1]``, ``a[1]``,
``a[2]``, gives a first-order model the likely tags of the words to its right.

Computed naively, every training word's class contains its own gold tag, so
the class is a near-perfect feature on the training data and a far weaker
one on new text, and the tagger learns to trust it too much.
:meth:`AmbiguityClasses.fit_transform` therefore *jackknifes* (cross-fits, as
scikit-learn's ``TargetEncoder.fit_transform`` does): sentence ``i`` belongs
to fold ``i % n_folds`` and gets classes from the tag counts of the other
folds, so training words are unseen (or rare) exactly as often as new words
will be.  :meth:`AmbiguityClasses.transform` uses the counts of all training
sentences.  Thus ``fit_transform(X, y)`` differs from
``fit(X, y).transform(X)`` -- the former is what the tagger should train on.

Words without a class (unseen in the counts used): the class of the
lower-cased word when that was seen; else ``"U1:"`` (capitalised) or
``"U0:"`` followed by the tags, each of at least ``min_suffix_fraction`` of
the tag counts, of the rare training words (seen at most ``max_rare_count``
times) that share the word's lower-cased suffix of ``n_suffix`` characters;
else ``"U1"`` / ``"U0"``.

References
----------
.. [1] D. Cutting, J. Kupiec, J. Pedersen, P. Sibun, "A practical
   part-of-speech tagger", ANLP 1992.
.. [2] D. H. Wolpert, "Stacked generalization", Neural Networks 5(2), 1992
   (cross-fitted features).
"""
import collections
import itertools
import numbers

import numpy as np

from ..base import BaseEstimator, TransformerMixin
from ..exceptions import NotFittedError

__all__ = ["AmbiguityClasses"]


def _suffix_string(d, min_fraction):
    total = sum(d.values())
    return "|".join(sorted(t for t, k in d.items() if k > 0 and k >= min_fraction * total))


class _Tables:
    """What every fold's dictionary shares: the counts of all training words,
    their classes, and the rare-word suffix counts."""

    def __init__(self, counts, n_suffix, max_rare_count, min_suffix_fraction):
        self.full = counts                       # word -> {tag: count}
        self.totals = {w: sum(c.values()) for w, c in counts.items()}
        self.classes = {w: "|".join(sorted(c)) for w, c in counts.items()}
        self.n_suffix = n_suffix
        self.max_rare_count = max_rare_count
        self.min_suffix_fraction = min_suffix_fraction
        self.suffix_counts = {}                  # suffix -> {tag: count} of rare words
        if n_suffix > 0:
            for w, c in counts.items():
                if self.totals[w] <= max_rare_count:
                    d = self.suffix_counts.setdefault(self.suffix_of(w), {})
                    for tag, k in c.items():
                        d[tag] = d.get(tag, 0) + k
        self.suffixes = {s: _suffix_string(d, min_suffix_fraction)
                         for s, d in self.suffix_counts.items()}

    def suffix_of(self, word):
        return word.lower()[max(0, len(word) - self.n_suffix):]


class _Dictionary:
    """The class lookup of the tag counts ``full - held`` (``held``: the tag
    counts of a held-out fold, or empty); only the held words' classes and
    suffixes differ from the shared tables."""

    def __init__(self, tables, held):
        self.tables = tables
        self.held = held
        self.n_suffix = tables.n_suffix
        self.suffix = tables.suffixes
        if not held or self.n_suffix == 0:
            return
        limit = tables.max_rare_count
        changed = {}                             # suffix -> {tag: delta}
        for w, h in held.items():
            c = tables.full[w]
            total = tables.totals[w]
            rest = total - sum(h.values())
            if total <= limit:                   # w was in the rare-word table
                d = changed.setdefault(tables.suffix_of(w), {})
                for tag, k in c.items():
                    d[tag] = d.get(tag, 0) - k
            if 0 < rest <= limit:                # it is, with the held counts removed
                d = changed.setdefault(tables.suffix_of(w), {})
                for tag, k in c.items():
                    k -= h.get(tag, 0)
                    if k > 0:
                        d[tag] = d.get(tag, 0) + k
        if changed:
            self.suffix = dict(tables.suffixes)
            for sfx, delta in changed.items():
                d = dict(tables.suffix_counts.get(sfx, {}))
                for tag, k in delta.items():
                    d[tag] = d.get(tag, 0) + k
                string = _suffix_string(d, tables.min_suffix_fraction)
                if string:
                    self.suffix[sfx] = string
                else:
                    self.suffix.pop(sfx, None)

    def word_class(self, word):
        """The ambiguity class of ``word`` in these counts, or None."""
        h = self.held.get(word)
        if h is None:
            return self.tables.classes.get(word)
        c = self.tables.full[word]
        tags = sorted(t for t, k in c.items() if k - h.get(t, 0) > 0)
        return "|".join(tags) if tags else None

    def lookup(self, word):
        c = self.word_class(word)
        if c is None:
            c = self.word_class(word.lower())
        if c is not None:
            return c
        head = "U1" if word[:1].isupper() else "U0"
        if self.n_suffix > 0:
            s = self.suffix.get(self.tables.suffix_of(word))
            if s:
                return head + ":" + s
        return head


def _as_list(X):
    """X as a list when it is an iterable of sentences (a generator is read once)."""
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__") or isinstance(X, list):
        return X
    return list(X)


def _count(words, tags):
    """word -> {tag: count} over the sentences ``words`` / ``tags``."""
    counts = {}
    pairs = collections.Counter(zip(itertools.chain.from_iterable(words),
                                    itertools.chain.from_iterable(tags)))
    for (w, t), n in pairs.items():
        d = counts.get(w)
        if d is None:
            d = counts[w] = {}
        d[t] = n
    return counts


#: Tag sets are bit masks in an int64 while there are at most this many tags
#: (UPOS has 17); more tags take the dictionary path fold by fold.
_MAX_MASK_TAGS = 62


def _mask_strings(masks, tag_names):
    """``"|".join`` of the tag names whose bits are set, for each mask."""
    return ["|".join(tag_names[b] for b in range(len(tag_names)) if (m >> b) & 1)
            for m in masks]


class _Encoded:
    """The training tokens as integer ids: ``word_id``/``tag_id`` per token,
    ``vocabulary`` (first-occurrence order), ``tag_names`` (sorted) and the
    ``(n_words, n_tags)`` count matrix ``full``."""

    def __init__(self, words, tags):
        flat_words = list(itertools.chain.from_iterable(words))
        self.lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self.vocabulary = list(dict.fromkeys(flat_words))
        self.index = {w: i for i, w in enumerate(self.vocabulary)}
        # np.array of a list: twice as fast as np.fromiter over the map
        self.word_id = np.array(list(map(self.index.__getitem__, flat_words)), dtype=np.int64)
        flat_tags = list(itertools.chain.from_iterable(tags))
        self.tag_names = sorted(set(flat_tags))
        tag_index = {t: i for i, t in enumerate(self.tag_names)}
        self.tag_id = np.array(list(map(tag_index.__getitem__, flat_tags)), dtype=np.int64)
        V, T = len(self.vocabulary), len(self.tag_names)
        self.cell = self.word_id * T + self.tag_id
        self.full = np.bincount(self.cell, minlength=V * T).reshape(V, T)

    def counts(self):
        """word -> {tag: count}, as :func:`_count` gives."""
        rows, cols = np.nonzero(self.full)
        out = {}
        vocabulary, tag_names = self.vocabulary, self.tag_names
        for v, t, n in zip(rows.tolist(), cols.tolist(), self.full[rows, cols].tolist()):
            d = out.get(vocabulary[v])
            if d is None:
                d = out[vocabulary[v]] = {}
            d[tag_names[t]] = n
        return out


def _jackknife_classes(encoded, n_folds, tables):
    """The jackknifed class of every token, as one list of strings per sentence.

    The same classes as looking each token up in the dictionary of the other
    folds' counts (:class:`_Dictionary`), computed for all words of a fold at
    once: tag counts as a ``(n_words, n_tags)`` matrix, each fold's held counts
    subtracted, classes and the rare-word suffix table as bit masks.
    """
    vocabulary, tag_names = encoded.vocabulary, encoded.tag_names
    index, word_id, cell, full = encoded.index, encoded.word_id, encoded.cell, encoded.full
    lengths = encoded.lengths
    V, T = len(vocabulary), len(tag_names)
    bits = np.left_shift(np.int64(1), np.arange(T, dtype=np.int64))
    lower_id = np.fromiter((index.get(w.lower(), -1) for w in vocabulary), dtype=np.int64,
                           count=V)
    capital = np.fromiter((w[:1].isupper() for w in vocabulary), dtype=np.int64, count=V)
    n_suffix = tables.n_suffix
    if n_suffix > 0:
        suffix_index = {}
        suffix_id = np.fromiter((suffix_index.setdefault(tables.suffix_of(w), len(suffix_index))
                                 for w in vocabulary), dtype=np.int64, count=V)
        n_suffixes = len(suffix_index)
    fold = np.repeat(np.arange(len(lengths), dtype=np.int64) % n_folds, lengths)
    # key of every token's class: a tag mask (> 0) for a known word, else
    # -1 - (2 * suffix mask + capitalised) for the fallback
    keys = np.empty(len(word_id), dtype=np.int64)
    for k in range(n_folds):
        tokens = np.flatnonzero(fold == k)
        if tokens.size == 0:
            continue
        rest = full - np.bincount(cell[tokens], minlength=V * T).reshape(V, T)
        mask = (rest > 0).astype(np.int64) @ bits
        w = word_id[tokens]
        key = mask[w]
        unseen = np.flatnonzero(key == 0)
        lw = lower_id[w[unseen]]
        key[unseen] = np.where(lw >= 0, mask[np.maximum(lw, 0)], 0)
        unseen = unseen[key[unseen] == 0]
        fallback = capital[w[unseen]]
        if n_suffix > 0 and unseen.size:
            total = rest.sum(axis=1)
            rare = np.flatnonzero((total > 0) & (total <= tables.max_rare_count))
            counts = np.zeros((n_suffixes, T), dtype=np.int64)
            np.add.at(counts, suffix_id[rare], rest[rare])
            kept = (counts > 0) & (counts >= tables.min_suffix_fraction
                                   * counts.sum(axis=1)[:, None])
            suffix_mask = kept.astype(np.int64) @ bits
            fallback = fallback + 2 * suffix_mask[suffix_id[w[unseen]]]
        key[unseen] = -1 - fallback
        keys[tokens] = key
    unique, inverse = np.unique(keys, return_inverse=True)
    names = []
    for u in unique.tolist():
        if u > 0:
            names.append(_mask_strings([u], tag_names)[0])
        else:
            code = -1 - u
            head = "U1" if code & 1 else "U0"
            names.append(head + ":" + _mask_strings([code >> 1], tag_names)[0]
                         if code >> 1 else head)
    strings = np.array(names, dtype=object)[inverse.ravel()].tolist()
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    return [strings[a:b] for a, b in zip(starts, ends)]


class AmbiguityClasses(BaseEstimator, TransformerMixin):
    """The set of tags each word had in training, appended as a token column.

    Parameters
    ----------
    n_folds : int, default=10
        Folds of the jackknife in :meth:`fit_transform` (>= 2): sentence
        ``i`` gets classes from the sentences of the other folds
        (``j % n_folds != i % n_folds``).
    column : int, default=0
        Which column of a token holds the word (plain-string tokens are the
        word themselves).
    n_suffix : int, default=3
        Length of the lower-cased suffix that guesses the class of a word
        without one (0: no guess, only ``"U0"``/``"U1"``).
    max_rare_count : int, default=1
        Words seen at most this often form the suffix table (unseen words
        resemble rare ones).
    min_suffix_fraction : float, default=0.2
        A tag enters a suffix's class when it has at least this fraction of
        the suffix's tag counts (in ``[0, 1]``).

    Attributes
    ----------
    word_classes_ : dict
        Word -> ambiguity class (str) over all training sentences.
    tag_counts_ : dict
        Word -> {tag: count} over all training sentences (the fitted state).
    n_words_ : int
        Distinct training words.

    Examples
    --------
    >>> amb = AmbiguityClasses(n_folds=2)
    >>> X = [["the", "can"], ["a", "can"], ["I", "can"]]
    >>> y = [["DET", "NOUN"], ["DET", "NOUN"], ["PRON", "AUX"]]
    >>> amb.fit(X, y).transform([["the", "can"]])
    [[('the', 'DET'), ('can', 'AUX|NOUN')]]
    """

    def __init__(self, n_folds=10, column=0, n_suffix=3, max_rare_count=1,
                 min_suffix_fraction=0.2):
        self.n_folds = n_folds
        self.column = column
        self.n_suffix = n_suffix
        self.max_rare_count = max_rare_count
        self.min_suffix_fraction = min_suffix_fraction

    def _check_params(self):
        for name, low in (("n_folds", 2), ("column", 0), ("n_suffix", 0),
                          ("max_rare_count", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                    or value < low:
                raise ValueError("%s must be an integer >= %d, got %r" % (name, low, value))
        f = self.min_suffix_fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0.0 <= f <= 1.0:
            raise ValueError("min_suffix_fraction must be a number in [0, 1], got %r" % (f,))

    def _words(self, X, where):
        from .clusters import _sentence_words
        return _sentence_words(X, int(self.column), where)

    def _check_tags(self, words, y, where):
        if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
            raise ValueError("%s: y must be a list of tag sequences, got %r"
                             % (where, type(y).__name__))
        if len(y) != len(words):
            raise ValueError("%s: X has %d sentences but y has %d" % (where, len(words), len(y)))
        tags = []
        for i, (ws, ts) in enumerate(zip(words, y)):
            if isinstance(ts, (str, bytes)) or not hasattr(ts, "__len__") \
                    or len(ts) != len(ws):
                raise ValueError("%s: sentence %d has %d tokens but its tag sequence is %r"
                                 % (where, i, len(ws), ts))
            for j, t in enumerate(ts):
                if t is None or (isinstance(t, float) and t != t):
                    raise ValueError("%s: y[%d][%d] is %r; tags must be strings or numbers"
                                     % (where, i, j, t))
            ts = [str(t) for t in ts]
            tags.append(ts)
        return tags

    def _dictionary(self, held):
        return _Dictionary(self._tables, held)

    def _fit(self, X, y, where):
        self._check_params()
        words = self._words(X, where)
        tags = self._check_tags(words, y, where)
        encoded = _Encoded(words, tags)
        if not encoded.vocabulary:
            raise ValueError("%s: X holds no tokens" % where)
        counts = encoded.counts()
        self.tag_counts_ = counts
        self._prepare()
        self.word_classes_ = dict(self._tables.classes)
        self.n_words_ = len(counts)
        return words, tags, encoded

    def _prepare(self):
        """The lookup tables derived from ``tag_counts_`` (after fit or load)."""
        self._tables = _Tables(self.tag_counts_, int(self.n_suffix),
                               int(self.max_rare_count), float(self.min_suffix_fraction))
        self._full = self._dictionary({})

    def _set_state(self, state):
        super()._set_state(state)
        self._prepare()

    def fit(self, X, y):
        """Count the tags ``y`` of the words of ``X`` (all sentences)."""
        self._fit(X, y, "AmbiguityClasses.fit")
        return self

    def fit_transform(self, X, y):
        """Fit on all of ``X``, and return ``X`` with *jackknifed* classes.

        Sentence ``i`` gets classes from the tag counts of the sentences in
        the other folds (``j % n_folds != i % n_folds``): the column to train
        a tagger on.
        """
        X = _as_list(X)
        words, tags, encoded = self._fit(X, y, "AmbiguityClasses.fit_transform")
        K = int(self.n_folds)
        if len(encoded.tag_names) <= _MAX_MASK_TAGS:
            per_sentence = _jackknife_classes(encoded, K, self._tables)
            return [self._append_classes(sent, classes)
                    for sent, classes in zip(X, per_sentence)]
        out = [None] * len(words)                # many tags: fold by fold, in dictionaries
        for k in range(K):
            held = range(k, len(words), K)
            dictionary = self._dictionary(_count([words[i] for i in held],
                                                 [tags[i] for i in held]))
            classes = {}
            for i in held:
                out[i] = self._append(X[i], words[i], dictionary, classes)
        return out

    def transform(self, X):
        """Each token as a tuple with its ambiguity class appended as a new last column."""
        if not hasattr(self, "tag_counts_"):
            raise NotFittedError("This AmbiguityClasses instance is not fitted yet; "
                                 "call fit first")
        X = _as_list(X)
        words = self._words(X, "AmbiguityClasses.transform")
        classes = {}
        return [self._append(sent, ws, self._full, classes) for sent, ws in zip(X, words)]

    @staticmethod
    def _append_classes(sent, classes):
        return [tok + (c,) if tok.__class__ is tuple
                else ((tok, c) if isinstance(tok, str) else tuple(tok) + (c,))
                for tok, c in zip(sent, classes)]

    @staticmethod
    def _append(sent, words, dictionary, classes):
        for w in words:
            if w not in classes:
                classes[w] = dictionary.lookup(w)
        return [(tok, classes[w]) if isinstance(tok, str) else tuple(tok) + (classes[w],)
                for tok, w in zip(sent, words)]
