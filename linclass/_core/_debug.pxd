# Index checks compiled in only by the debug build (LINCLASS_DEBUG_BUILD=1).
#
# Kernels index through raw pointers (see _rows.pxd), which Cython's
# boundscheck does not see.  setup.py defines the C macro LINCLASS_DEBUG_BUILD
# for the debug build; there `debug_check_index` compares an index with its
# bound and, when it is out of range, prints what and where to stderr and
# aborts the process (kernels are `noexcept nogil`: they cannot raise).  In the
# release build LINCLASS_DEBUG_CHECKS is the constant 0 and the C compiler
# removes the check entirely.

cdef extern from *:
    """
    #include <stdio.h>
    #include <stdlib.h>
    #ifdef LINCLASS_DEBUG_BUILD
    #define LINCLASS_DEBUG_CHECKS 1
    #else
    #define LINCLASS_DEBUG_CHECKS 0
    #endif
    static void linclass_index_error(const char *where, long long index, long long bound) {
        fprintf(stderr, "linclass debug build: IndexError: index %lld out of range "
                        "[0, %lld) in %s\\n", index, bound, where);
        fflush(stderr);
        abort();
    }
    """
    const bint LINCLASS_DEBUG_CHECKS
    void linclass_index_error(const char* where, long long index, long long bound) noexcept nogil


cdef inline void debug_check_index(Py_ssize_t index, Py_ssize_t bound,
                                   const char* where) noexcept nogil:
    """Abort with a message if index is outside [0, bound) (debug build only)."""
    if LINCLASS_DEBUG_CHECKS and (index < 0 or index >= bound):
        linclass_index_error(where, index, bound)
