# C types for game.py when compiled (Cython's augmenting declarations); the .py is the source.
# `Game` becomes an extension type: its attributes are slots of a C struct, so that its own
# methods (and compiled code that knows a game's type) read and write them without a dictionary
# lookup. Every attribute stays a Python object, read and written from Python as before.

cdef class Game:
    cdef public object rules, num_hands, hand_index, dealer, seed, over, ledger, hand_logs
    cdef public object seats, wall, dice, phase, actor, context, window, tasks, history, last_discard
    cdef public object log, bao, bao_roll_due, bao_rolled, bao_rolls, ready_pending, result, _legal
