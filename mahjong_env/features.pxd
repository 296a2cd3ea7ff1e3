# C types for features.py when compiled (Cython's augmenting declarations); the .py is the source.
# `MeldSummary` and `PlayerAnalysis` become extension types (struct slots instead of instance
# dictionaries) and the questions a player asks for every discard it weighs call each other as C
# methods. `agents.heuristic` subclasses `PlayerAnalysis` in Python, as before.
cimport cython
from mahjong_env.hand.shape cimport Shape

cdef class MeldSummary:
    cdef public int count, suits
    cdef public bint yaojiu, triplet, chow, concealed_kong
    cdef public list tiles


@cython.locals(total=int, u=int)
cpdef int connection(list counts, int tile)


cdef class PlayerAnalysis:
    cdef public object config, view, variant, rules, claim_tile, _danger
    cdef public bint conditions, seven_pairs, discard_wins, ready
    cdef public list counts, unseen
    cdef public MeldSummary melds

    @cython.locals(shape=Shape)
    cpdef effective(self, list counts, MeldSummary melds)

    @cython.locals(total=int, u=int, unseen=list)
    cpdef int acceptance(self, list counts, MeldSummary melds)

    @cython.locals(shape=Shape, scored=list, t=int)
    cpdef list discard_scores(self, list counts, MeldSummary melds, discards)

    cpdef tuple rank_key(self, list counts, MeldSummary melds, int t)
