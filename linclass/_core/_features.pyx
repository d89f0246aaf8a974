"""Template features compiled to integer ids: exact integer keys in an open-addressing table.

A feature of a template is identified by an exact integer key
``(template index, v_1, ..., v_a)`` where ``v_j`` is the id (or, in hashing
mode, a stable 64-bit hash) of the value of the template's ``j``-th atom at
its offset, or a boundary sentinel.  :class:`KeyTable` maps keys to feature
ids in first-occurrence order; :func:`extract_features`
runs the templates over a whole corpus under one ``with nogil:`` block and
writes a canonical CSR matrix (sorted indices, duplicates summed).

The Python layer (:mod:`linclass.features.templates`) validates every array
and builds the per-token value table; nothing here checks bounds.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy

from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.unicode cimport (Py_UNICODE_ISDIGIT, Py_UNICODE_ISLOWER, Py_UNICODE_ISUPPER,
                              PyUnicode_4BYTE_KIND, PyUnicode_FromKindAndData,
                              PyUnicode_KIND, PyUnicode_READ)

import numpy as np

# Widest key: template index + up to MAX_ARITY atom values.
cdef enum:
    MAX_WIDTH = 16
# Largest number of distinct keys (ids are int32).
cdef Py_ssize_t MAX_KEYS = 2147483647
MAX_ARITY = MAX_WIDTH - 1

# Kinds of template items (must agree with linclass.features.templates).
KIND_CONJUNCTION = 0
KIND_BOS = 1
KIND_EOS = 2
cdef enum:
    _CONJ = 0
    _BOS = 1
    _EOS = 2

# Sentinel values an atom takes outside the sentence (boundary="pad").
BEFORE_START = -1
AFTER_END = -2
# Value of a type unseen during fit (transform only): no stored key holds it.
UNKNOWN_VALUE = -3
# Value of iftrue(...) of a false predicate: the feature is left out (as outside
# the sentence with boundary="drop").
ABSENT_VALUE = -4


cdef inline uint64_t _fmix64(uint64_t h) noexcept nogil:
    # MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


# Odd 64-bit multipliers of the multilinear key hash (digits of pi and e, made odd).
cdef uint64_t[16] _MULTIPLIERS
_MULTIPLIERS[:] = [
    0x243f6a8885a308d3ULL, 0x13198a2e03707345ULL, 0xa4093822299f31d1ULL, 0x082efa98ec4e6c89ULL,
    0x452821e638d01377ULL, 0xbe5466cf34e90c6dULL, 0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL,
    0x9216d5d98979fb1bULL, 0xd1310ba698dfb5adULL, 0x2ffd72dbd01adfb7ULL, 0xb8e1afed6a267e97ULL,
    0xba7c9045f12c7f99ULL, 0x24a19947b3916cf7ULL, 0x0801f2e2858efc17ULL, 0x636920d871574e69ULL]


cdef inline uint64_t _hash_key(const int64_t* key, Py_ssize_t width) noexcept nogil:
    # multilinear hash sum_j (key[j] + j + 1) * M_j (independent multiplies: short
    # dependency chain) followed by MurmurHash3's finaliser
    cdef uint64_t h = 0
    cdef Py_ssize_t j
    for j in range(width):
        h += (<uint64_t>key[j] + <uint64_t>(j + 1)) * _MULTIPLIERS[j]
    return _fmix64(h)


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define LINCLASS_PREFETCH(p) __builtin_prefetch((const void *)(p))
    #else
    #define LINCLASS_PREFETCH(p) ((void)0)
    #endif
    """
    void prefetch "LINCLASS_PREFETCH"(const void* p) noexcept nogil


ctypedef struct Slot:
    uint32_t tag        # high 32 bits of the key's hash (valid when id >= 0)
    int32_t id          # -1 = empty


cdef class KeyTable:
    """Open-addressing (linear probing) map from fixed-width integer keys to ids 0, 1, 2, ...

    Ids are assigned in insertion order; keys are stored densely in id order
    (``keys_array()`` row ``i`` is the key of id ``i``).  Key words must fit
    in int32 (value ids and sentinels do).  The first key word selects one of
    ``n_parts`` slot arrays (one per template), so the many lookups of
    templates with few distinct keys (POS n-grams) stay in cache while word
    conjunctions get their own large array.  A slot is 8 bytes (hash tag +
    id); each slot array is kept at most half full.  Occurrences are not
    counted here (one more random memory access per lookup): in fit they are
    the column counts of the output matrix.
    """
    cdef readonly Py_ssize_t width
    cdef readonly Py_ssize_t n_parts
    cdef Py_ssize_t n_keys
    cdef Py_ssize_t key_capacity
    cdef int32_t* keys          # key_capacity * width
    cdef uint64_t* hashes       # key_capacity (used when a slot array grows)
    cdef Slot** part_slots      # n_parts arrays of part_mask[p] + 1 slots
    cdef uint64_t* part_mask
    cdef Py_ssize_t* part_keys  # number of keys in each part

    def __cinit__(self, Py_ssize_t width, Py_ssize_t n_parts, Py_ssize_t capacity=1024):
        if width < 1 or width > MAX_WIDTH:
            raise ValueError("key width must be in 1..%d, got %d" % (MAX_WIDTH, width))
        if n_parts < 1:
            raise ValueError("n_parts must be >= 1, got %d" % n_parts)
        if capacity > MAX_KEYS:
            raise ValueError("capacity %d exceeds %d keys" % (capacity, MAX_KEYS))
        self.width = width
        self.n_parts = n_parts
        self.n_keys = 0
        self.key_capacity = max(capacity, 16)
        self.keys = <int32_t*> malloc(self.key_capacity * width * sizeof(int32_t))
        self.hashes = <uint64_t*> malloc(self.key_capacity * sizeof(uint64_t))
        self.part_slots = <Slot**> calloc(n_parts, sizeof(Slot*))
        self.part_mask = <uint64_t*> malloc(n_parts * sizeof(uint64_t))
        self.part_keys = <Py_ssize_t*> malloc(n_parts * sizeof(Py_ssize_t))
        if not (self.keys and self.hashes and self.part_slots and self.part_mask
                and self.part_keys):
            raise MemoryError("cannot allocate a feature table of %d keys" % capacity)
        cdef Py_ssize_t p, i
        for p in range(n_parts):
            self.part_slots[p] = <Slot*> malloc(64 * sizeof(Slot))
            if self.part_slots[p] == NULL:
                raise MemoryError("cannot allocate a feature table")
            self.part_mask[p] = 63
            self.part_keys[p] = 0
            for i in range(64):
                self.part_slots[p][i].id = -1

    def __dealloc__(self):
        cdef Py_ssize_t p
        if self.part_slots != NULL:
            for p in range(self.n_parts):
                free(self.part_slots[p])
        free(self.part_slots)
        free(self.part_mask)
        free(self.part_keys)
        free(self.keys)
        free(self.hashes)

    def __len__(self):
        return self.n_keys

    cdef inline const Slot* slot_address(self, const int64_t* key, uint64_t h) noexcept nogil:
        """Where the probe for ``key`` starts (for prefetching)."""
        return &self.part_slots[key[0]][h & self.part_mask[key[0]]]

    cdef inline bint _same(self, int32_t fid, const int64_t* key) noexcept nogil:
        cdef const int32_t* stored = &self.keys[<Py_ssize_t>fid * self.width]
        cdef Py_ssize_t j
        for j in range(self.width):
            if stored[j] != key[j]:
                return False
        return True

    cdef inline int64_t lookup(self, const int64_t* key, uint64_t h) noexcept nogil:
        """Id of ``key`` (whose hash is ``h``), or -1 when absent."""
        cdef Slot* slots = self.part_slots[key[0]]
        cdef uint64_t mask = self.part_mask[key[0]]
        cdef uint64_t pos = h & mask
        cdef uint32_t tag = <uint32_t>(h >> 32)
        cdef int32_t fid
        while True:
            fid = slots[pos].id
            if fid < 0:
                return -1
            if slots[pos].tag == tag and self._same(fid, key):
                return fid
            pos = (pos + 1) & mask

    cdef int _grow_keys(self) noexcept nogil:
        """Double the key storage; 0 on success, -1 out of memory."""
        cdef Py_ssize_t new_capacity = 2 * self.key_capacity
        cdef int32_t* keys = <int32_t*> realloc(self.keys, new_capacity * self.width * sizeof(int32_t))
        if keys == NULL:
            return -1
        self.keys = keys
        cdef uint64_t* hashes = <uint64_t*> realloc(self.hashes, new_capacity * sizeof(uint64_t))
        if hashes == NULL:
            return -1
        self.hashes = hashes
        self.key_capacity = new_capacity
        return 0

    cdef int _grow_part(self, Py_ssize_t part) noexcept nogil:
        """Double the slot array of one part; 0 on success, -1 out of memory."""
        cdef Slot* old = self.part_slots[part]
        cdef uint64_t old_n = self.part_mask[part] + 1
        cdef uint64_t mask = 2 * old_n - 1
        cdef Slot* slots = <Slot*> malloc(2 * old_n * sizeof(Slot))
        if slots == NULL:
            return -1
        cdef uint64_t i, pos
        cdef int32_t fid
        for i in range(2 * old_n):
            slots[i].id = -1
        for i in range(old_n):                        # reinsert from the stored hashes
            fid = old[i].id
            if fid < 0:
                continue
            pos = self.hashes[fid] & mask
            while slots[pos].id >= 0:
                pos = (pos + 1) & mask
            slots[pos] = old[i]
        free(old)
        self.part_slots[part] = slots
        self.part_mask[part] = mask
        return 0

    cdef inline int64_t insert(self, const int64_t* key, uint64_t h) noexcept nogil:
        """Id of ``key``, adding it as the next id if absent.

        Returns -2 when memory runs out or the table is full (MAX_KEYS).
        """
        cdef Py_ssize_t part = key[0]
        cdef int64_t fid = self.lookup(key, h)
        cdef Py_ssize_t j, new_id
        cdef uint64_t pos, mask
        if fid >= 0:
            return fid
        if self.n_keys >= MAX_KEYS:
            return -2
        if self.n_keys >= self.key_capacity and self._grow_keys() != 0:
            return -2
        if 2 * (self.part_keys[part] + 1) > <Py_ssize_t>(self.part_mask[part] + 1):
            if self._grow_part(part) != 0:
                return -2
        mask = self.part_mask[part]
        pos = h & mask
        while self.part_slots[part][pos].id >= 0:
            pos = (pos + 1) & mask
        new_id = self.n_keys
        for j in range(self.width):
            self.keys[new_id * self.width + j] = <int32_t>key[j]
        self.hashes[new_id] = h
        self.part_slots[part][pos].id = <int32_t>new_id
        self.part_slots[part][pos].tag = <uint32_t>(h >> 32)
        self.part_keys[part] = self.part_keys[part] + 1
        self.n_keys = new_id + 1
        return new_id

    def add_keys(self, const int64_t[:, ::1] keys not None):
        """Insert the rows of ``keys`` (n_keys, width) in order.

        Used to rebuild a table from saved keys; raises ValueError if a key
        repeats (the saved ids would not be reproduced) or a word leaves int32.
        """
        if keys.shape[1] != self.width:
            raise ValueError("keys must have shape (n, %d)" % self.width)
        arr = np.asarray(keys)
        if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
            raise ValueError("feature keys must fit in int32")
        if arr.size and (arr[:, 0].min() < 0 or arr[:, 0].max() >= self.n_parts):
            raise ValueError("the first key word (template index) must be in 0..%d"
                             % (self.n_parts - 1))
        cdef Py_ssize_t i = 0, n = keys.shape[0], start = self.n_keys
        cdef int64_t fid
        cdef int status = 0
        with nogil:
            for i in range(n):
                fid = self.insert(&keys[i, 0], _hash_key(&keys[i, 0], self.width))
                if fid == -2:
                    status = -2
                    break
                if fid != start + i:
                    status = -1
                    break
        if status == -2:
            raise MemoryError("out of memory while building the feature table")
        if status == -1:
            raise ValueError("duplicate key at row %d of the saved feature keys" % i)

    def merge_from(self, KeyTable other not None):
        """Insert the keys of ``other`` in its id order; returns the int32 array
        mapping each id of ``other`` to its id here (new keys get the next ids).

        Merging the tables of consecutive sentence blocks in block order gives
        every key the id of its first occurrence in the whole corpus: the ids a
        single pass over all blocks assigns."""
        if other.width != self.width or other.n_parts > self.n_parts:
            raise ValueError("merge_from: tables of different key layouts")
        out = np.empty(other.n_keys, dtype=np.int32)
        cdef int32_t[::1] o = out
        cdef int64_t[16] key
        cdef Py_ssize_t i, j, w = self.width
        cdef int64_t fid
        cdef int status = 0
        with nogil:
            for i in range(other.n_keys):
                for j in range(w):
                    key[j] = other.keys[i * w + j]
                fid = self.insert(key, other.hashes[i])
                if fid < 0:
                    status = -2
                    break
                o[i] = <int32_t>fid
        if status == -2:
            raise MemoryError("out of memory while merging feature tables")
        return out

    def _adopt_parts(self, list tables, const int32_t[::1] owner,
                     const int32_t[::1] global_id, const int64_t[::1] offset):
        """Become the union of ``tables`` (private tables of the template-parallel
        fit pass, table ``g`` holding the parts ``p`` with ``owner[p] == g``),
        its key ``l`` getting id ``global_id[offset[g] + l]``: the keys move to
        their global ids and the parts' slot arrays are taken over with their
        ids renumbered (same hashes, same masks: no probing).  Only for an empty
        table (its empty parts go to the private tables, to be discarded)."""
        cdef Py_ssize_t n_tables = len(tables), g, l, p, i, total = 0, w = self.width
        cdef KeyTable t
        cdef int32_t gi
        cdef int32_t* keys
        cdef uint64_t* hashes
        cdef Slot* slots
        if self.n_keys != 0:
            raise ValueError("_adopt_parts needs an empty table")
        if owner.shape[0] > self.n_parts or offset.shape[0] != n_tables + 1:
            raise ValueError("_adopt_parts: inconsistent arrays")
        for g in range(n_tables):
            t = tables[g]
            if t.width != w or t.n_parts != self.n_parts or offset[g] != total:
                raise ValueError("_adopt_parts: tables of different key layouts")
            total += t.n_keys
        if offset[n_tables] != total or global_id.shape[0] != total:
            raise ValueError("_adopt_parts: inconsistent arrays")
        for p in range(owner.shape[0]):
            if not 0 <= owner[p] < n_tables:
                raise ValueError("_adopt_parts: owner out of range")
        if total > self.key_capacity:
            keys = <int32_t*> realloc(self.keys, total * w * sizeof(int32_t))
            if keys == NULL:
                raise MemoryError("cannot allocate a feature table of %d keys" % total)
            self.keys = keys
            hashes = <uint64_t*> realloc(self.hashes, total * sizeof(uint64_t))
            if hashes == NULL:
                raise MemoryError("cannot allocate a feature table of %d keys" % total)
            self.hashes = hashes
            self.key_capacity = total
        for g in range(n_tables):
            t = tables[g]
            with nogil:
                for l in range(t.n_keys):
                    gi = global_id[offset[g] + l]
                    memcpy(&self.keys[<Py_ssize_t>gi * w], &t.keys[l * w], w * sizeof(int32_t))
                    self.hashes[gi] = t.hashes[l]
        for p in range(owner.shape[0]):
            t = tables[owner[p]]
            g = owner[p]
            slots = t.part_slots[p]
            with nogil:
                for i in range(<Py_ssize_t>(t.part_mask[p] + 1)):
                    if slots[i].id >= 0:
                        slots[i].id = global_id[offset[g] + slots[i].id]
            # swap: this table's empty part goes to the private table
            t.part_slots[p] = self.part_slots[p]
            t.part_mask[p], self.part_mask[p] = self.part_mask[p], t.part_mask[p]
            t.part_keys[p], self.part_keys[p] = self.part_keys[p], t.part_keys[p]
            self.part_slots[p] = slots
        self.n_keys = total

    def keys_array(self):
        """Copy of the stored keys, shape (n_keys, width), row i = key of id i (int64)."""
        out = np.empty((self.n_keys, self.width), dtype=np.int32)
        cdef int32_t[:, ::1] o = out
        if self.n_keys:
            memcpy(&o[0, 0], self.keys, self.n_keys * self.width * sizeof(int32_t))
        return out.astype(np.int64)

    def hash_keys(self, const int64_t[:, ::1] keys not None):
        """64-bit hashes of key rows (the function the table and the hashing mode use)."""
        if keys.shape[1] != self.width:
            raise ValueError("keys must have %d columns" % self.width)
        out = np.empty(keys.shape[0], dtype=np.uint64)
        cdef uint64_t[::1] o = out
        cdef Py_ssize_t i
        with nogil:
            for i in range(keys.shape[0]):
                o[i] = _hash_key(&keys[i, 0], self.width)
        return out


cdef inline Py_ssize_t _sort_merge_row(int32_t* idx, double* val, Py_ssize_t n) noexcept nogil:
    """Sort idx[0:n] (insertion sort: rows are short) and write unique ids with their
    multiplicities to idx/val; returns the number of unique ids."""
    cdef Py_ssize_t i, j, m
    cdef int32_t key_i
    for i in range(1, n):
        key_i = idx[i]
        j = i - 1
        while j >= 0 and idx[j] > key_i:
            idx[j + 1] = idx[j]
            j -= 1
        idx[j + 1] = key_i
    if n == 0:
        return 0
    m = 0
    val[0] = 1.0
    for i in range(1, n):                      # np.unique(idx, return_counts=True)
        if idx[i] == idx[m]:
            val[m] += 1.0
        else:
            m += 1
            idx[m] = idx[i]
            val[m] = 1.0
    return m + 1


cdef int _extract(const int64_t[:, ::1] values,
                  const int64_t[::1] sentence_ptr,
                  Py_ssize_t s0, Py_ssize_t s1,
                  const int32_t[::1] kind,
                  const int32_t[::1] atom_ptr,
                  const int32_t[::1] atom_space,
                  const int32_t[::1] atom_offset,
                  bint pad,
                  KeyTable table,
                  bint insert,
                  uint64_t n_hash,
                  Py_ssize_t width,
                  int32_t[::1] indptr,
                  int32_t[::1] indices,
                  double[::1] data,
                  Py_ssize_t pos0,
                  Py_ssize_t* pos_end) noexcept nogil:
    """Features of the tokens of sentences s0..s1-1; 0 on success, -2 when memory
    runs out.  Rows are written to indices/data from position ``pos0``;
    ``indptr[t + 1]`` (absolute positions) is set for each of their tokens and
    ``*pos_end`` to the position after the last one (``indptr`` at the range's
    first token is left to the caller).

    values : (n_spaces, n_tokens) value id of each derived column at each token
    sentence_ptr : (n_sentences + 1,) token offsets of the sentences
    kind, atom_ptr : (n_templates,), (n_templates + 1,) template kinds and atom ranges
    atom_space, atom_offset : (n_atoms,) derived column and offset of each atom
    indptr : (n_tokens + 1,) out; indices, data : (n_tokens * n_templates,) out

    Per token, the keys of all templates are formed and their table slots
    prefetched first, then looked up in template order (so ids still follow
    first occurrence): the lookups' cache misses overlap.
    """
    cdef Py_ssize_t n_templates = kind.shape[0]
    cdef Py_ssize_t s, t, k, a, j, p, start, end, row_start, arity, n_keys
    cdef Py_ssize_t pos = pos0
    cdef int64_t v, fid
    cdef bint complete
    cdef int64_t* keys = <int64_t*> malloc((n_templates + 1) * width * sizeof(int64_t))
    cdef uint64_t* hashes = <uint64_t*> malloc((n_templates + 1) * sizeof(uint64_t))
    if keys == NULL or hashes == NULL:
        free(keys)
        free(hashes)
        return -2
    cdef int64_t* key
    for s in range(s0, s1):
        start = sentence_ptr[s]
        end = sentence_ptr[s + 1]
        for t in range(start, end):
            n_keys = 0
            for k in range(n_templates):
                if kind[k] == _BOS and t != start:
                    continue
                if kind[k] == _EOS and t != end - 1:
                    continue
                key = &keys[n_keys * width]
                key[0] = k
                complete = True
                arity = atom_ptr[k + 1] - atom_ptr[k]
                for a in range(atom_ptr[k], atom_ptr[k + 1]):
                    p = t + atom_offset[a]
                    if p < start:
                        if not pad:
                            complete = False
                            break
                        v = -1                              # BEFORE_START
                    elif p >= end:
                        if not pad:
                            complete = False
                            break
                        v = -2                              # AFTER_END
                    else:
                        v = values[atom_space[a], p]
                        if v == -4:                         # ABSENT_VALUE: left out
                            complete = False
                            break
                    key[1 + a - atom_ptr[k]] = v
                if not complete:                          # CRFsuite omits the feature
                    continue
                for j in range(1 + arity, width):
                    key[j] = 0
                hashes[n_keys] = _hash_key(key, width)
                if n_hash == 0:
                    prefetch(table.slot_address(key, hashes[n_keys]))
                n_keys += 1
            row_start = pos
            for j in range(n_keys):
                if n_hash > 0:
                    fid = <int64_t>(hashes[j] % n_hash)    # hashing trick
                elif insert:
                    fid = table.insert(&keys[j * width], hashes[j])
                    if fid < 0:
                        free(keys)
                        free(hashes)
                        return -2
                else:
                    fid = table.lookup(&keys[j * width], hashes[j])
                    if fid < 0:                           # unseen in fit: dropped
                        continue
                indices[pos] = <int32_t>fid
                pos += 1
            pos = row_start + _sort_merge_row(&indices[row_start], &data[row_start],
                                              pos - row_start)
            indptr[t + 1] = <int32_t>pos
    free(keys)
    free(hashes)
    pos_end[0] = pos
    return 0


cdef int _extract_local(const int64_t[:, ::1] values, const int64_t[::1] sentence_ptr,
                        const int32_t[::1] kind, const int32_t[::1] atom_ptr,
                        const int32_t[::1] atom_space, const int32_t[::1] atom_offset,
                        bint pad, KeyTable table, Py_ssize_t width,
                        const int32_t[::1] owner, int32_t g,
                        int32_t[::1] local) noexcept nogil:
    """The fit pass of the templates ``k`` with ``owner[k] == g`` over all the
    sentences, inserting into ``table`` (private to ``g``): ``local[t *
    n_templates + k]`` = the key's id in ``table`` (its first occurrence in
    token order among these templates), -1 when token ``t`` has no feature of
    template ``k``.  Entries of other templates are not written.  0, or -2
    when memory runs out."""
    cdef Py_ssize_t n_templates = kind.shape[0]
    cdef Py_ssize_t n_sentences = sentence_ptr.shape[0] - 1
    cdef Py_ssize_t s, t, k, a, j, p, start, end, arity, n_keys
    cdef int64_t v, fid
    cdef bint complete
    cdef int64_t* keys = <int64_t*> malloc((n_templates + 1) * width * sizeof(int64_t))
    cdef uint64_t* hashes = <uint64_t*> malloc((n_templates + 1) * sizeof(uint64_t))
    cdef int32_t* which = <int32_t*> malloc((n_templates + 1) * sizeof(int32_t))
    if keys == NULL or hashes == NULL or which == NULL:
        free(keys)
        free(hashes)
        free(which)
        return -2
    cdef int64_t* key
    for s in range(n_sentences):
        start = sentence_ptr[s]
        end = sentence_ptr[s + 1]
        for t in range(start, end):
            n_keys = 0
            for k in range(n_templates):
                if owner[k] != g:
                    continue
                local[t * n_templates + k] = -1
                if kind[k] == _BOS and t != start:
                    continue
                if kind[k] == _EOS and t != end - 1:
                    continue
                key = &keys[n_keys * width]
                key[0] = k
                complete = True
                arity = atom_ptr[k + 1] - atom_ptr[k]
                for a in range(atom_ptr[k], atom_ptr[k + 1]):
                    p = t + atom_offset[a]
                    if p < start:
                        if not pad:
                            complete = False
                            break
                        v = -1                              # BEFORE_START
                    elif p >= end:
                        if not pad:
                            complete = False
                            break
                        v = -2                              # AFTER_END
                    else:
                        v = values[atom_space[a], p]
                        if v == -4:                         # ABSENT_VALUE: left out
                            complete = False
                            break
                    key[1 + a - atom_ptr[k]] = v
                if not complete:
                    continue
                for j in range(1 + arity, width):
                    key[j] = 0
                hashes[n_keys] = _hash_key(key, width)
                prefetch(table.slot_address(key, hashes[n_keys]))
                which[n_keys] = <int32_t>k
                n_keys += 1
            for j in range(n_keys):
                fid = table.insert(&keys[j * width], hashes[j])
                if fid < 0:
                    free(keys)
                    free(hashes)
                    free(which)
                    return -2
                local[t * n_templates + which[j]] = <int32_t>fid
    free(keys)
    free(hashes)
    free(which)
    return 0


cdef void _number_keys(const int32_t[::1] local, Py_ssize_t n_tokens, Py_ssize_t n_templates,
                       const int32_t[::1] owner, const int64_t[::1] offset,
                       int32_t[::1] global_id, int32_t[::1] indptr) noexcept nogil:
    """Global ids in first-occurrence order (token major, template minor: the
    order of the one-thread pass) of the private tables' keys, and the row
    pointers.  The ids of a private table appear in its own first-occurrence
    order, so its next new key is the first entry equal to its key count."""
    cdef Py_ssize_t t, k, i = 0, n = 0, pos = 0
    cdef int32_t l, g
    cdef int64_t* seen = <int64_t*> calloc(offset.shape[0], sizeof(int64_t))
    if seen == NULL:
        return
    for t in range(n_tokens):
        for k in range(n_templates):
            l = local[i]
            i += 1
            if l < 0:
                continue
            pos += 1
            g = owner[k]
            if l == seen[g]:
                global_id[offset[g] + l] = <int32_t>n
                n += 1
                seen[g] += 1
        indptr[t + 1] = <int32_t>pos
    free(seen)


cdef void _global_rows(const int32_t[::1] local, Py_ssize_t t0, Py_ssize_t t1,
                       Py_ssize_t n_templates, const int32_t[::1] owner,
                       const int64_t[::1] offset, const int32_t[::1] global_id,
                       const int32_t[::1] indptr, int32_t[::1] indices,
                       double[::1] data) noexcept nogil:
    """Rows t0..t1-1 of the fitted matrix: the global ids of their keys, sorted."""
    cdef Py_ssize_t t, k, p, a, j
    cdef int32_t l, key_i
    for t in range(t0, t1):
        a = indptr[t]
        p = a
        for k in range(n_templates):
            l = local[t * n_templates + k]
            if l >= 0:
                indices[p] = global_id[offset[owner[k]] + l]
                data[p] = 1.0
                p += 1
        for j in range(a + 1, p):                   # insertion sort (rows are short)
            key_i = indices[j]
            k = j - 1
            while k >= a and indices[k] > key_i:
                indices[k + 1] = indices[k]
                k -= 1
            indices[k + 1] = key_i


def _local_pass(vals, sptr, knd, aptr, aspace, aoff, bint pad, KeyTable table,
                Py_ssize_t width, owner, int32_t g, local):
    cdef int status
    cdef const int64_t[:, ::1] v = vals
    cdef const int64_t[::1] sp = sptr
    cdef const int32_t[::1] kd = knd
    cdef const int32_t[::1] ap = aptr
    cdef const int32_t[::1] asp = aspace
    cdef const int32_t[::1] ao = aoff
    cdef const int32_t[::1] ow = owner
    cdef int32_t[::1] lo = local
    with nogil:
        status = _extract_local(v, sp, kd, ap, asp, ao, pad, table, width, ow, g, lo)
    if status == -2:
        raise MemoryError("out of memory while growing the feature table")


def _rows_pass(local, Py_ssize_t t0, Py_ssize_t t1, Py_ssize_t n_templates, owner, offset,
               global_id, indptr, indices, data):
    cdef const int32_t[::1] lo = local
    cdef const int32_t[::1] ow = owner
    cdef const int64_t[::1] off = offset
    cdef const int32_t[::1] gid = global_id
    cdef const int32_t[::1] ip = indptr
    cdef int32_t[::1] ind = indices
    cdef double[::1] dat = data
    with nogil:
        _global_rows(lo, t0, t1, n_templates, ow, off, gid, ip, ind, dat)


def _extract_by_templates(vals, sptr, knd, aptr, aspace, aoff, bint pad, KeyTable table,
                          Py_ssize_t width, indptr, indices, data, n_jobs,
                          Py_ssize_t n_templates):
    """The fit pass (inserting into the empty ``table``) in ``n_jobs`` threads,
    each running a share of the templates over all the sentences with a
    private table (the templates' key sets are disjoint: no merge); then the
    keys are numbered in the one-thread order (one pass over the local ids),
    the rows written and sorted in ``n_jobs`` token blocks, and ``table``
    takes over the private tables' parts (:meth:`KeyTable._adopt_parts`).
    Keys, ids and rows are exactly those of ``n_jobs=1``; returns nnz."""
    from concurrent.futures import ThreadPoolExecutor
    cdef Py_ssize_t n_tokens = int(np.asarray(sptr)[len(sptr) - 1])
    # templates dealt round robin: the word and POS templates alternate in the
    # shipped templates, so the threads get similar mixes of large and small parts
    owner = (np.arange(n_templates) % n_jobs).astype(np.int32)
    local = np.empty(n_tokens * n_templates, dtype=np.int32)
    tables = [KeyTable(table.width, table.n_parts, max(1024, n_tokens))
              for _ in range(n_jobs)]
    cdef int32_t[::1] ip = indptr
    cdef const int32_t[::1] lo = local
    cdef const int32_t[::1] ow = owner
    cdef int32_t[::1] gid
    cdef const int64_t[::1] off
    with ThreadPoolExecutor(n_jobs) as pool:
        list(pool.map(lambda g: _local_pass(vals, sptr, knd, aptr, aspace, aoff, pad,
                                            tables[g], width, owner, g, local),
                      range(n_jobs)))
        offset = np.zeros(n_jobs + 1, dtype=np.int64)
        np.cumsum([len(t) for t in tables], out=offset[1:])
        global_id = np.empty(int(offset[n_jobs]), dtype=np.int32)
        gid = global_id
        off = offset
        with nogil:
            _number_keys(lo, n_tokens, n_templates, ow, off, gid, ip)
        bounds = np.linspace(0, n_tokens, n_jobs + 1).astype(np.int64)
        list(pool.map(lambda b: _rows_pass(local, int(bounds[b]), int(bounds[b + 1]),
                                           n_templates, owner, offset, global_id, indptr,
                                           indices, data), range(n_jobs)))
    table._adopt_parts(tables, owner, global_id, offset)
    return int(indptr[n_tokens])


cdef void _remap_rows(int32_t[::1] indptr, int32_t[::1] indices, double[::1] data,
                      Py_ssize_t t0, Py_ssize_t t1, Py_ssize_t p0,
                      const int32_t[::1] id_map) noexcept nogil:
    """indices := id_map[indices] on rows t0..t1-1 (the first starting at p0, the
    others at indptr[t]), each row re-sorted (the ids of a row are distinct
    before and after: its values move with them)."""
    cdef Py_ssize_t t, i, j, a, b
    cdef int32_t key_i
    cdef double val_i
    for t in range(t0, t1):
        a = p0 if t == t0 else indptr[t]
        b = indptr[t + 1]
        for i in range(a, b):
            indices[i] = id_map[indices[i]]
        for i in range(a + 1, b):                  # insertion sort of (id, value) pairs
            key_i = indices[i]
            val_i = data[i]
            j = i - 1
            while j >= a and indices[j] > key_i:
                indices[j + 1] = indices[j]
                data[j + 1] = data[j]
                j -= 1
            indices[j + 1] = key_i
            data[j + 1] = val_i


def extract_features(*, values, sentence_ptr, kind, atom_ptr, atom_space, atom_offset,
                     bint pad, KeyTable table=None, bint insert=False, n_hash=0, n_jobs=1):
    """Run compiled templates over a corpus; returns ``(indptr, indices, data)`` of a CSR matrix.

    Parameters (all validated by the caller, keyword-only)
    ----------
    values : int64 array (n_spaces, n_tokens)
    sentence_ptr : int64 array (n_sentences + 1,), non-decreasing, last = n_tokens
    kind : int32 array (n_templates,) of KIND_* ; atom_ptr : int32 (n_templates + 1,)
    atom_space, atom_offset : int32 arrays (n_atoms,), spaces in range
    pad : bool
        Out-of-sentence atoms take BEFORE_START/AFTER_END instead of dropping the feature.
    table : KeyTable or None
        Required unless ``n_hash > 0``; built as ``KeyTable(width, n_parts)``
        with ``n_parts >= n_templates`` (one slot array per template); its
        width fixes the key width.
    insert : bool
        Add unseen keys to ``table`` (fit) instead of dropping them (transform).
    n_hash : int
        > 0: feature id = key hash modulo ``n_hash``; no table.
    n_jobs : int
        Threads (>= 1).  The sentences are cut into ``n_jobs`` blocks of about
        equal token counts, each run under ``nogil`` in its own thread.  With
        ``insert``, block 0 inserts into ``table`` and every later block into a
        private table; the private tables are then merged into ``table`` in
        block order (:meth:`KeyTable.merge_from`) and the blocks' rows remapped
        and re-sorted: keys, ids and rows are exactly those of ``n_jobs=1``.
        Lookups (``insert=False``) and hashing share ``table`` read-only.
    """
    cdef const int64_t[:, ::1] vals = values
    cdef const int64_t[::1] sptr = sentence_ptr
    cdef const int32_t[::1] knd = kind
    cdef const int32_t[::1] aptr = atom_ptr
    cdef const int32_t[::1] aspace = atom_space
    cdef const int32_t[::1] aoff = atom_offset
    cdef Py_ssize_t n_templates = knd.shape[0]
    cdef Py_ssize_t n_tokens = vals.shape[1]
    cdef uint64_t nh = n_hash
    cdef Py_ssize_t width
    if aptr.shape[0] != n_templates + 1 or aspace.shape[0] != aoff.shape[0]:
        raise ValueError("inconsistent template arrays")
    if sptr.shape[0] < 1 or sptr[sptr.shape[0] - 1] != n_tokens:
        raise ValueError("sentence_ptr must end at n_tokens")
    if n_tokens * n_templates > np.iinfo(np.int32).max:
        raise ValueError("%d tokens x %d templates exceed the int32 index range of a "
                         "CSR matrix; transform the sentences in smaller batches"
                         % (n_tokens, n_templates))
    width = 1
    for k in range(n_templates):
        width = max(width, 1 + aptr[k + 1] - aptr[k])
    if nh == 0:
        if table is None:
            raise ValueError("a KeyTable is required unless n_hash > 0")
        if table.width < width:
            raise ValueError("table width %d < widest key %d" % (table.width, width))
        if table.n_parts < n_templates:
            raise ValueError("table has %d parts for %d templates" % (table.n_parts, n_templates))
        width = table.width
    elif width > MAX_WIDTH:
        raise ValueError("templates have more than %d atoms" % (MAX_WIDTH - 1))
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError("n_jobs must be an integer >= 1, got %r" % (n_jobs,))
    cdef Py_ssize_t n_sentences = sptr.shape[0] - 1
    indptr = np.zeros(n_tokens + 1, dtype=np.int32)
    indices = np.empty(max(n_tokens * n_templates, 1), dtype=np.int32)
    data = np.empty(max(n_tokens * n_templates, 1), dtype=np.float64)
    cdef int32_t[::1] iptr = indptr
    cdef int32_t[::1] ind = indices
    cdef double[::1] dat = data
    cdef int status
    cdef Py_ssize_t pos_end = 0
    n_blocks = int(min(n_jobs, n_sentences, max(1, n_tokens // 2048)))
    if n_blocks <= 1:
        with nogil:
            status = _extract(vals, sptr, 0, n_sentences, knd, aptr, aspace, aoff, pad, table,
                              insert, nh, width, iptr, ind, dat, 0, &pos_end)
        if status == -2:
            raise MemoryError("out of memory while growing the feature table")
    elif insert and nh == 0 and len(table) == 0 and n_templates > 1:
        # a fit: the threads share the templates, not the sentences (no key twice)
        _extract_by_templates(vals, sptr, knd, aptr, aspace, aoff, pad, table, width,
                              indptr, indices, data, int(min(n_blocks, n_templates)),
                              n_templates)
    else:
        _extract_blocks(vals, sptr, knd, aptr, aspace, aoff, pad, table, insert, nh, width,
                        indptr, indices, data, n_blocks, n_templates)
    nnz = int(indptr[n_tokens])
    if 2 * nnz < indices.shape[0]:          # do not keep a mostly unused buffer alive
        return indptr, indices[:nnz].copy(), data[:nnz].copy()
    return indptr, indices[:nnz], data[:nnz]


def _run_block(const int64_t[:, ::1] vals, const int64_t[::1] sptr, Py_ssize_t s0,
               Py_ssize_t s1, const int32_t[::1] knd, const int32_t[::1] aptr,
               const int32_t[::1] aspace, const int32_t[::1] aoff, bint pad, KeyTable table,
               bint insert, uint64_t nh, Py_ssize_t width, int32_t[::1] iptr,
               int32_t[::1] ind, double[::1] dat, Py_ssize_t pos0):
    """_extract on sentences s0..s1-1 without the GIL; returns the end position."""
    cdef Py_ssize_t pos_end = pos0
    cdef int status
    with nogil:
        status = _extract(vals, sptr, s0, s1, knd, aptr, aspace, aoff, pad, table, insert,
                          nh, width, iptr, ind, dat, pos0, &pos_end)
    if status == -2:
        raise MemoryError("out of memory while growing the feature table")
    return pos_end


def _remap_block(int32_t[::1] iptr, int32_t[::1] ind, double[::1] dat, Py_ssize_t t0,
                 Py_ssize_t t1, Py_ssize_t p0, const int32_t[::1] id_map):
    with nogil:
        _remap_rows(iptr, ind, dat, t0, t1, p0, id_map)


def _extract_blocks(vals, sptr, knd, aptr, aspace, aoff, bint pad, KeyTable table,
                    bint insert, uint64_t nh, Py_ssize_t width, indptr, indices, data,
                    n_blocks, Py_ssize_t n_templates):
    """extract_features over ``n_blocks`` sentence blocks in threads (see there)."""
    from concurrent.futures import ThreadPoolExecutor
    sentence_ptr = np.asarray(sptr)
    n_tokens = int(sentence_ptr[len(sentence_ptr) - 1])
    n_sentences = len(sentence_ptr) - 1
    # block b: sentences cuts[b]..cuts[b+1]-1, about n_tokens / n_blocks tokens each
    targets = (np.arange(1, n_blocks) * n_tokens) // n_blocks
    cuts = np.concatenate(([0], np.searchsorted(sentence_ptr, targets, side="left"),
                           [n_sentences])).astype(np.int64)
    cuts = np.maximum.accumulate(np.minimum(cuts, n_sentences))
    tok0 = sentence_ptr[cuts]                        # first token of each block (+ end)
    base = tok0 * n_templates                        # each block writes from here
    tables = [table] + [KeyTable(table.width, table.n_parts,
                                 max(1024, int(tok0[b + 1] - tok0[b])))
                        if insert and nh == 0 else table for b in range(1, n_blocks)]

    def run(b):
        return _run_block(vals, sptr, int(cuts[b]), int(cuts[b + 1]), knd, aptr, aspace, aoff,
                          pad, tables[b], insert, nh, width, indptr, indices, data,
                          int(base[b]))

    with ThreadPoolExecutor(n_blocks) as pool:
        ends = list(pool.map(run, range(n_blocks)))
        if insert and nh == 0:
            # merge the private tables in block order: ids of first occurrence
            maps = [table.merge_from(tables[b]) for b in range(1, n_blocks)]
            # remap the rows of blocks 1.. in n_blocks pieces each, on all threads (a
            # piece starting inside a block starts where the block's previous row ends)
            pieces = []
            for b in range(1, n_blocks):
                cut = np.linspace(int(tok0[b]), int(tok0[b + 1]), n_blocks + 1).astype(np.int64)
                for a, e in zip(cut, cut[1:]):
                    if e > a:
                        pieces.append((int(a), int(e), int(base[b]) if a == tok0[b]
                                       else int(indptr[a]), maps[b - 1]))
            list(pool.map(lambda piece: _remap_block(indptr, indices, data, *piece), pieces))
    # move the blocks' rows together (left, in block order) and shift their indptr
    pos = int(ends[0])
    for b in range(1, n_blocks):
        a, e = int(base[b]), int(ends[b])
        n = e - a
        if a != pos:
            indices[pos:pos + n] = indices[a:e]
            data[pos:pos + n] = data[a:e]
            indptr[int(tok0[b]) + 1:int(tok0[b + 1]) + 1] -= a - pos
        pos += n


def column_type_ids(list tokens, Py_ssize_t n_columns, list used):
    """Type ids of the used columns of a flat token list, in one pass.

    ``tokens``: each a tuple or list of ``n_columns`` strings, or (one column)
    each a plain string.  Returns ``(dicts, ids)``: per used column a dict
    value -> id in first-occurrence order, and an int64 array
    ``(len(used), len(tokens))``; or ``None`` at the first token that breaks
    the format (the caller then locates it and names the problem).
    """
    cdef Py_ssize_t n = len(tokens), m = len(used), i, j, c
    cdef Py_ssize_t[MAX_WIDTH] cols
    if m > MAX_WIDTH:
        return None
    for j in range(m):
        cols[j] = used[j]
        if not 0 <= cols[j] < n_columns:
            raise ValueError("column %d out of range" % cols[j])
    out = np.empty((m, n), dtype=np.int64)
    cdef int64_t[:, ::1] o = out
    cdef list dicts = [{} for _ in range(m)]
    cdef dict d
    cdef object tok, v
    cdef PyObject* found
    cdef bint plain = n_columns == 1 and n > 0 and isinstance(tokens[0], str)
    cdef Py_ssize_t size
    for i in range(n):
        tok = <object>PyList_GET_ITEM(tokens, i)
        if plain:
            if not isinstance(tok, str):
                return None
        elif type(tok) is tuple:
            if len(<tuple>tok) != n_columns:
                return None
        elif type(tok) is list or isinstance(tok, (tuple, list)):
            if len(tok) != n_columns:
                return None
        else:
            return None
        for j in range(m):
            if plain:
                v = tok
            elif type(tok) is tuple:
                v = <object>PyTuple_GET_ITEM(tok, cols[j])
            else:
                v = tok[cols[j]]
            if not isinstance(v, str):
                return None
            d = <dict>PyList_GET_ITEM(dicts, j)
            found = PyDict_GetItem(d, v)
            if found == NULL:
                size = len(d)
                PyDict_SetItem(d, v, size)
                o[j, i] = size
            else:
                o[j, i] = <object>found
    return dicts, out


# -- the column pass in threads without the GIL ------------------------------------

cdef extern from *:
    """
    /* Read-only views of immutable objects, safe without the GIL while the
       caller keeps them alive: exact tuples of exact, ready str. */
    static inline int lc_exact_str(PyObject *o) {
    #if PY_VERSION_HEX < 0x030C0000
        return PyUnicode_CheckExact(o) && PyUnicode_IS_READY(o);
    #else
        return PyUnicode_CheckExact(o);
    #endif
    }
    #define lc_exact_tuple(o) PyTuple_CheckExact(o)
    #define lc_tuple_size(o) PyTuple_GET_SIZE(o)
    #define lc_tuple_item(o, i) PyTuple_GET_ITEM(o, i)
    #define lc_str_kind(o) ((int)PyUnicode_KIND(o))
    #define lc_str_data(o) ((const unsigned char *)PyUnicode_DATA(o))
    #define lc_str_length(o) PyUnicode_GET_LENGTH(o)
    #define lc_list_items(o) (((PyListObject *)(o))->ob_item)
    """
    bint lc_exact_str(PyObject* o) noexcept nogil
    bint lc_exact_tuple(PyObject* o) noexcept nogil
    Py_ssize_t lc_tuple_size(PyObject* o) noexcept nogil
    PyObject* lc_tuple_item(PyObject* o, Py_ssize_t i) noexcept nogil
    int lc_str_kind(PyObject* o) noexcept nogil
    const unsigned char* lc_str_data(PyObject* o) noexcept nogil
    Py_ssize_t lc_str_length(PyObject* o) noexcept nogil
    PyObject** lc_list_items(object o)


cdef inline uint64_t _str_hash(Py_ssize_t kind, const unsigned char* p,
                               Py_ssize_t nbytes) noexcept nogil:
    """A hash of a str's kind and code point bytes: equal strings have equal
    kinds and bytes (PEP 393's canonical form)."""
    cdef Py_ssize_t i = 0
    cdef uint64_t h = <uint64_t>nbytes * 0x9e3779b97f4a7c15ULL + <uint64_t>kind
    cdef uint64_t w
    while i + 8 <= nbytes:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL
        h ^= h >> 31
        i += 8
    if i < nbytes:
        w = 0
        memcpy(&w, p + i, nbytes - i)
        h = (h ^ w) * 0x94d049bb133111ebULL
    return _fmix64(h)


ctypedef struct StrTable:
    # open addressing (linear probing, at most half full) from str to ids 0, 1, ...
    # in insertion order; keys[i] (borrowed) and key_hash[i] list the strings by id,
    # their kinds and code point bytes copied into one arena (compared there: no
    # visit to the key objects scattered in memory)
    int32_t* slot_id        # mask + 1 slots: an id or -1
    uint64_t mask
    PyObject** keys
    uint64_t* key_hash
    int64_t* key_off        # key i: arena[key_off[i]:key_off[i + 1]] = kind byte + bytes
    unsigned char* arena
    Py_ssize_t arena_cap
    Py_ssize_t n
    Py_ssize_t key_cap


cdef int _str_table_init(StrTable* t, Py_ssize_t capacity) noexcept nogil:
    cdef Py_ssize_t slots = 1024, i
    while slots < 2 * capacity:
        slots *= 2
    t.slot_id = <int32_t*>malloc(slots * sizeof(int32_t))
    t.key_cap = slots // 2
    t.keys = <PyObject**>malloc(t.key_cap * sizeof(PyObject*))
    t.key_hash = <uint64_t*>malloc(t.key_cap * sizeof(uint64_t))
    t.key_off = <int64_t*>malloc((t.key_cap + 1) * sizeof(int64_t))
    t.arena_cap = 16 * t.key_cap
    t.arena = <unsigned char*>malloc(t.arena_cap)
    t.mask = slots - 1
    t.n = 0
    if (t.slot_id == NULL or t.keys == NULL or t.key_hash == NULL or t.key_off == NULL
            or t.arena == NULL):
        return -1
    t.key_off[0] = 0
    for i in range(slots):
        t.slot_id[i] = -1
    return 0


cdef void _str_table_free(StrTable* t) noexcept nogil:
    free(t.slot_id)
    free(t.keys)
    free(t.key_hash)
    free(t.key_off)
    free(t.arena)
    t.slot_id = NULL
    t.keys = NULL
    t.key_hash = NULL
    t.key_off = NULL
    t.arena = NULL


cdef int _str_table_grow(StrTable* t) noexcept nogil:
    """Twice the slots (ids and keys unchanged); -1 if out of memory."""
    cdef uint64_t mask = 2 * t.mask + 1, j
    cdef Py_ssize_t i, cap = (mask + 1) // 2
    cdef int32_t* slot_id = <int32_t*>malloc((mask + 1) * sizeof(int32_t))
    cdef PyObject** keys = <PyObject**>realloc(t.keys, cap * sizeof(PyObject*))
    if keys != NULL:
        t.keys = keys
    cdef uint64_t* key_hash = <uint64_t*>realloc(t.key_hash, cap * sizeof(uint64_t))
    if key_hash != NULL:
        t.key_hash = key_hash
    cdef int64_t* key_off = <int64_t*>realloc(t.key_off, (cap + 1) * sizeof(int64_t))
    if key_off != NULL:
        t.key_off = key_off
    if slot_id == NULL or keys == NULL or key_hash == NULL or key_off == NULL:
        free(slot_id)
        return -1
    for j in range(mask + 1):
        slot_id[j] = -1
    for i in range(t.n):
        j = t.key_hash[i] & mask
        while slot_id[j] >= 0:
            j = (j + 1) & mask
        slot_id[j] = <int32_t>i
    free(t.slot_id)
    t.slot_id = slot_id
    t.mask = mask
    t.key_cap = cap
    return 0


cdef inline Py_ssize_t _str_table_id(StrTable* t, PyObject* s, uint64_t h, int kind,
                                     const unsigned char* data,
                                     Py_ssize_t nbytes) noexcept nogil:
    """The id of the str ``s`` (its hash, kind and bytes given), inserted at the
    next id if new; -1 if out of memory."""
    cdef uint64_t j = h & t.mask
    cdef int32_t k
    cdef int64_t off
    cdef unsigned char* grown
    while True:
        k = t.slot_id[j]
        if k < 0:
            break
        off = t.key_off[k]
        if (t.key_hash[k] == h and t.key_off[k + 1] - off == nbytes + 1
                and t.arena[off] == kind
                and memcmp(t.arena + off + 1, data, nbytes) == 0):
            return k
        j = (j + 1) & t.mask
    if t.n + 1 > t.key_cap:
        if _str_table_grow(t) != 0:
            return -1
        j = h & t.mask
        while t.slot_id[j] >= 0:
            j = (j + 1) & t.mask
    off = t.key_off[t.n]
    if off + nbytes + 1 > t.arena_cap:
        grown = <unsigned char*>realloc(t.arena, 2 * (off + nbytes + 1))
        if grown == NULL:
            return -1
        t.arena = grown
        t.arena_cap = 2 * (off + nbytes + 1)
    t.arena[off] = <unsigned char>kind
    memcpy(t.arena + off + 1, data, nbytes)
    k = <int32_t>t.n
    t.slot_id[j] = k
    t.keys[k] = s
    t.key_hash[k] = h
    t.key_off[k + 1] = off + nbytes + 1
    t.n += 1
    return k


cdef Py_ssize_t _intern_block(PyObject** items, Py_ssize_t a, Py_ssize_t b, bint plain,
                              Py_ssize_t n_columns, const Py_ssize_t* cols, Py_ssize_t m,
                              StrTable* tables, int64_t* out, Py_ssize_t n) noexcept nogil:
    """Ids of the used columns of items a..b-1 in the ``m`` tables (first
    occurrence order), written to ``out[j * n + i]``.  Returns -1, the index
    of the first item that is not an exact tuple of ``n_columns`` exact str
    (``plain``: not an exact str), or -2 when out of memory.  The objects
    are scattered in memory: the token ``ahead`` items on and the strings of
    the one ``ahead / 2`` on are prefetched."""
    cdef Py_ssize_t i, j, k, kind, nbytes, ahead = 16
    cdef PyObject* tok
    cdef PyObject* v
    cdef PyObject* nxt
    cdef const unsigned char* data
    for i in range(a, b):
        if i + ahead < b:
            prefetch(items[i + ahead])
        if not plain and i + ahead // 2 < b:
            nxt = items[i + ahead // 2]
            if lc_exact_tuple(nxt) and lc_tuple_size(nxt) == n_columns:
                for j in range(m):
                    v = lc_tuple_item(nxt, cols[j])
                    prefetch(v)
                    prefetch(<const char*>v + 64)
        elif plain and i + ahead // 2 < b:
            prefetch(<const char*>items[i + ahead // 2] + 64)
        tok = items[i]
        if not plain and (not lc_exact_tuple(tok) or lc_tuple_size(tok) != n_columns):
            return i
        for j in range(m):
            v = tok if plain else lc_tuple_item(tok, cols[j])
            if not lc_exact_str(v):
                return i
            kind = lc_str_kind(v)
            data = lc_str_data(v)
            nbytes = lc_str_length(v) * kind
            k = _str_table_id(&tables[j], v, _str_hash(kind, data, nbytes), <int>kind, data,
                              nbytes)
            if k < 0:
                return -2
            out[j * n + i] = k
    return -1


cdef class _ColumnInterner:
    """The state of :func:`column_type_ids_threaded`: one string table per
    block and used column."""
    cdef PyObject** items
    cdef object keep
    cdef Py_ssize_t n, m, n_blocks, n_columns
    cdef bint plain
    cdef Py_ssize_t[MAX_WIDTH] cols
    cdef StrTable* tables           # n_blocks * m
    cdef Py_ssize_t* bounds         # n_blocks + 1
    cdef Py_ssize_t* status         # n_blocks
    cdef int64_t* out

    def __cinit__(self):
        self.tables = NULL
        self.bounds = NULL
        self.status = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.tables != NULL:
            for i in range(self.n_blocks * self.m):
                _str_table_free(&self.tables[i])
            free(self.tables)
        free(self.bounds)
        free(self.status)

    def run(self, Py_ssize_t b):
        cdef Py_ssize_t a0 = self.bounds[b], a1 = self.bounds[b + 1], j
        cdef Py_ssize_t r = -1
        with nogil:
            for j in range(self.m):
                if _str_table_init(&self.tables[b * self.m + j], (a1 - a0) // 8) != 0:
                    r = -2
            if r == -1:
                r = _intern_block(self.items, a0, a1, self.plain, self.n_columns, self.cols,
                                  self.m, &self.tables[b * self.m], self.out, self.n)
        self.status[b] = r

    def remap(self, Py_ssize_t b):
        """Block b's ids -> ids of block 0's tables, which take block b's new
        strings (after those of blocks 1..b-1: first-occurrence order)."""
        cdef Py_ssize_t j, k, i, g
        cdef Py_ssize_t a0 = self.bounds[b], a1 = self.bounds[b + 1]
        cdef StrTable* glob
        cdef StrTable* loc
        cdef int64_t* idmap
        cdef int status = 0
        with nogil:
            for j in range(self.m):
                glob = &self.tables[j]
                loc = &self.tables[b * self.m + j]
                idmap = <int64_t*>malloc((loc.n if loc.n > 0 else 1) * sizeof(int64_t))
                if idmap == NULL:
                    status = -2
                    break
                for k in range(loc.n):
                    g = _str_table_id(glob, loc.keys[k], loc.key_hash[k],
                                      loc.arena[loc.key_off[k]], loc.arena + loc.key_off[k] + 1,
                                      loc.key_off[k + 1] - loc.key_off[k] - 1)
                    if g < 0:
                        status = -2
                        break
                    idmap[k] = g
                if status == 0:
                    for i in range(a0, a1):
                        self.out[j * self.n + i] = idmap[self.out[j * self.n + i]]
                free(idmap)
                if status != 0:
                    break
        if status != 0:
            raise MemoryError("out of memory in the column pass")


def _column_block(_ColumnInterner st, Py_ssize_t b):
    """Block ``b`` of :func:`column_type_ids_threaded` (without the GIL)."""
    st.run(b)


def column_type_ids_threaded(list tokens, Py_ssize_t n_columns, list used, n_jobs):
    """:func:`column_type_ids` in ``n_jobs`` threads without the GIL: the
    tokens are cut into ``n_jobs`` blocks, each interned into private string
    tables (strings compared by their code points), whose ids are then
    renumbered in block order (first-occurrence order: the same dicts and ids
    as :func:`column_type_ids`).  Takes exact tuples of exact ``str`` (or,
    with one column, exact ``str`` tokens) only: returns ``None`` at any
    other token (the caller then runs :func:`column_type_ids`)."""
    cdef Py_ssize_t n = len(tokens), m = len(used), j, b, nb
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError("n_jobs must be an integer >= 1, got %r" % (n_jobs,))
    if m > MAX_WIDTH or m < 1 or n == 0:
        return None
    cdef _ColumnInterner st = _ColumnInterner()
    for j in range(m):
        st.cols[j] = used[j]
        if not 0 <= st.cols[j] < n_columns:
            raise ValueError("column %d out of range" % st.cols[j])
    nb = max(1, min(int(n_jobs), n // 4096))
    out = np.empty((m, n), dtype=np.int64)
    cdef int64_t[:, ::1] o = out
    st.keep = tokens
    st.items = lc_list_items(tokens)
    st.n = n
    st.m = m
    st.n_columns = n_columns
    st.plain = n_columns == 1 and type(tokens[0]) is str
    st.out = &o[0, 0]
    st.tables = <StrTable*>calloc(nb * m, sizeof(StrTable))
    st.bounds = <Py_ssize_t*>malloc((nb + 1) * sizeof(Py_ssize_t))
    st.status = <Py_ssize_t*>malloc(nb * sizeof(Py_ssize_t))
    if st.tables == NULL or st.bounds == NULL or st.status == NULL:
        raise MemoryError()
    st.n_blocks = nb
    for b in range(nb + 1):
        st.bounds[b] = (n * b) // nb
    if nb == 1:
        _column_block(st, 0)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(nb) as pool:
            list(pool.map(lambda b: _column_block(st, b), range(nb)))
    for b in range(nb):
        if st.status[b] == -2:
            raise MemoryError("out of memory in the column pass")
        if st.status[b] >= 0:
            return None
    for b in range(1, nb):
        st.remap(b)
    cdef list dicts = []
    cdef dict d
    cdef StrTable* t
    cdef Py_ssize_t k
    for j in range(m):
        d = {}
        t = &st.tables[j]
        for k in range(t.n):
            d[<object>t.keys[k]] = k
        dicts.append(d)
    return dicts, out


def count_ids(const int32_t[::1] ids, Py_ssize_t n, n_jobs=1):
    """``np.bincount(ids, minlength=n)`` as int64 for ids known to lie in
    ``[0, n)`` (the rows of an extracted matrix), without the GIL, over
    ``n_jobs`` blocks of ``ids`` whose counts are added in block order."""
    cdef Py_ssize_t m = ids.shape[0]
    if n < 0:
        raise ValueError("n must be >= 0")
    n_blocks = int(max(1, min(n_jobs, m // 262144)))
    bounds = np.linspace(0, m, n_blocks + 1).astype(np.int64)
    parts = [np.zeros(n, dtype=np.int64) for _ in range(n_blocks)]

    def run(b):
        _count_block(ids, int(bounds[b]), int(bounds[b + 1]), parts[b])
    if n_blocks == 1:
        run(0)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(n_blocks) as pool:
            list(pool.map(run, range(n_blocks)))
    out = parts[0]
    for b in range(1, n_blocks):
        out += parts[b]
    return out


def _count_block(const int32_t[::1] ids, Py_ssize_t a, Py_ssize_t b, int64_t[::1] out):
    cdef Py_ssize_t i, n = out.shape[0]
    cdef int32_t v
    cdef int bad = 0
    with nogil:
        for i in range(a, b):
            v = ids[i]
            if v < 0 or v >= n:
                bad = 1
                break
            out[v] += 1
    if bad:
        raise ValueError("count_ids: id %d outside [0, %d)" % (ids[i], n))


# -- string transforms of the template compiler, in C over a list of str ---------

cdef extern from "Python.h":
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)


def shapes(list values, bint short=False):
    """``[shape(v) for v in values]`` (``short``: runs of one shape character
    collapsed, the ``shortshape`` transform): each character ``c`` becomes
    ``X`` if ``c.isupper()``, ``x`` if ``c.islower()``, ``d`` if
    ``c.isdigit()``, else stays -- the single-character ``str`` predicates
    are exactly these Unicode database tests.  ``values`` must hold ``str``."""
    cdef Py_ssize_t i, j, n, m, cap = 64
    cdef Py_UCS4 ch
    cdef Py_UCS4* buf
    cdef Py_UCS4* grown
    cdef unsigned int kind
    cdef void* data
    cdef list out = []
    for v in values:
        if type(v) is not str:
            raise TypeError("shapes: values must be str, got %s" % type(v).__name__)
    buf = <Py_UCS4*>malloc(cap * sizeof(Py_UCS4))
    if buf == NULL:
        raise MemoryError()
    try:
        for v in values:
            n = PyUnicode_GET_LENGTH(v)
            if n > cap:
                grown = <Py_UCS4*>realloc(buf, n * sizeof(Py_UCS4))
                if grown == NULL:
                    raise MemoryError()
                buf = grown
                cap = n
            kind = PyUnicode_KIND(v)
            data = PyUnicode_DATA(v)
            m = 0
            for j in range(n):
                ch = PyUnicode_READ(kind, data, j)
                if Py_UNICODE_ISUPPER(ch):
                    ch = 88                          # "X"
                elif Py_UNICODE_ISLOWER(ch):
                    ch = 120                         # "x"
                elif Py_UNICODE_ISDIGIT(ch):
                    ch = 100                         # "d"
                if short and m > 0 and buf[m - 1] == ch:
                    continue
                buf[m] = ch
                m += 1
            out.append(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, m))
    finally:
        free(buf)
    return out


def has_digit(list values):
    """``[str(any(c.isdigit() for c in v)) for v in values]`` ("True"/"False")."""
    cdef Py_ssize_t j, n
    cdef unsigned int kind
    cdef void* data
    cdef bint found
    cdef list out = []
    for v in values:
        if type(v) is not str:
            raise TypeError("has_digit: values must be str, got %s" % type(v).__name__)
        n = PyUnicode_GET_LENGTH(v)
        kind = PyUnicode_KIND(v)
        data = PyUnicode_DATA(v)
        found = False
        for j in range(n):
            if Py_UNICODE_ISDIGIT(PyUnicode_READ(kind, data, j)):
                found = True
                break
        out.append("True" if found else "False")
    return out
