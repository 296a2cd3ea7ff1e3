# C types for observation.py when compiled (Cython's augmenting declarations); the .py is the
# source. The encoder is an extension type whose state is C struct slots, and its steps call each
# other as C functions; the table's memory is read as one (seat_view.pxd). Every attribute stays
# a Python object.
cimport cython
from mahjong_env.seat_view cimport TableMemory

cdef class ObservationEncoder:
    cdef public object concealed_kong_visible, public, _single, _out, _out_batch
    cdef public object _buf, _buf_head, _buf_unset, _buf_counts, _buf_visible, _buf_bytes, _buf_flat
    cdef public object _public_bytes, _public_flat, _hand_seen, _history, _last_claimed, _melds
    cdef public object _meld_scalars, _meld_scalars_set, _points_of, _points, _discards
    cdef public TableMemory memory

    cpdef _draw_public(self)
    cpdef _private(self, view, out, base, list index, list value, list scalars)
    cpdef list _scalars(self, view, seat)
