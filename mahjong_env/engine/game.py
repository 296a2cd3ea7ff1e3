"""The table mechanics every rule set shares (RULES.md R3–R12).

`Game` owns one match: the deal, the turn cycle, the claim and robbing windows with the R6
polling order, kongs and replacement draws, the last-draws round (X4 分张, C14 ``final_draws``),
the bao mechanics (C8, used only by rule sets that have a bao), hand end and dealer rotation;
its `Ledger` (`mahjong_env.engine.ledger`) keeps the points. It never asks which variant it
plays: every variant question goes to its `rules` object (`mahjong_env.rules.base.RuleSet`).
It knows nothing about agent names or observations. Enum members it reads at every decision
come from `mahjong_env.engine.hotpath` (a speed measure, explained there).

Pending engine work (a turn start, a bao roll, a replacement draw) sits in a small queue of
tasks, each a bound method with its arguments that returns whether it handed a decision to a
player; `_run` executes tasks until one needs a player's decision or the hand ends. Only
players with a real choice are ever asked (R5, R6).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from functools import partial
from itertools import compress
from typing import TypedDict

from mahjong_env import actions as A
from mahjong_env.engine.hotpath import (
    CONTEXT_CLAIM,
    CONTEXT_DEAL,
    CONTEXT_DRAW,
    CONTEXT_REPLACEMENT,
    MELD_ADDED_KONG,
    MELD_CONCEALED_KONG,
    MELD_PONG,
    PHASE_BAO_VIEW,
    PHASE_CLAIM,
    PHASE_DUIBAO,
    PHASE_FINAL_DRAW,
    PHASE_OVER,
    PHASE_ROB,
    PHASE_TURN,
    START_EXHAUSTED,
    START_FINAL_DRAWS,
    WINDOW_ADDED_KONG,
    WINDOW_DISCARD,
    WINDOW_SPECIAL_ADD,
)
from mahjong_env.engine.ledger import HandResult, KongPayment, Ledger, PaymentRecord, hand_result
from mahjong_env.engine.state import (
    PHASE_NAMES,
    SPECIAL_KIND_OF_ACTION,
    Context,
    Discard,
    Meld,
    MeldKind,
    Outcome,
    Phase,
    SeatState,
    WindowKind,
    WinMethod,
)
from mahjong_env.engine.window import Candidate, Claim, Window
from mahjong_env.rules.base import RuleSet, Settlement
from mahjong_env.tiles import format_tiles
from mahjong_env.wall import Dice, Wall, shuffled_deal

__all__ = ["Game", "HandRecord"]

_DISCARDS = range(A.DISCARD, A.DISCARD + 34)  # compress() over the counts keeps the held kinds

Task = Callable[[], bool]
"""Pending engine work: returns True when it handed a decision to a player."""


class HandRecord(TypedDict):
    """One hand of a game record (API.md "Game records")."""

    dealer: int
    hands: list[str]
    wall: str
    dice: list[int]
    actions: list[list[int | str]]
    result: HandResult | None


class _HandLog:
    """One hand as the engine logs it: the deal as tile indices, formatted only when a record
    is asked for (`record`), not at every deal."""

    __slots__ = ("dealer", "hands", "wall", "dice", "actions", "result")

    def __init__(
        self, dealer: int, hands: list[list[int]], wall: list[int], dice: list[int], actions: list[list[int | str]]
    ) -> None:
        self.dealer = dealer
        self.hands = tuple(map(tuple, hands))  # copies: the deal as dealt, whatever its caller does with its lists
        self.wall = tuple(wall)
        self.dice = dice  # the hand's own lists: rolls and actions are appended as the hand goes on
        self.actions = actions
        self.result: HandResult | None = None

    def record(self) -> HandRecord:
        """This hand's entry of a game record, its lists copies."""
        return {
            "dealer": self.dealer,
            "hands": [format_tiles(h) for h in self.hands],
            "wall": format_tiles(self.wall),
            "dice": list(self.dice),
            "actions": [list(a) for a in self.actions],
            "result": self.result,
        }


class Game:
    """One match of ``num_hands`` hands under a rule set."""

    def __init__(self, rules: RuleSet, num_hands: int = 1) -> None:
        self.rules = rules
        self.num_hands = num_hands
        self.hand_index = 0
        self.dealer = 0
        self.seed = 0
        self.over = True
        self.ledger = Ledger()
        self.hand_logs: list[_HandLog] = []
        # the current hand (start_hand deals it)
        self.seats: list[SeatState] = []
        self.wall = Wall([])
        self.dice = Dice(0, 0)
        self.phase = PHASE_OVER
        self.actor = 0
        self.context = CONTEXT_DEAL
        self.window: Window | None = None
        self.tasks: deque[Task] = deque()
        self.history: list[Discard] = []
        self.last_discard: tuple[int, int] | None = None
        self.ready_pending: int | None = None
        self.bao: int | None = None  # the bao's tile kind while an indicator is set aside (C8)
        self.bao_rolls = 0
        self.bao_rolled = False
        self.bao_roll_due: int | None = None  # C14 bao_roll_at_next_turn: the declarer still to roll
        self.result: HandResult | None = None
        self.log: list[list[int | str]] = []
        self._legal: list[int] | None = None

    # ------------------------------------------------------------------ the ledger's totals

    @property
    def scores(self) -> list[float]:
        """Each seat's points in the match so far."""
        return self.ledger.scores

    @property
    def silver(self) -> list[float]:
        """Each seat's silver (X7)."""
        return self.ledger.silver

    @property
    def rewards(self) -> list[float]:
        """Each seat's points change in the last step (R12)."""
        return self.ledger.rewards

    @property
    def base(self) -> float:
        """Silver per point in this hand (X7)."""
        return self.ledger.base

    @property
    def payments(self) -> list[PaymentRecord]:
        """The payments of this hand so far, in order."""
        return self.ledger.payments

    @property
    def kong_ledger(self) -> list[KongPayment]:
        """The kong payments of this hand (X8 refunds them on a drawn hand)."""
        return self.ledger.kong_payments

    # ------------------------------------------------------------------ match and hand start

    def start_match(self, seed: int, dealer: int, silver: list[float]) -> None:
        self.seed = seed
        self.dealer = dealer
        self.hand_index = 0
        self.ledger.start_match(silver)
        self.hand_logs = []
        self.over = False

    def start_hand(self, hands: list[list[int]], wall: list[int], dice: list[int] | None = None) -> None:
        """Deal the given tiles (dealer's hand has 14) and run to the first decision."""
        table_melds = [0]  # one meld clock for the table (encoders skip the seats when it stands still)
        self.seats = [SeatState(h, table_melds) for h in hands]
        self.wall = Wall(wall)
        self.dice = Dice(self.seed, self.hand_index, dice)
        self.phase = PHASE_TURN
        self.actor = self.dealer
        self.context = CONTEXT_DEAL
        self.window = None
        self.tasks = deque()
        self.history = []
        self.last_discard = None
        self.ready_pending = None
        self.bao = None
        self.bao_rolls = 0
        self.bao_rolled = False
        self.bao_roll_due = None
        self.result = None
        self.ledger.start_hand(self.rules.hand_base(self))
        self.log = []
        self.hand_logs.append(_HandLog(self.dealer, hands, wall, self.dice.rolls, self.log))
        self._legal = None
        self.seats[self.dealer].drawn = None
        self._decide(PHASE_TURN, self.dealer)

    def next_hand_dealer(self) -> int:
        """R11: a drawn hand or a dealer win keeps the dealer, any other win passes the deal."""
        result = self.result
        assert result is not None
        winner = result["winner"]
        if winner is None or winner == self.dealer:
            return self.dealer
        return (self.dealer + 1) % 4

    # ------------------------------------------------------------------ decisions

    def _decide(self, phase: Phase, seat: int) -> bool:
        self.phase = phase
        self.actor = seat
        self._legal = None
        return True

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (``self.actor``)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> list[int]:
        phase = self.phase
        if phase == PHASE_TURN:
            return self._turn_actions()
        if phase in (PHASE_CLAIM, PHASE_ROB):
            assert self.window is not None
            return self.window.options
        if phase == PHASE_BAO_VIEW:
            return [A.PASS, A.VIEW_BAO]
        if phase == PHASE_DUIBAO:
            return [A.WIN, A.PASS]
        if phase == PHASE_FINAL_DRAW:
            if self.rules.forced_win(self, self.actor):
                return [A.WIN]
            return [A.WIN, A.PASS]
        return []

    def _turn_actions(self) -> list[int]:
        rules, seat = self.rules, self.actor
        st = self.seats[seat]
        counts = st.counts
        ctx = self.context
        acts: list[int] = []
        drew = ctx == CONTEXT_DRAW or ctx == CONTEXT_REPLACEMENT
        if (drew or (ctx == CONTEXT_DEAL and rules.config.allow_tianhu)) and rules.self_win(self, seat):
            if rules.forced_win(self, seat):
                return [A.WIN]
            acts.append(A.WIN)
        locked = st.ready and rules.ready_locks(self, seat)
        if locked and st.drawn is not None:
            acts.append(A.DISCARD + st.drawn)
        else:
            acts.extend(compress(_DISCARDS, counts))
        if not st.ready and rules.may_declare_ready(self, seat):
            mask = rules.ready_discards(self, seat)
            while mask:
                low = mask & -mask
                acts.append(A.READY + low.bit_length() - 1)
                mask ^= low
        if ctx != CONTEXT_CLAIM and rules.wall_allows_kong(self):
            acts.extend(self._kong_actions(seat, st))
        acts.extend(rules.special_actions(self, seat))
        acts.sort()
        return acts

    def _kong_actions(self, seat: int, st: SeatState) -> list[int]:
        rules, counts = self.rules, st.counts
        only = st.drawn if st.ready else None
        if st.ready and only is None:
            return []
        acts = []
        kinds = range(34) if only is None else (only,)
        for t in kinds if 4 in counts else ():  # a concealed kong needs four of a kind in hand
            if counts[t] == 4 and rules.kong_allowed(self, seat, MELD_CONCEALED_KONG, t):
                acts.append(A.CONCEALED_KONG + t)
        for meld in st.melds:
            t = meld.tile
            if meld.kind is MELD_PONG and counts[t] and (only is None or only == t):
                if rules.kong_allowed(self, seat, MELD_ADDED_KONG, t):
                    acts.append(A.ADDED_KONG + t)
        return acts

    # ------------------------------------------------------------------ stepping

    def step(self, action: int) -> None:
        """Apply the mover's action; ``rewards`` then holds each seat's points change (R12).
        A numpy integer is taken as its int; a bool, a float and the rest raise ValueError."""
        if action.__class__ is not int:
            action = A.action_int(action)
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(
                A.illegal_action_message(action, f"player_{self.actor}", legal) + f" (phase {PHASE_NAMES[self.phase]})"
            )
        self.ledger.rewards = [0.0] * 4
        seat = self.actor
        self.log.append([seat, A.ACTION_NAMES[action]])  # legal, so a valid id
        self._legal = None
        phase = self.phase
        if phase == PHASE_TURN:
            self._turn_step(seat, action)
        elif phase == PHASE_CLAIM or phase == PHASE_ROB:
            self._window_step(seat, action)
        elif phase == PHASE_BAO_VIEW:
            if action == A.VIEW_BAO:
                self._view_bao(seat)
        elif phase == PHASE_DUIBAO:
            if action == A.WIN:
                self._win(seat, WinMethod.BAO_MATCH, self.bao, None)
            else:
                self.seats[seat].duibao_passed = True
        elif phase == PHASE_FINAL_DRAW:
            if action == A.WIN:
                self._win(seat, self.rules.final_draw_method(self, seat), self.seats[seat].drawn, None)
        self._run()

    def penalize(self, seat: int, action: int | None = None) -> None:
        """API.md ``illegal_action="penalize"``: the offender pays 1 point to each other seat.

        The record logs ``[seat, "illegal <action>"]`` so that `replay` can reproduce it."""
        shown = A.action_name(action) if action is not None and 0 <= action < A.NUM_ACTIONS else str(action)
        self.log.append([seat, f"illegal {shown}"])
        self.ledger.rewards = [0.0] * 4
        for other in range(4):
            if other != seat:
                self.ledger.pay(seat, other, 1.0, "illegal")
        self._end_hand(Outcome.ILLEGAL)
        self.over = True

    def _turn_step(self, seat: int, action: int) -> None:
        st = self.seats[seat]
        if action == A.WIN:
            method = self.rules.self_win(self, seat)
            assert method is not None  # WIN is legal only when self_win names a method
            self._win(seat, method, st.drawn, None)
        elif action < A.CONCEALED_KONG:
            self._discard(seat, action % 34, ready=action >= A.READY)
        elif action < A.ADDED_KONG:
            tile = action - A.CONCEALED_KONG
            st.remove(tile, 4)
            self._kong_stands(seat, Meld(MeldKind.CONCEALED_KONG, [tile] * 4, tile, None), None)
        elif action < A.SPECIAL_ADD:
            tile = action - A.ADDED_KONG
            self._open_window(WINDOW_ADDED_KONG, tile, seat)
        elif action < A.CHOW_LOW:
            tile = action - A.SPECIAL_ADD
            if st.first_turn:
                self._special_add_stands(seat, tile)
            else:
                self._open_window(WINDOW_SPECIAL_ADD, tile, seat)
        else:
            self._declare_special(seat, SPECIAL_KIND_OF_ACTION[action])

    def _discard(self, seat: int, tile: int, ready: bool) -> None:
        st = self.seats[seat]
        st.remove(tile)
        st.river.append(tile)
        st.drawn = None
        st.first_turn = False
        self.history.append(Discard(seat, tile, False, ready))
        self.last_discard = (seat, tile)
        if ready:
            st.ready = True
            st.ready_waits = self.rules.winning_mask(self, seat, st.counts)
            self.ready_pending = seat
        self._open_window(WINDOW_DISCARD, tile, seat)

    # ------------------------------------------------------------------ claim windows (R6)

    def _open_window(self, kind: WindowKind, tile: int, source: int) -> None:
        """Open a claim window on a discard or a robbing window on a kong addition, listing
        every other player that has a claim other than pass (R6, R7)."""
        rules = self.rules
        window = Window(kind, tile, source)
        on_discard = kind is WINDOW_DISCARD
        for distance in (1, 2, 3):
            seat = (source + distance) % 4
            if on_discard:
                options = rules.claim_options(self, seat, tile, source, distance)
            else:
                options = rules.rob_options(self, seat, tile, source, kind)
            if options:
                rank = max(map(rules.claim_rank, options))
                window.queue.append(Candidate(rank, distance, seat, options))
        if not on_discard:
            self.seats[source].drawn = None
        self._start_window(window)

    def _start_window(self, window: Window) -> None:
        self.window = window
        queue = window.queue
        if not queue:  # nobody to ask: the window closes at once
            self.tasks.appendleft(self._task_close_window)
            return
        if len(queue) > 1:
            queue.sort(key=lambda c: (-c.rank, c.distance))
        self._poll_window()

    def _poll_window(self) -> None:
        """Ask the next player whose best claim could still beat the best claim made so far."""
        window = self.window
        assert window is not None
        while window.queue:
            rank, distance, seat, options = window.queue[0]
            if window.best is not None and (rank, -distance) <= window.best[:2]:
                break
            window.queue.pop(0)
            window.options = sorted(options + [A.PASS])
            window.win_offered = A.WIN in options
            self._decide(PHASE_CLAIM if window.kind is WINDOW_DISCARD else PHASE_ROB, seat)
            return
        window.queue.clear()
        self.tasks.appendleft(self._task_close_window)

    def _window_step(self, seat: int, action: int) -> None:
        window = self.window
        assert window is not None
        if window.win_offered and action != A.WIN:
            self.rules.win_passed(self, seat, window.tile, window.kind, window.source)  # R8 过手胡
        if action != A.PASS:
            distance = (seat - window.source) % 4
            candidate = Claim(self.rules.claim_rank(action), -distance, seat, action)
            if window.best is None or candidate[:2] > window.best[:2]:
                window.best = candidate
        self._poll_window()

    def _close_window(self) -> None:
        window = self.window
        assert window is not None
        self.window = None
        best = window.best
        tile, source = window.tile, window.source
        if best is not None and best.action == A.WIN:
            method = WinMethod.DISCARD if window.kind is WINDOW_DISCARD else WinMethod.ROB_KONG
            self._win(best.seat, method, tile, source)
            return
        follow: list[Task] = []
        if window.kind is WINDOW_DISCARD:
            if best is None:
                follow.append(partial(self._task_turn_start, (source + 1) % 4))
            else:
                self.history[-1] = self.history[-1]._replace(claimed=True)
                self.seats[source].river.pop()
                follow.extend(self._take_discard(best.seat, best.action, tile, source))
        elif best is None:
            if window.kind is WINDOW_ADDED_KONG:
                self._added_kong_stands(source, tile)
            else:
                self._special_add_stands(source, tile)
            return
        else:  # 抢叉: the addition is robbed by a pong, as if the tile were discarded (C6)
            self.seats[source].remove(tile)
            self.history.append(Discard(source, tile, True, False))
            self.last_discard = (source, tile)
            follow.extend(self._take_discard(best.seat, best.action, tile, source))
        self._after_window(follow)

    def _take_discard(self, seat: int, action: int, tile: int, source: int) -> list[Task]:
        """Move the claimed tile into the claimer's meld; returns the tasks that follow."""
        st = self.seats[seat]
        if st.first_turn:
            st.first_turn_claimed = True
        if action != A.KONG:
            st.passed_fan = 0  # C14: a chow or pong ends the lock by fan
        if action == A.PONG:
            st.remove(tile, 2)
            st.add_meld(Meld(MeldKind.PONG, [tile] * 3, tile, source))
            return [partial(self._task_turn, seat, CONTEXT_CLAIM)]
        if action == A.KONG:  # a kong on a discard cannot be robbed: it stands at once (R7)
            st.remove(tile, 3)
            self._kong_stands(seat, Meld(MeldKind.KONG, [tile] * 4, tile, source), source)
            return []  # its replacement draw is queued, after the bao tasks of this window
        low, high = A.CHOW_OFFSETS[action]
        st.remove(tile + low)
        st.remove(tile + high)
        tiles = sorted((tile, tile + low, tile + high))
        st.add_meld(Meld(MeldKind.CHOW, tiles, tiles[0], source))
        return [partial(self._task_turn, seat, CONTEXT_CLAIM)]

    def _after_window(self, follow: list[Task]) -> None:
        """Bao roll and 换宝 (C8) when a window closes, the declarer's view, then play on."""
        pre: list[Task] = []
        if self.rules.uses_bao:
            pre.append(partial(self._task_bao_checks, self.ready_pending))
            if self.ready_pending is not None:
                pre.append(partial(self._task_view, self.ready_pending))
        self.ready_pending = None
        self.tasks.extendleft(reversed(pre + follow))

    # ------------------------------------------------------------------ kongs (R7)

    def _kong_stands(self, seat: int, meld: Meld, source: int | None) -> None:
        st = self.seats[seat]
        st.add_meld(meld)
        st.drawn = None
        st.kongs_made += 1
        self._pay_kong(seat, meld.kind, meld.tile, source)
        self.rules.after_kong(self, seat)
        self.tasks.appendleft(partial(self._task_replacement, seat))

    def _added_kong_stands(self, seat: int, tile: int) -> None:
        st = self.seats[seat]
        st.remove(tile)
        for i, meld in enumerate(st.melds):
            if meld.kind is MeldKind.PONG and meld.tile == tile:
                st.remove_meld(i)
                self._kong_stands(seat, Meld(MeldKind.ADDED_KONG, [tile] * 4, tile, meld.source), None)
                return
        raise AssertionError("added kong without its pong")

    def _declare_special(self, seat: int, kind: MeldKind) -> None:
        st = self.seats[seat]
        tiles = self.rules.declaration_tiles(self, seat, kind)
        for t in tiles:
            st.remove(t)
            st.dealt[t] = max(0, st.dealt[t] - 1)  # C5: a dealt tile serves one declaration
        meld = Meld(kind, tiles, tiles[0], None)
        st.add_meld(meld)
        st.specials[kind] = meld
        self._pay_kong(seat, kind, tiles[0], None)
        if len(tiles) == 4:
            st.drawn = None
            self.tasks.appendleft(partial(self._task_replacement, seat))
        elif st.drawn is not None and not st.counts[st.drawn]:
            st.drawn = None

    def _special_add_stands(self, seat: int, tile: int) -> None:
        st = self.seats[seat]
        st.remove(tile)
        st.drawn = None
        group = self.rules.special_add_target(st, tile)
        st.grow_meld(group, tile)
        self._pay_kong(seat, group.kind, tile, None)
        self.rules.after_kong(self, seat)
        self.tasks.appendleft(partial(self._task_replacement, seat))

    def _pay_kong(self, seat: int, kind: MeldKind, tile: int, source: int | None) -> None:
        for payer, points in self.rules.kong_payments(self, seat, kind, tile, source):
            self.ledger.pay_kong(payer, seat, points)

    # ------------------------------------------------------------------ task queue

    def _run(self) -> None:
        tasks = self.tasks
        while tasks and self.phase != PHASE_OVER:
            if tasks.popleft()():
                return
        if self.phase == PHASE_OVER:
            tasks.clear()

    def _task_close_window(self) -> bool:
        self._close_window()
        return False

    def _task_turn(self, seat: int, context: Context) -> bool:
        self.context = context
        return self._decide(PHASE_TURN, seat)

    def _task_replacement(self, seat: int) -> bool:
        if self.bao_roll_due == seat:  # C14: the declarer's next turn began with a kong on a discard
            self._roll_due_bao()
        st = self.seats[seat]
        tile = self.wall.draw_tail()
        self._receive(st, tile)
        self.context = CONTEXT_REPLACEMENT
        return self._decide(PHASE_TURN, seat)

    def _task_turn_start(self, seat: int) -> bool:
        verdict = self.rules.before_draw(self, seat)
        if verdict == START_EXHAUSTED:
            self._drawn_hand()
            return True
        if self.bao_roll_due == seat:  # C14 bao_roll_at_next_turn: before the draw
            self._roll_due_bao()
        if verdict == START_FINAL_DRAWS:
            self.tasks.appendleft(partial(self._task_final_draw, seat, self.rules.final_draws(self)))
            return False
        if self._task_view(seat):  # the bao view first (C8), the draw after it
            self.tasks.appendleft(partial(self._task_draw, seat))
            return True
        return self._task_draw(seat)

    def _task_draw(self, seat: int) -> bool:
        st = self.seats[seat]
        self._receive(st, self.wall.draw_head())
        self.context = CONTEXT_DRAW
        return self._decide(PHASE_TURN, seat)

    def _receive(self, st: SeatState, tile: int) -> None:
        st.receive(tile)
        st.passed_wins = 0  # R8: 过手胡 lasts until the next draw of any kind
        st.passed_fan = 0

    def _task_final_draw(self, seat: int, left: int) -> bool:
        """The last-draws round (X4 分张, C14 ``final_draws``): each player in turn draws one of
        the last tiles and keeps it; only a possible winner is asked."""
        if left == 0:
            self._drawn_hand()
            return True
        st = self.seats[seat]
        self._receive(st, self.wall.draw_head())
        self.tasks.appendleft(partial(self._task_final_draw, (seat + 1) % 4, left - 1))
        if self.rules.final_draw_win(self, seat):
            return self._decide(PHASE_FINAL_DRAW, seat)
        return False

    # ------------------------------------------------------------------ bao (C8)

    def _task_view(self, seat: int) -> bool:
        st = self.seats[seat]
        if self.bao is not None and st.ready and not st.bao_seen:
            return self._decide(PHASE_BAO_VIEW, seat)
        return False

    def _view_bao(self, seat: int) -> None:
        st = self.seats[seat]
        st.bao_seen = True
        if not st.duibao_passed and self.rules.duibao_possible(self, seat):
            self.tasks.appendleft(partial(self._task_duibao, seat))

    def _task_duibao(self, seat: int) -> bool:
        return self._decide(PHASE_DUIBAO, seat)

    def _task_bao_checks(self, declarer: int | None) -> bool:
        rules = self.rules
        if declarer is not None and not self.bao_rolled:  # the first ready declaration stands
            self.bao_rolled = True
            if rules.defer_bao_roll(self):
                self.bao_roll_due = declarer
            else:
                self._roll_bao()
        while self.bao is not None and rules.bao_exhausted(self, self.bao):  # 换宝
            self.wall.put_back()
            self.bao = None
            for st in self.seats:
                st.bao_seen = False
                st.duibao_passed = False
            self._roll_bao()
        return False

    def _roll_due_bao(self) -> None:
        self.bao_roll_due = None
        self._roll_bao()

    def _roll_bao(self) -> None:
        rules = self.rules
        while self.bao_rolls < rules.max_bao_rolls:
            self.bao_rolls += 1
            s = self.dice.roll(rules.dice_count)
            index = self.wall.upper_of_stack(s)
            self.bao = self.wall.set_aside(index)
            if not rules.bao_exhausted(self, self.bao):
                return
            self.wall.put_back()
        self.bao = None

    # ------------------------------------------------------------------ hand end

    def _win(self, seat: int, method: WinMethod, tile: int | None, payer: int | None) -> None:
        settlement = self.rules.settle(self, seat, method, tile, payer)
        for owed in settlement.owed:
            self.ledger.pay(owed.payer, seat, owed.points, owed.reason)
        self._end_hand(Outcome.WIN, seat, method, tile, settlement)

    def _drawn_hand(self) -> None:
        for payer, payee, points in self.rules.drawn_hand_refunds(self):
            self.ledger.pay(payee, payer, points, "kong_refund")
        self._end_hand(Outcome.DRAW)

    def _end_hand(
        self,
        outcome: Outcome,
        winner: int | None = None,
        method: WinMethod | None = None,
        tile: int | None = None,
        settlement: Settlement | None = None,
    ) -> None:
        self.phase = PHASE_OVER
        self.window = None
        result = hand_result(self.ledger, outcome, self.dealer, winner, method, tile, settlement)
        self.result = result
        result["next_dealer"] = self.next_hand_dealer()
        self.hand_logs[-1].result = result
        if outcome is Outcome.ILLEGAL or self.hand_index + 1 >= self.num_hands:
            self.over = True

    def end_of_step(self) -> HandResult | None:
        """After a step: the result of the hand that ended in it, else None. Within a match
        that goes on, the next hand is dealt at once (`advance_hand`); at the end of the match
        (``over``) the table stays as the hand ended. The envs call this after every step."""
        if self.phase != PHASE_OVER:
            return None
        result = self.result
        if not self.over:
            self.advance_hand()
        return result

    def advance_hand(self) -> None:
        """Start the next hand of the match: the R11 dealer, the wall of (seed, hand index)."""
        assert self.result is not None
        self.dealer = self.result["next_dealer"]
        self.hand_index += 1
        hands, wall = shuffled_deal(self.seed, self.hand_index, self.dealer)
        self.start_hand(hands, wall)

    def match_record(self, variant: str, config: Mapping[str, object]) -> dict[str, object]:
        """JSON-serialisable record of the match so far (API.md "Game records")."""
        hands = [log.record() for log in self.hand_logs]
        return {"variant": variant, "config": config, "num_hands": self.num_hands, "seed": self.seed, "hands": hands}
