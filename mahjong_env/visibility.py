"""Moved: who sees what (RULES.md R7, R13) lives in `mahjong_env.seat_view` with the rest of
what one seat knows. These names are re-exported from there for the imports that still use
this module.
"""

from __future__ import annotations

from mahjong_env.seat_view import concealed_kong_hidden, sees_decider

__all__ = ["sees_decider", "concealed_kong_hidden"]
