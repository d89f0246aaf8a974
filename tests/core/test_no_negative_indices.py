"""No negative (wraparound-dependent) indexing anywhere in the Cython sources.

The core is compiled with ``wraparound=False``: there ``a[-1]`` is not the last
element.  On memoryviews it reads out of bounds; on numpy arrays and other
Python objects Cython passes the index through unchanged, which numpy 2.5
refuses (``IndexError: index -3 is out of bounds``) -- that took down every
1-slack structural SVM fit once.  This scan keeps such indexing out: a
subscript may not start with a minus sign, and no slice bound or step inside
a subscript may be negative.  Write ``a[a.shape[0] - 1]`` instead.
"""
import io
import pathlib
import tokenize

import pytest

import linclass

CORE = pathlib.Path(linclass.__file__).resolve().parent / "_core"
SOURCES = sorted(CORE.glob("*.pyx")) + sorted(CORE.glob("*.pxd"))


def negative_subscripts(text):
    """(line, snippet) of each subscript that starts a bound or index with ``-``."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                tokenize.INDENT, tokenize.DEDENT, tokenize.STRING)]
    found = []
    stack = []          # one entry per open bracket: True when it opens a subscript
    prev = None
    for tok in tokens:
        if tok.type == tokenize.OP and tok.string in "([{":
            subscript = (tok.string == "[" and prev is not None
                         and (prev.type == tokenize.NAME or prev.string in (")", "]")))
            stack.append(subscript)
        elif tok.type == tokenize.OP and tok.string in ")]}":
            if stack:
                stack.pop()
        elif (tok.type == tokenize.OP and tok.string == "-" and stack and stack[-1]
              and prev is not None and prev.string in ("[", ":", ",")):
            found.append((tok.start[0], tok.line.strip()))
        prev = tok
    return found


def test_scanner_finds_what_it_should():
    bad = "x = a[-1]\ny = b[1:-1]\nz = c[::-1]\nw = d[i, -2]\n"
    assert [line for line, _ in negative_subscripts(bad)] == [1, 2, 3, 4]
    good = "x = a[a.shape[0] - 1]\ny = [-1, 2]\nz = f(-1)[0]\nw = b[i - 1]\nv = p[0 - e]\n"
    assert negative_subscripts(good) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_negative_indices(path):
    found = negative_subscripts(path.read_text())
    assert not found, "%s: negative indices (wraparound is off):\n%s" % (
        path.name, "\n".join("  line %d: %s" % f for f in found))
