# C types for shape.py when compiled (Cython's augmenting declarations); the .py is the source.
cimport cython

ctypedef const unsigned char* Profile

cdef int _SIZE
cdef tuple _GROUP_OF
cdef tuple _PROFILES

@cython.locals(table=dict, found=bytes)
cdef bytes _group_profile(int group, long code)
cdef tuple _POWER
cdef tuple _NEAR_MASK

cdef dict _JOINED

@cython.locals(pair=bytes, found=bytes, out=bytearray, pa=Profile, pb=Profile, p=int, q=int, m=int, n=int, k=int, x=int, y=int)
cdef bytes _join(bytes a, bytes b)

@cython.locals(pa=Profile, pb=Profile, p=int, q=int, m=int, n=int, x=int, y=int, sets=int, value=int, best=int, partials=int)
cdef int _best(bytes a, bytes b)


@cython.locals(pk=Profile, t=int, n=int, code=long, power=long, pairs=int, tiles=int, codes=list)
cdef tuple _scan(bytes key)


@cython.locals(start=bytearray, before=list, after=bytes, rest=list, g=int)
cdef list _rests(list parts, int melds)


cdef class Shape:
    cdef readonly bytes key
    cdef readonly list rest
    cdef readonly list codes
    cdef readonly bint seven_pairs
    cdef readonly int pairs
    cdef readonly int standard
    cdef readonly int shanten

    cdef int _total(self, int standard, int pairs)

    @cython.locals(codes=list, pairs=int, tiles=int, parts=list, rest=list, g=int)
    cpdef _build(self, bytes key, int melds, bint seven_pairs)

    @cython.locals(g=int, code=long)
    cpdef int changed(self, int tile, int delta)

    @cython.locals(n=int)
    cdef int _after(self, int standard, int tile, int delta)

    @cython.locals(n=int)
    cpdef int seven_pairs_changed(self, int tile, int delta)


cdef tuple _DRAWS
cdef int _DRAWS_SIZE, _FOUR_HELD

@cython.locals(table=dict, found=bytes, out=bytearray, r=int, power=long, start=int, stop=int)
cdef bytes _draws(int group, bytes rest, long code)


@cython.locals(key=bytes, u=int, t=int, g=int, start=int, stop=int, base=int, shape=Shape, near=cython.ulonglong, useful=list, draws=bytes)
cpdef tuple useful_kinds(counts, melds, seven_pairs)
