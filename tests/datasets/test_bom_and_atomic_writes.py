"""#35: the text readers of linclass.datasets skip a leading UTF-8 byte order
mark (it is not part of the first token), and the writers given a path
replace the file only once it is complete."""
import bz2
import gzip
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp

from linclass.datasets import (dump_svmlight_file, load_svmlight_file, read_conll,
                               read_trees, write_conll)
from linclass.datasets import svmlight as svmlight_module
from linclass.exceptions import DataFormatError

BOM = "\ufeff".encode("utf-8")
CONLLU = "1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n"


@pytest.mark.parametrize("opener", [open, gzip.open, bz2.open])
def test_conll_reader_drops_a_leading_bom(tmp_path, opener):
    suffix = {open: "", gzip.open: ".gz", bz2.open: ".bz2"}[opener]
    path = tmp_path / ("bom.conll" + suffix)
    with opener(path, "wb") as fh:
        fh.write(BOM + b"He PRP B-NP\nsees VBZ B-VP\n\n")
    sentences = read_conll(path)
    assert sentences[0][0] == ("He", "PRP", "B-NP")
    with opener(path, "wb") as fh:
        fh.write(b"He PRP B-NP\nsees VBZ B-VP\n\n")
    assert read_conll(path)[0][0] == sentences[0][0]


def test_conllu_and_stream_readers_drop_a_leading_bom(tmp_path):
    (tmp_path / "a.conllu").write_bytes(BOM + CONLLU.encode())
    assert read_conll(tmp_path / "a.conllu")[0][0][1] == "He"
    assert read_conll(io.BytesIO(BOM + CONLLU.encode()), format="conllu")[0][0][0] == "1"
    assert read_conll(io.StringIO("\ufeffHe PRP\n\n"))[0][0] == ("He", "PRP")


def test_only_a_leading_bom_is_dropped(tmp_path):
    (tmp_path / "a.conll").write_bytes(b"He PRP\n\n" + BOM + b"x Y\n\n")
    assert read_conll(tmp_path / "a.conll")[1][0] == ("\ufeffx", "Y")


def test_tree_and_svmlight_readers_drop_a_leading_bom(tmp_path):
    (tmp_path / "a.mrg").write_bytes(BOM + b"(S (NN dog))\n")
    assert str(read_trees(tmp_path / "a.mrg")[0]) == "(S (NN dog))"
    (tmp_path / "a.svm").write_bytes(BOM + b"1 1:2\n-1 2:3\n")
    (tmp_path / "plain.svm").write_bytes(b"1 1:2\n-1 2:3\n")
    X, y = load_svmlight_file(tmp_path / "a.svm", zero_based=True)
    assert y.tolist() == [1.0, -1.0] and X.toarray().tolist() == [[0, 2, 0], [0, 0, 3]]
    for zero_based in ("auto", False):
        X, y = load_svmlight_file(tmp_path / "a.svm", zero_based=zero_based)
        X_plain, y_plain = load_svmlight_file(tmp_path / "plain.svm", zero_based=zero_based)
        assert (X != X_plain).nnz == 0 and y.tolist() == y_plain.tolist()
    (tmp_path / "b.svm").write_bytes(b"1 1:2\n" + BOM + b"-1 2:3\n")
    with pytest.raises(DataFormatError, match="b.svm:2"):
        load_svmlight_file(tmp_path / "b.svm")


def temp_files(directory):
    return [n for n in os.listdir(directory) if n.endswith(".tmp")]


def test_dump_svmlight_file_failing_midway_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "data.svm"
    path.write_bytes(b"old contents\n")

    class Broken:
        @staticmethod
        def write_svmlight(fobj, **kwargs):
            fobj.write(b"1 1:1\n")
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(svmlight_module, "_svmlight", Broken)
    with pytest.raises(OSError, match="No space"):
        dump_svmlight_file(np.eye(2), [0, 1], path)
    assert path.read_bytes() == b"old contents\n"
    assert temp_files(tmp_path) == []


def test_dump_svmlight_file_replaces_the_file_keeping_its_permissions(tmp_path):
    path = tmp_path / "data.svm"
    path.write_bytes(b"old contents\n")
    path.chmod(0o640)
    dump_svmlight_file(sp.csr_matrix(np.eye(2)), [0, 1], path)
    X, y = load_svmlight_file(path)
    assert X.toarray().tolist() == [[1, 0], [0, 1]] and y.tolist() == [0, 1]
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize("name", ["out.conll", "out.conll.gz", "out.conll.bz2"])
def test_write_conll_failing_keeps_the_old_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"old contents\n")
    with pytest.raises(DataFormatError):
        write_conll([[("He", "PRP")], [("New York", "NNP")]], path)
    assert path.read_bytes() == b"old contents\n"
    with pytest.raises(ValueError, match="not a regular file"):
        write_conll([[("He", "PRP")]], tmp_path)
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize("name", ["out.conll", "out.conll.gz", "out.conll.bz2"])
def test_write_conll_round_trip_through_a_path(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"old contents\n")
    sentences = [[("He", "PRP", "B-NP"), ("runs", "VBZ", "B-VP")], [("Go", "VB", "O")]]
    write_conll(sentences, path)
    assert [list(s) for s in read_conll(path)] == sentences
    assert temp_files(tmp_path) == []


def test_write_conll_to_a_missing_directory_raises_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_conll([[("He", "PRP")]], tmp_path / "missing" / "out.conll")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not os.path.exists(os.devnull), reason="needs a null device")
def test_readers_refuse_devices():
    # the check that keeps /dev/zero from being read without end (and without bound on
    # memory), tried on the device that is harmless should it ever regress
    for reader in (read_conll, read_trees, load_svmlight_file):
        with pytest.raises(ValueError, match="is a device"):
            reader(os.devnull)


@pytest.mark.parametrize("opener", [open, gzip.open])
def test_undecodable_bytes_are_reported_with_their_line(tmp_path, opener):
    # the text reader decodes in chunks: the line comes from the raw bytes
    path = tmp_path / ("bad.conll" + (".gz" if opener is gzip.open else ""))
    body = "".join("w%d X O\n" % i for i in range(5000)).encode() + b"espa\xf1ol NC O\n\n"
    with opener(path, "wb") as f:
        f.write(b"x\r\n" + body)
    with pytest.raises(DataFormatError, match="cannot decode") as info:
        read_conll(str(path))
    assert info.value.lineno == 5002
    assert str(info.value).startswith(str(path) + ":5002: ")
