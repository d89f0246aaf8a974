"""Readers, writers and loaders of data sets.

* ``load_svmlight_file`` / ``dump_svmlight_file`` -- svmlight/libsvm format (Cython reader)
* ``read_conll`` / ``write_conll`` -- CoNLL / CoNLL-U column files
* ``read_trees`` / ``Tree`` -- bracketed (Penn Treebank) trees
* ``load_*`` -- the benchmark data in ``../shared/data`` (or ``$LINCLASS_DATA``)
  and ``load_bundled_*`` -- the small data sets shipped inside the package.

Every reader opens ``.gz`` files transparently and raises
:class:`linclass.exceptions.DataFormatError` (a ``ValueError``) naming the
file and line of malformed input; a leading UTF-8 byte order mark is
skipped.  Every writer given a path replaces the file atomically
(``linclass._atomic``: a failed write leaves the previous file as it was).
May import: ``linclass._core`` (the svmlight parser), ``linclass._atomic``,
``linclass.exceptions``; nothing from the models.
"""
import importlib

# public name -> submodule that defines it (imported on first use)
_EXPORTS = {
    "load_svmlight_file": "svmlight",
    "load_svmlight_files": "svmlight",
    "dump_svmlight_file": "svmlight",
    "read_conll": "conll",
    "write_conll": "conll",
    "Sentence": "conll",
    "read_trees": "trees",
    "parse_tree": "trees",
    "Tree": "trees",
    "data_home": "_loaders",
    "load_conll2000": "_loaders",
    "load_ud_english_ewt": "_loaders",
    "load_conll2002": "_loaders",
    "load_ptb_sample": "_loaders",
    "load_20newsgroups": "_loaders",
    "load_libsvm_binary": "_loaders",
    "load_lambdarank": "_loaders",
    "load_citation_graph": "_loaders",
    "load_balibase": "_loaders",
    "load_blosum62": "_loaders",
    "load_bundled_ud_english": "_loaders",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError("module 'linclass.datasets' has no attribute %r" % name) from None
    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
