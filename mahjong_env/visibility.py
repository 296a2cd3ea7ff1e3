"""What each seat may see of the table (RULES.md R7, R13): the one place for these questions.

The observation encoder, the readable view (`mahjong_env.view`) and the replay viewer's
narrator (`mahjong_env.tools.html_replay`) all ask here, so a privacy rule is written once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mahjong_env.engine.state import Phase

if TYPE_CHECKING:
    from mahjong_env.engine.game import Game

__all__ = ["sees_decider", "concealed_kong_hidden"]

_TURN, _OVER = Phase.TURN, Phase.OVER  # module constants: an enum member read costs ~90 ns on Python 3.11


def sees_decider(game: Game, seat: int | None) -> bool:
    """R13: whether ``seat`` (None: the full table) sees the current decision as it is: the
    phase of a private decision (a claim or robbing window, the bao view, 对宝, 分张), its
    window and who is to move. Only the decider does; every other seat sees an ordinary turn.
    Whose turn it is, and the end of the hand, are public."""
    phase = game.phase
    return seat is None or phase == _TURN or phase == _OVER or game.actor == seat


def concealed_kong_hidden(owner: int, viewer: int | None, visible: bool) -> bool:
    """R7: whether ``viewer`` (None: the full table) sees ``owner``'s concealed kong face down:
    unless the rule set shows concealed kongs (``concealed_kong_visible``), only its owner and
    the full table see its tile."""
    return not visible and viewer is not None and viewer != owner
