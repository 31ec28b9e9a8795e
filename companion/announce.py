"""The referee's messages, fanned out as they are written.

`Referee.messages` is the short list the screens show. `subscribe_messages` swaps it
for a `MessageFeed` (the same bounded deque, same contents) that also hands every new
line to subscribers: `serve` prints each one to stdout (the journal), a phone page or
anything else may subscribe the same way. Rejections, "choose a car to impound",
photo-finish margins, hardware notices and the winner all pass through here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any


class MessageFeed(deque):  # type: ignore[type-arg]
    """A bounded deque of message lines that calls its subscribers on each append."""

    def __init__(self, iterable: Iterable[str] = (), maxlen: int | None = None) -> None:
        super().__init__(iterable, maxlen)
        self.subscribers: list[Callable[[str], None]] = []

    def append(self, text: str) -> None:
        super().append(text)
        for fn in self.subscribers:
            fn(text)

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.append(text)


def subscribe_messages(referee: Any, fn: Callable[[str], None]) -> MessageFeed:
    """Call `fn(line)` for every message the referee writes from now on."""
    feed = referee.messages
    if not isinstance(feed, MessageFeed):
        feed = MessageFeed(referee.messages, referee.messages.maxlen)
        referee.messages = feed
    feed.subscribers.append(fn)
    return feed
