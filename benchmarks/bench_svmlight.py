"""svmlight reader and writer: linclass vs scikit-learn.

Cases, on the LIBSVM binary sets in ``<data>/libsvm_binary``:

* ``load .gz``: ``load_svmlight_file(path)`` on the gzip file (decompression
  included, as a user would call it);
* ``load bytes``: the same on the already decompressed bytes (``BytesIO``),
  which isolates the parser;
* ``dump``: ``dump_svmlight_file(X, y, BytesIO())`` of the loaded data.

Quality: ``identical`` when linclass's output equals scikit-learn's (same
matrix values/indices/shape and labels; for the writer, both files read back
to the same arrays), ``DIFFERENT`` otherwise.
"""
import gzip
import io
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _harness  # noqa: E402

from linclass.datasets.svmlight import dump_svmlight_file, load_svmlight_file  # noqa: E402

FILES = ["a9a.gz", "a9a.t.gz", "w8a.gz"]
NOTES = ["data: LIBSVM a9a (train/test) and w8a from `libsvm_binary/` "
         "(see its README for provenance)",
         "linclass returns int32 indices, scikit-learn int64; 'identical' compares values"]


def same_output(a, b):
    """(X, y) pairs equal: shape, indptr, indices, data and labels."""
    (Xa, ya), (Xb, yb) = a[:2], b[:2]
    return (Xa.shape == Xb.shape and np.array_equal(Xa.indptr, Xb.indptr)
            and np.array_equal(Xa.indices, Xb.indices)
            and np.array_equal(Xa.data, Xb.data) and np.array_equal(ya, yb))


def _describe(X):
    return "%dx%d nnz=%d" % (X.shape[0], X.shape[1], X.nnz)


def run(quick, data_dir):
    repeat = _harness.n_repeats(quick)
    sk = _harness.import_peer("sklearn.datasets")
    peer = "scikit-learn" if sk is not None else None
    missing_peer = None if sk is not None else "scikit-learn is not installed: linclass only"
    rows = []
    for name in FILES:
        path = pathlib.Path(data_dir) / "libsvm_binary" / name
        short = name[:-3]
        if not path.exists():
            rows.append(_harness.make_row("load .gz", short, peer, None, None,
                                          note="data file %s not found" % path))
            continue
        raw = gzip.open(path, "rb").read()

        # --- load from the .gz file
        lc_s, ours = _harness.median_time(lambda: load_svmlight_file(path), repeat)
        if sk is not None:
            sk_s, ref = _harness.median_time(lambda: sk.load_svmlight_file(str(path)), repeat)
            quality = "identical" if same_output(ours, ref) else "DIFFERENT"
            rows.append(_harness.make_row("load .gz", short, peer, sk_s, lc_s,
                                          _describe(ref[0]), quality))
        else:
            rows.append(_harness.make_row("load .gz", short, None, None, lc_s, None,
                                          _describe(ours[0]), note=missing_peer))

        # --- load from decompressed bytes (parser only)
        lc_s, ours_b = _harness.median_time(
            lambda: load_svmlight_file(io.BytesIO(raw)), repeat)
        if sk is not None:
            sk_s, ref_b = _harness.median_time(
                lambda: sk.load_svmlight_file(io.BytesIO(raw)), repeat)
            quality = "identical" if same_output(ours_b, ref_b) else "DIFFERENT"
            rows.append(_harness.make_row("load bytes", short, peer, sk_s, lc_s,
                                          "%.1f MB" % (len(raw) / 1e6), quality))
        else:
            rows.append(_harness.make_row("load bytes", short, None, None, lc_s, None,
                                          "%.1f MB" % (len(raw) / 1e6), note=missing_peer))

        # --- dump
        X, y = ours

        def dump_ours():
            out = io.BytesIO()
            dump_svmlight_file(X, y, out)
            return out.getvalue()

        lc_s, text_ours = _harness.median_time(dump_ours, repeat)
        if sk is not None:
            def dump_sk():
                out = io.BytesIO()
                sk.dump_svmlight_file(X, y, out)
                return out.getvalue()

            sk_s, text_sk = _harness.median_time(dump_sk, repeat)
            back_ours = sk.load_svmlight_file(io.BytesIO(text_ours), n_features=X.shape[1])
            back_sk = sk.load_svmlight_file(io.BytesIO(text_sk), n_features=X.shape[1])
            same = same_output(back_ours, back_sk) and same_output(back_ours, (X, y))
            note = None
            if same and text_ours != text_sk:
                note = "same arrays after reading back, different bytes"
            rows.append(_harness.make_row("dump", short, peer, sk_s, lc_s,
                                          "%.1f MB" % (len(text_sk) / 1e6),
                                          "identical" if same else "DIFFERENT", note=note))
        else:
            back = load_svmlight_file(io.BytesIO(text_ours), n_features=X.shape[1])
            rows.append(_harness.make_row(
                "dump", short, None, None, lc_s, None,
                "round trip ok" if same_output(back, (X, y)) else "ROUND TRIP FAILED",
                note=missing_peer))
    return rows


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=pathlib.Path, default=_harness.default_data_dir())
    args = parser.parse_args()
    print(_harness.format_table(run(args.quick, args.data)))
