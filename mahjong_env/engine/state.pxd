# C types for state.py when compiled (Cython's augmenting declarations); the .py is the source.
# `SeatState` becomes an extension type: its attributes are slots of a C struct, so that compiled
# code that knows a seat's type (`cimport` it, as seat_view.pxd does) reads them without a
# dictionary or descriptor lookup. Every attribute stays a Python object, read and written from
# Python as before.

cdef class SeatState:
    cdef public object counts, dealt, melds, river, drawn
    cdef public object ready, ready_waits, xianggong, passed_wins, passed_fan
    cdef public object bao_seen, duibao_passed, first_turn, first_turn_claimed, specials, kongs_made
    cdef public object held, hand_version, meld_version, table_melds
    cdef public object _before_draw, _wait_version, _wait_mask
