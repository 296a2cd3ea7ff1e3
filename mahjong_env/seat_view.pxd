# C types for seat_view.py when compiled (Cython's augmenting declarations); the .py is the source.
# `TableMemory` becomes an extension type and a seat's `SeatState` is read as one
# (engine/state.pxd), so that building a view at every observation reads C struct slots rather
# than looking attributes up. Every attribute stays a Python object.
cimport cython
from mahjong_env.engine.state cimport SeatState
from mahjong_env.engine.game cimport Game

cdef class TableMemory:
    cdef public object concealed_kong_visible, deals, history, rivers, melds, own_melds, shown
    cdef public object kongs_made, scores, silver, base
    cdef public object _dice, _views, _views_log, _views_steps, _seats, _paid, _done, _last_claimed
    cdef public object _meld_versions, _meld_clock, _meld_shown, _shown

    @cython.locals(st=SeatState)
    cpdef sync(self, Game game)

cpdef seat_view(game, seat, TableMemory memory)

@cython.locals(s0=SeatState, s1=SeatState, s2=SeatState, s3=SeatState, me=SeatState)
cpdef _seat_view(Game game, int seat, TableMemory memory)
