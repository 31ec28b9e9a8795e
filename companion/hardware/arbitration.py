"""Who pressed first: pure arbitration of buzzer presses.

Edges reach the host out of order: two edges latched in one interrupt are delivered in
ascending GPIO-number order, a serial co-processor's reports queue behind each other,
and a busy loop delays callbacks. So the first press of a race opens a *settle
window*: presses that arrive within `settle_ns` of it (by arrival time) are collected,
then ordered by their edge timestamps. Presses closer than `tie_ns` are a tie, decided
by the tie rule. The arbiter knows one seat apart, the *late seat*: the seat whose
press answers the race instead of running it (in Vault Assault the cops, whose Arrest
may only follow the stages). The rules, named for what they do:

- "racers-first" (default): the racing seats before the late seat (Vault Assault:
  robbers before the cops, since the cops must finish their mosaics before the robbers
  begin to yell);
- "late-seat-first": the late seat before the racers;
- "lowest-seat": the lower seat number first.

The configuration keeps its values (`[timing] tie_rule`: "robbers", "cops",
"lowest-seat"; a contract): `TIE_RULE_OF_CONFIG` maps them to these names at the
config edge, in `ArbiterConfig`. Within a side, a tie goes to the earlier stamp, then
the lower seat. Everything here
is pure: presses (with their arrival times) in, verdicts out; the caller owns clocks
and timers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

RACERS_FIRST = "racers-first"
LATE_SEAT_FIRST = "late-seat-first"
LOWEST_SEAT = "lowest-seat"
# The config's values (a contract, as they are) -> the rule each names.
TIE_RULE_OF_CONFIG = {"robbers": RACERS_FIRST, "cops": LATE_SEAT_FIRST, "lowest-seat": LOWEST_SEAT}
TIE_RULES = tuple(TIE_RULE_OF_CONFIG)  # the values `[timing] tie_rule` accepts


@dataclass(frozen=True)
class ArbiterConfig:
    settle_ns: int = 5_000_000  # 5 ms
    tie_ns: int = 50_000  # 50 us: covers the Pi's GPIO-number bias within one interrupt
    tie_rule: str = "robbers"  # the config's value (TIE_RULES); `rule` is what it does

    @property
    def rule(self) -> str:
        """The tie rule by what it does: RACERS_FIRST, LATE_SEAT_FIRST or LOWEST_SEAT."""
        return TIE_RULE_OF_CONFIG[self.tie_rule]

    def __post_init__(self) -> None:
        if self.tie_rule not in TIE_RULES:
            raise ValueError(
                f"tie_rule must be one of {', '.join(TIE_RULES)}, got {self.tie_rule!r}"
            )
        if self.settle_ns < 0 or self.tie_ns < 0:
            raise ValueError("settle_ns and tie_ns must be >= 0")


@dataclass(frozen=True)
class Press:
    seat: int
    ts_ns: int  # the edge's timestamp (kernel, co-processor or script)
    arrival_ns: int  # when it reached the arbiter, on the arbiter's clock


@dataclass(frozen=True)
class Verdict:
    """Presses of one settle window in the order the referee takes them."""

    order: tuple[Press, ...]
    ties: tuple[tuple[int, ...], ...] = ()  # seats judged tied, each group in verdict order

    @property
    def photo_finish(self) -> bool:
        return len(self.order) > 1

    def margin_ns(self) -> int | None:
        """How far (by stamp) the winner was ahead of the next press."""
        if len(self.order) < 2:
            return None
        return self.order[1].ts_ns - self.order[0].ts_ns


def _side_key(press: Press, late_seat: int | None, rule: str) -> tuple[int, ...]:
    is_late = press.seat == late_seat
    if rule == RACERS_FIRST:
        return (1 if is_late else 0,)
    if rule == LATE_SEAT_FIRST:
        return (0 if is_late else 1,)
    return (press.seat,)


def order_presses(
    presses: Sequence[Press], late_seat: int | None, config: ArbiterConfig
) -> Verdict:
    """Order presses by edge timestamp, resolving ties by the configured rule.

    A tie group starts at the earliest press not yet grouped and takes every press
    stamped less than `tie_ns` after it (anchored, so ties do not chain)."""
    by_stamp = sorted(presses, key=lambda p: (p.ts_ns, p.seat))
    order: list[Press] = []
    ties: list[tuple[int, ...]] = []
    i = 0
    while i < len(by_stamp):
        first = by_stamp[i]
        j = i + 1
        while j < len(by_stamp) and by_stamp[j].ts_ns - first.ts_ns < config.tie_ns:
            j += 1
        group = sorted(
            by_stamp[i:j],
            key=lambda p: (*_side_key(p, late_seat, config.rule), p.ts_ns, p.seat),
        )
        if len(group) > 1:
            ties.append(tuple(p.seat for p in group))
        order.extend(group)
        i = j
    return Verdict(tuple(order), tuple(ties))


@dataclass(frozen=True)
class Window:
    """The presses collected since the first press of the current settle window."""

    pending: tuple[Press, ...] = ()
    closes_at: int | None = None  # arrival time after which the window closes

    @property
    def open(self) -> bool:
        return bool(self.pending)


@dataclass(frozen=True)
class Offer:
    window: Window
    closed: Verdict | None = None  # a verdict for the previous window, if this press closed it
    dropped: tuple[Press, ...] = field(default_factory=tuple)  # repeat presses of a seat


def offer(window: Window, press: Press, late_seat: int | None, config: ArbiterConfig) -> Offer:
    """Add a press. A press arriving after the window's close time closes it first
    (the verdict comes back) and opens a new window. A seat's second press in one
    window is dropped: the first press is that seat's."""
    closed = None
    if window.open and window.closes_at is not None and press.arrival_ns > window.closes_at:
        closed = order_presses(window.pending, late_seat, config)
        window = Window()
    if any(p.seat == press.seat for p in window.pending):
        return Offer(window, closed, (press,))
    if not window.open:
        return Offer(Window((press,), press.arrival_ns + config.settle_ns), closed)
    return Offer(Window((*window.pending, press), window.closes_at), closed)


def close(window: Window, late_seat: int | None, config: ArbiterConfig) -> tuple[Window, Verdict]:
    """Close the window now: its verdict, and an empty window."""
    return Window(), order_presses(window.pending, late_seat, config)


def due(window: Window, now_ns: int) -> bool:
    return window.open and window.closes_at is not None and now_ns >= window.closes_at
