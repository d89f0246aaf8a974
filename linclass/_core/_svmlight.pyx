"""svmlight / libsvm text format: parser and writer kernels.

The reader works on the whole (decompressed) file held in one ``bytes``
buffer.  A first pass counts ``':'``, ``','`` and ``'\\n'`` to size every
output array exactly once (upper bounds: no reallocation in the loop), then
one ``nogil`` pass tokenises the lines and converts the numbers with a small
decimal parser (Clinger's exact fast path, ``strtod`` for the rare long or
extreme literals).  Errors are reported as a status plus the line and the
offending token, and raised as :class:`linclass.exceptions.DataFormatError`
after the ``nogil`` block.

The writer formats rows into a fixed-size ``char`` buffer without the GIL and
hands each full buffer to ``f.write``.  Values are written in the shortest of
``%.15g``/``%.16g``/``%.17g`` that reads back to the same double (integral
values as plain integers), so a dump/load round trip is exact.

References
----------
T. Joachims, "Making large-scale SVM learning practical", in Advances in
Kernel Methods, MIT Press, 1999 (the svmlight format).
W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport strtod
from libc.stdio cimport snprintf
from libc.string cimport memchr, memcpy
from libc.math cimport NAN, INFINITY, copysign, signbit, isnan, isinf, fabs, floor

import numpy as np

from linclass.exceptions import DataFormatError

# ---------------------------------------------------------------------------
# status codes of the parser
cdef enum:
    OK = 0
    ERR_LABEL = 1            # label is not a number
    ERR_MISSING_LABEL = 2    # first token is index:value (no label)
    ERR_FEATURE_SYNTAX = 3   # token without ':'
    ERR_INDEX = 4            # index is not an integer
    ERR_INDEX_NEGATIVE = 5
    ERR_INDEX_ZERO = 6       # index 0 in a one-based file
    ERR_INDEX_TOO_LARGE = 7  # index does not fit a 32-bit int
    ERR_INDEX_ORDER = 8      # indices not strictly increasing
    ERR_VALUE = 9            # value is not a number
    ERR_QID = 10             # qid value is not a 64-bit integer
    ERR_QID_POSITION = 11    # qid: anywhere but right after the label
    ERR_QID_MISSING = 12     # query_id=True and qid present on some lines only
    ERR_MULTILABEL = 13      # empty label in a comma-separated list

cdef double POW10[23]
for _k in range(23):
    POW10[_k] = float(10 ** _k)      # exact: 10**k < 2**53 * 2**k for k <= 22

cdef int32_t INT32_MAX_ = 2147483647


cdef struct ParseResult:
    int status
    Py_ssize_t n_rows
    Py_ssize_t nnz
    Py_ssize_t n_labels       # multilabel: total labels stored
    Py_ssize_t n_qids
    int64_t lineno            # line of the error
    Py_ssize_t tok_start      # offending token [tok_start, tok_end)
    Py_ssize_t tok_end
    int64_t prev_index        # ERR_INDEX_ORDER: the previous index
    int64_t bad_index         # index of ERR_INDEX_*
    int64_t min_index
    int64_t max_index


cdef inline bint is_space(char c) noexcept nogil:
    # bytes.split() whitespace: space, \t, \n, \v, \f, \r
    return c == 32 or (c >= 9 and c <= 13)


cdef inline bint is_digit(char c) noexcept nogil:
    return c >= 48 and c <= 57


cdef inline bint match_word(const char* s, const char* e, const char* word) noexcept nogil:
    """Case-insensitive: [s, e) == word (word lower case, NUL-terminated)."""
    cdef Py_ssize_t i = 0
    while s + i < e:
        if word[i] == 0 or (s[i] | 32) != word[i]:
            return False
        i += 1
    return word[i] == 0


cdef bint parse_double(const char* s, const char* e, double* out) noexcept nogil:
    """Parse a decimal float literal that spans exactly [s, e).

    Accepts what Python's ``float()`` accepts except underscores:
    ``[+-](digits[.digits]|.digits)[(e|E)[+-]digits]``, ``inf``,
    ``infinity``, ``nan`` (any case).  Returns False on anything else.
    """
    cdef const char* p = s
    cdef bint neg = False
    cdef uint64_t mant = 0
    cdef int n_sig = 0
    cdef int64_t exp10 = 0
    cdef int64_t exp_part = 0
    cdef bint exp_neg = False
    cdef bint any_digit = False
    cdef bint truncated = False
    cdef int d
    cdef double v
    cdef char* endp
    if p < e and (p[0] == 43 or p[0] == 45):       # '+' '-'
        neg = p[0] == 45
        p += 1
    if p >= e:
        return False
    if not is_digit(p[0]) and p[0] != 46:           # not digit, not '.'
        if match_word(p, e, b"inf") or match_word(p, e, b"infinity"):
            out[0] = -INFINITY if neg else INFINITY
            return True
        if match_word(p, e, b"nan"):
            out[0] = copysign(NAN, -1.0 if neg else 1.0)
            return True
        return False
    while p < e and is_digit(p[0]):                 # integer part
        any_digit = True
        d = p[0] - 48
        if mant == 0 and d == 0:
            pass
        elif n_sig < 19:
            mant = mant * 10 + d
            n_sig += 1
        else:
            exp10 += 1
            truncated = True
        p += 1
    if p < e and p[0] == 46:                        # '.' and fraction
        p += 1
        while p < e and is_digit(p[0]):
            any_digit = True
            d = p[0] - 48
            if n_sig < 19:
                if not (mant == 0 and d == 0):
                    mant = mant * 10 + d
                    n_sig += 1
                exp10 -= 1
            else:
                truncated = True
            p += 1
    if not any_digit:
        return False
    if p < e and (p[0] | 32) == 101:                # 'e' / 'E'
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            exp_neg = p[0] == 45
            p += 1
        if p >= e or not is_digit(p[0]):
            return False
        while p < e and is_digit(p[0]):
            if exp_part < 100000:
                exp_part = exp_part * 10 + (p[0] - 48)
            else:
                # capped: the value is left to strtod (the cap could otherwise
                # cancel against a long run of fraction digits: 0.0...01e9999999)
                truncated = True
            p += 1
        exp10 += -exp_part if exp_neg else exp_part
    if p != e:
        return False
    if mant == 0:
        out[0] = -0.0 if neg else 0.0
        return True
    if not truncated and mant <= 9007199254740992ULL and -22 <= exp10 <= 22:
        v = <double> mant                           # exact
        if exp10 < 0:
            v = v / POW10[0 - exp10]                # exp10 < 0; one correctly rounded op
        else:
            v = v * POW10[exp10]
        out[0] = -v if neg else v
        return True
    # Long or extreme literal: the syntax is checked, let the C library round.
    v = strtod(s, &endp)
    if endp != e:
        return False
    out[0] = v
    return True


cdef int parse_int64(const char* s, const char* e, int64_t* out) noexcept nogil:
    """[+-]digits spanning [s, e) -> 0 ok, 1 syntax error, 2 overflow."""
    cdef const char* p = s
    cdef bint neg = False
    cdef uint64_t v = 0
    cdef bint overflow = False
    cdef int d
    if p < e and (p[0] == 43 or p[0] == 45):
        neg = p[0] == 45
        p += 1
    if p >= e:
        return 1
    while p < e:
        if not is_digit(p[0]):
            return 1
        d = p[0] - 48
        if v > (9223372036854775808ULL - d) // 10:
            overflow = True
        else:
            v = v * 10 + d
        p += 1
    if overflow or (not neg and v > 9223372036854775807ULL):
        return 2
    out[0] = <int64_t> (<uint64_t> 0 - v) if neg else <int64_t> v
    return 0


cdef inline void insertion_sort(double* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef double x
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef void parse_lines(const char* buf, Py_ssize_t n, Py_ssize_t pos,
                      Py_ssize_t offset_max, int64_t first_lineno,
                      bint multilabel, bint zero_based, bint want_qid,
                      double* labels, int64_t* label_ptr, int32_t* indices,
                      double* values, int64_t* indptr, int64_t* qids,
                      int64_t* row_lineno, ParseResult* r) noexcept nogil:
    """Parse the lines of buf[pos:n] (the svmlight grammar of sklearn's reader).

    labels (n_labels,), label_ptr (n_rows + 1,) [multilabel only],
    indices/values (nnz,), indptr (n_rows + 1,), qids (n_qids,),
    row_lineno (n_rows,): the line each row came from.
    """
    cdef Py_ssize_t p = pos, line_end, content_end, next_line, ts, te, colon, k
    cdef const char* hit
    cdef int64_t lineno = first_lineno, idx, prev, qid
    cdef int qid_state = -1        # -1 unknown, 0 lines without qid, 1 with
    cdef int rc
    cdef bint has_qid, first
    cdef double x
    cdef Py_ssize_t n_rows = 0, nnz = 0, n_labels = 0, n_qids = 0, lab_start
    r.status = OK
    r.min_index = INT32_MAX_
    r.max_index = -1
    indptr[0] = 0
    if multilabel:
        label_ptr[0] = 0
    while p < n:
        hit = <const char*> memchr(buf + p, 10, n - p)      # '\n'
        line_end = (hit - buf) if hit != NULL else n
        next_line = line_end + 1 if hit != NULL else n
        hit = <const char*> memchr(buf + p, 35, line_end - p)  # '#'
        content_end = (hit - buf) if hit != NULL else line_end
        ts = p
        while ts < content_end and is_space(buf[ts]):
            ts += 1
        if ts == content_end:                   # blank or comment-only line
            p = next_line
            lineno += 1
            continue
        r.lineno = lineno
        # ---- label(s) ------------------------------------------------
        te = ts
        while te < content_end and not is_space(buf[te]):
            te += 1
        hit = <const char*> memchr(buf + ts, 58, te - ts)   # ':'
        first = True                     # first feature token not yet seen
        if multilabel:
            lab_start = n_labels
            if hit == NULL:
                k = ts
                while True:
                    colon = k                   # end of this label
                    while colon < te and buf[colon] != 44:   # ','
                        colon += 1
                    if not parse_double(buf + k, buf + colon, &x):
                        r.status = ERR_MULTILABEL if colon == k else ERR_LABEL
                        r.tok_start = ts
                        r.tok_end = te
                        return
                    labels[n_labels] = x
                    n_labels += 1
                    if colon == te:
                        break
                    k = colon + 1
                insertion_sort(labels + lab_start, n_labels - lab_start)
                ts = te
            # else: no labels, the token is the first feature
            label_ptr[n_rows + 1] = n_labels
        else:
            if hit != NULL:
                r.status = ERR_MISSING_LABEL
                r.tok_start = ts
                r.tok_end = te
                return
            if not parse_double(buf + ts, buf + te, &labels[n_rows]):
                r.status = ERR_LABEL
                r.tok_start = ts
                r.tok_end = te
                return
            ts = te
        # ---- qid and features -----------------------------------------
        prev = -1
        has_qid = False
        while True:
            while ts < content_end and is_space(buf[ts]):
                ts += 1
            if ts >= content_end:
                break
            # fast path: <at most 9 digits>:<number>, in order (one scan)
            te = ts
            idx = 0
            while te < content_end and is_digit(buf[te]):
                idx = idx * 10 + (buf[te] - 48)
                te += 1
            if (te > ts and te - ts <= 9 and te < content_end and buf[te] == 58
                    and idx > prev and (idx > 0 or zero_based)):
                colon = te
                te += 1
                while te < content_end and not is_space(buf[te]):
                    te += 1
                if parse_double(buf + colon + 1, buf + te, &values[nnz]):
                    indices[nnz] = <int32_t> idx        # indices.append(idx)
                    nnz += 1
                    prev = idx
                    first = False
                    ts = te
                    continue
            # general path: qid, signs, long indices, and every error
            te = ts
            while te < content_end and not is_space(buf[te]):
                te += 1
            hit = <const char*> memchr(buf + ts, 58, te - ts)
            if hit == NULL:
                r.status = ERR_FEATURE_SYNTAX
                r.tok_start = ts
                r.tok_end = te
                return
            colon = hit - buf
            if colon - ts == 3 and buf[ts] == 113 and buf[ts + 1] == 105 and buf[ts + 2] == 100:
                # "qid:" -- only right after the label
                if not first:
                    r.status = ERR_QID_POSITION
                    r.tok_start = ts
                    r.tok_end = te
                    return
                if parse_int64(buf + colon + 1, buf + te, &qid) != 0:
                    r.status = ERR_QID
                    r.tok_start = ts
                    r.tok_end = te
                    return
                has_qid = True
                if want_qid:
                    qids[n_qids] = qid
                    n_qids += 1
                first = False
                ts = te
                continue
            first = False
            rc = parse_int64(buf + ts, buf + colon, &idx)
            if rc != 0:
                r.status = ERR_INDEX if rc == 1 else ERR_INDEX_TOO_LARGE
                r.tok_start = ts
                r.tok_end = te
                return
            if idx < 0 or idx > INT32_MAX_ or (idx == 0 and not zero_based):
                r.status = (ERR_INDEX_NEGATIVE if idx < 0 else
                            ERR_INDEX_TOO_LARGE if idx > INT32_MAX_ else ERR_INDEX_ZERO)
                r.bad_index = idx
                r.tok_start = ts
                r.tok_end = te
                return
            if idx <= prev:
                r.status = ERR_INDEX_ORDER
                r.prev_index = prev
                r.bad_index = idx
                r.tok_start = ts
                r.tok_end = te
                return
            if not parse_double(buf + colon + 1, buf + te, &values[nnz]):
                r.status = ERR_VALUE
                r.tok_start = ts
                r.tok_end = te
                return
            indices[nnz] = <int32_t> idx        # indices.append(idx)
            nnz += 1
            prev = idx
            ts = te
        if prev >= 0:
            if prev > r.max_index:          # indices are increasing in a row
                r.max_index = prev
            if indices[indptr[n_rows]] < r.min_index:
                r.min_index = indices[indptr[n_rows]]
        if want_qid:
            if qid_state == -1:
                qid_state = has_qid
            elif qid_state != has_qid:
                r.status = ERR_QID_MISSING
                r.tok_start = p
                r.tok_end = content_end
                return
        row_lineno[n_rows] = lineno
        n_rows += 1
        indptr[n_rows] = nnz
        r.n_rows = n_rows
        r.nnz = nnz
        r.n_labels = n_labels
        r.n_qids = n_qids
        # sklearn stops after a data line once f.tell() passed offset + length
        if offset_max >= 0 and next_line > offset_max:
            break
        p = next_line
        lineno += 1
    r.n_rows = n_rows
    r.nnz = nnz
    r.n_labels = n_labels
    r.n_qids = n_qids


cdef void count_marks(const char* buf, Py_ssize_t start, Py_ssize_t n,
                      Py_ssize_t* colons, Py_ssize_t* commas,
                      Py_ssize_t* newlines) noexcept nogil:
    cdef Py_ssize_t i, c1 = 0, c2 = 0, c3 = 0
    cdef char c
    for i in range(start, n):
        c = buf[i]
        c1 += c == 58        # (buf == b':').sum()
        c2 += c == 44        # (buf == b',').sum()
        c3 += c == 10        # (buf == b'\n').sum()
    colons[0] = c1
    commas[0] = c2
    newlines[0] = c3


def _shorten(bytes token):
    text = token.decode("utf-8", "backslashreplace")
    return text if len(text) <= 60 else text[:57] + "..."


def parse_svmlight(bytes buf, *, Py_ssize_t start, Py_ssize_t offset_max,
                   int64_t first_lineno, bint multilabel, bint zero_based,
                   bint query_id, filename, str line_note=""):
    """Parse svmlight lines of ``buf[start:]`` (see ``linclass.datasets.svmlight``).

    Returns a dict with ``values`` (float64), ``indices`` (int32, as written in
    the file), ``indptr`` (int64), ``labels`` (float64), ``label_ptr`` (int64,
    multilabel only, else None), ``qids`` (int64), ``row_lineno`` (int64),
    ``min_index`` and ``max_index`` (-1 when there is no feature at all).
    Raises DataFormatError(reason, filename, lineno) on malformed input.
    """
    cdef Py_ssize_t n = len(buf)
    if start < 0 or start > n:
        raise ValueError("start=%d outside the buffer of %d bytes" % (start, n))
    cdef const char* cbuf = buf
    cdef Py_ssize_t colons, commas, newlines
    with nogil:
        count_marks(cbuf, start, n, &colons, &commas, &newlines)
    cdef Py_ssize_t max_rows = newlines + 1
    values = np.empty(max(colons, 1), dtype=np.float64)
    indices = np.empty(max(colons, 1), dtype=np.int32)
    indptr = np.empty(max_rows + 1, dtype=np.int64)
    n_label_slots = (commas + max_rows) if multilabel else max_rows
    labels = np.empty(max(n_label_slots, 1), dtype=np.float64)
    label_ptr = np.empty(max_rows + 1 if multilabel else 1, dtype=np.int64)
    qids = np.empty(max(min(colons, max_rows) if query_id else 1, 1), dtype=np.int64)
    row_lineno = np.empty(max_rows, dtype=np.int64)
    cdef double[::1] values_v = values
    cdef int32_t[::1] indices_v = indices
    cdef int64_t[::1] indptr_v = indptr
    cdef double[::1] labels_v = labels
    cdef int64_t[::1] label_ptr_v = label_ptr
    cdef int64_t[::1] qids_v = qids
    cdef int64_t[::1] row_lineno_v = row_lineno
    cdef ParseResult r
    with nogil:
        parse_lines(cbuf, n, start, offset_max, first_lineno, multilabel,
                    zero_based, query_id, &labels_v[0], &label_ptr_v[0],
                    &indices_v[0], &values_v[0], &indptr_v[0], &qids_v[0],
                    &row_lineno_v[0], &r)
    if r.status != OK:
        _raise_parse_error(buf, &r, filename, zero_based, line_note)
    nnz = r.nnz
    return {
        "values": values[:nnz] if nnz == values.shape[0] else values[:nnz].copy(),
        "indices": indices[:nnz] if nnz == indices.shape[0] else indices[:nnz].copy(),
        "indptr": indptr[:r.n_rows + 1].copy(),
        "labels": labels[:r.n_labels if multilabel else r.n_rows].copy(),
        "label_ptr": label_ptr[:r.n_rows + 1].copy() if multilabel else None,
        "qids": qids[:r.n_qids].copy(),
        "row_lineno": row_lineno[:r.n_rows].copy(),
        "min_index": int(r.min_index) if r.max_index >= 0 else -1,
        "max_index": int(r.max_index),
    }


cdef _raise_parse_error(bytes buf, ParseResult* r, filename, bint zero_based,
                        str line_note):
    token = _shorten(buf[r.tok_start:r.tok_end])
    s = r.status
    if s == ERR_LABEL:
        reason = "invalid label %r: expected a number" % token
    elif s == ERR_MULTILABEL:
        reason = "invalid label list %r: expected comma-separated numbers" % token
    elif s == ERR_MISSING_LABEL:
        reason = ("missing label: the line starts with %r; every line must "
                  "start with its label" % token)
    elif s == ERR_FEATURE_SYNTAX:
        reason = "invalid feature %r: expected <index>:<value>" % token
    elif s == ERR_INDEX:
        reason = "invalid feature index in %r: expected an integer" % token
    elif s == ERR_INDEX_NEGATIVE:
        reason = "invalid feature index %d in %r: indices are >= 0" % (r.bad_index, token)
    elif s == ERR_INDEX_ZERO:
        reason = ("invalid feature index 0 in %r: the file is read as one-based "
                  "(zero_based=False), where indices start at 1" % token)
    elif s == ERR_INDEX_TOO_LARGE:
        reason = "feature index in %r is too large (at most %d)" % (token, INT32_MAX_)
    elif s == ERR_INDEX_ORDER:
        reason = ("feature index %d in %r follows index %d: indices on a line "
                  "must be sorted and unique" % (r.bad_index, token, r.prev_index))
    elif s == ERR_VALUE:
        reason = "invalid feature value in %r: expected a number" % token
    elif s == ERR_QID:
        reason = "invalid query id in %r: expected qid:<64-bit integer>" % token
    elif s == ERR_QID_POSITION:
        reason = "%r must come right after the label, before the features" % token
    elif s == ERR_QID_MISSING:
        reason = ("query_id=True but some lines have a qid and others do not "
                  "(this line disagrees with the first data line)")
    else:  # pragma: no cover
        reason = "parse error %d" % s
    raise DataFormatError(reason + line_note, filename, int(r.lineno))


# ---------------------------------------------------------------------------
# writer

cdef inline Py_ssize_t write_int64(char* out, int64_t v) noexcept nogil:
    cdef char tmp[24]
    cdef Py_ssize_t n = 0, i
    cdef uint64_t u
    cdef Py_ssize_t k = 0
    if v < 0:
        out[k] = 45
        k += 1
        u = <uint64_t> 0 - <uint64_t> v
    else:
        u = <uint64_t> v
    while True:
        tmp[n] = <char> (48 + u % 10)
        n += 1
        u //= 10
        if u == 0:
            break
    for i in range(n):
        out[k + i] = tmp[n - 1 - i]
    return k + n


cdef inline Py_ssize_t write_double(char* out, double v) noexcept nogil:
    """Shortest of %.15g/%.16g/%.17g that reads back to v (<= 25 bytes)."""
    cdef Py_ssize_t n
    cdef char* endp
    if isnan(v):
        memcpy(out, b"nan", 3)
        return 3
    if isinf(v):
        if v < 0:
            memcpy(out, b"-inf", 4)
            return 4
        memcpy(out, b"inf", 3)
        return 3
    if v == floor(v) and fabs(v) < 1e15:
        if v == 0 and signbit(v):
            memcpy(out, b"-0", 2)
            return 2
        return write_int64(out, <int64_t> v)
    n = snprintf(out, 32, b"%.15g", v)
    if strtod(out, &endp) == v:
        return n
    n = snprintf(out, 32, b"%.16g", v)
    if strtod(out, &endp) == v:
        return n
    return snprintf(out, 32, b"%.17g", v)


cdef Py_ssize_t write_rows(Py_ssize_t row, Py_ssize_t n_rows,
                           const double* values, const int32_t* indices,
                           const int64_t* indptr, const double* labels,
                           const int64_t* label_ptr, const int64_t* label_idx,
                           const int64_t* qids, bint multilabel, bint has_qid,
                           int64_t index_shift, char* out, Py_ssize_t capacity,
                           Py_ssize_t* used) noexcept nogil:
    """Format rows [row, n_rows) into out until the next row may not fit.

    Returns the first row not written; ``used`` gets the bytes written.
    Line: ``<label>[,<label>...][ qid:<q>] <i>:<v> <i>:<v>...\\n`` (as sklearn).
    """
    cdef Py_ssize_t k = 0, j, bound
    # room for a row: 26 per label, 32 for qid, 64 per feature, 2 for ' \n'
    while row < n_rows:
        bound = 64 * (indptr[row + 1] - indptr[row]) + 64
        if multilabel:
            bound += 26 * (label_ptr[row + 1] - label_ptr[row])
        if k + bound > capacity:
            break
        if multilabel:
            for j in range(label_ptr[row], label_ptr[row + 1]):
                if j > label_ptr[row]:
                    out[k] = 44
                    k += 1
                k += write_int64(out + k, label_idx[j])
        else:
            k += write_double(out + k, labels[row])
        if has_qid:
            memcpy(out + k, b" qid:", 5)
            k += 5
            k += write_int64(out + k, qids[row])
        out[k] = 32
        k += 1
        for j in range(indptr[row], indptr[row + 1]):
            if j > indptr[row]:
                out[k] = 32
                k += 1
            k += write_int64(out + k, <int64_t> indices[j] + index_shift)
            out[k] = 58
            k += 1
            k += write_double(out + k, values[j])
        out[k] = 10
        k += 1
        row += 1
    used[0] = k
    return row


def write_svmlight(f, *, const double[::1] values, const int32_t[::1] indices,
                   const int64_t[::1] indptr, const double[::1] labels,
                   const int64_t[::1] label_ptr, const int64_t[::1] label_idx,
                   const int64_t[::1] qids, bint multilabel, bint has_qid,
                   bint one_based, Py_ssize_t buffer_size=1 << 20):
    """Write CSR rows in svmlight format to the binary file object ``f``.

    values/indices (nnz,), indptr (n_rows + 1,) int64; labels (n_rows,) unless
    multilabel, then label_ptr (n_rows + 1,) and label_idx (column numbers);
    qids (n_rows,) when has_qid.  Arrays are checked here for agreement since
    the kernel does not check bounds.
    """
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    if n_rows < 0:
        raise ValueError("indptr must have at least one entry")
    if indptr[0] != 0 or indptr[n_rows] != values.shape[0] or values.shape[0] != indices.shape[0]:
        raise ValueError("indptr does not agree with values/indices")
    if multilabel:
        if label_ptr.shape[0] != n_rows + 1 or label_ptr[0] != 0 or label_ptr[n_rows] != label_idx.shape[0]:
            raise ValueError("label_ptr does not agree with label_idx")
    elif labels.shape[0] != n_rows:
        raise ValueError("labels must have one entry per row")
    if has_qid and qids.shape[0] != n_rows:
        raise ValueError("qids must have one entry per row")
    cdef Py_ssize_t row = 0, next_row, used, bound, j, max_bound = 0
    for j in range(n_rows):      # largest row, so one buffer always holds a row
        bound = 64 * (indptr[j + 1] - indptr[j]) + 64
        if multilabel:
            bound += 26 * (label_ptr[j + 1] - label_ptr[j])
        if bound > max_bound:
            max_bound = bound
    cdef Py_ssize_t capacity = max(buffer_size, max_bound)
    out = bytearray(capacity)
    cdef char* cout = out
    cdef const double* pv = &values[0] if values.shape[0] else NULL
    cdef const int32_t* pi = &indices[0] if indices.shape[0] else NULL
    cdef const double* pl = &labels[0] if labels.shape[0] else NULL
    cdef const int64_t* plp = &label_ptr[0] if label_ptr.shape[0] else NULL
    cdef const int64_t* pli = &label_idx[0] if label_idx.shape[0] else NULL
    cdef const int64_t* pq = &qids[0] if qids.shape[0] else NULL
    cdef int64_t shift = 1 if one_based else 0
    view = memoryview(out)
    while row < n_rows:
        with nogil:
            next_row = write_rows(row, n_rows, pv, pi, &indptr[0], pl, plp, pli,
                                  pq, multilabel, has_qid, shift, cout,
                                  capacity, &used)
        f.write(view[:used])
        row = next_row
