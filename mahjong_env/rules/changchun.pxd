# C types for changchun.py when compiled (Cython's augmenting declarations); the .py is the source.
# Only the C9 shortfall that players ask for every discard they weigh is typed.
cimport cython

cdef tuple _IS_YAOJIU

@cython.locals(most=int, dragon_pair=bint, t=int, n=int, s=int, shortfall=double)
cpdef double _shortfall(counts, int suits, bint yaojiu, bint triplet)
