"""The table page and its HTTP API, served by aiohttp inside the companion's own loop.

    GET  /                 the control page (controls need pairing)
    GET  /board            the read-only spectator view
    GET  /api/state        the `replay --json` summary plus what the page shows
    GET  /api/ws           WebSocket: {"kind": "state", ...} and {"kind": "led", ...}
    POST /api/pair         {"pin": "1234"} -> 200 + session cookie, or 403
    POST /api/unpair       {} this device, {"all": true} every device (and a new PIN)
    POST /api/events       one event, or {"command": "<sim short command>"}
    POST /api/seat         {"seat": S} this device is that player's, {"seat": null} nobody's

A paired device may say which player it is (a seat of the game being played, kept per
session on the server, cleared by a new game): GET /api/state tells it ("my_seat") and
the WebSocket sends it {"kind": "me", "seat", "name", "paired", "forgotten", "secret"}
when it changes. Such a device may send a secret choice (The Big Score's `choose`, a
3-player Vault Assault robber's `heist_flip`) for its own seat only; one that claimed
no seat is the table's own control page and may send it for any seat. What only that
device may see (`Game.private`: a robber's own dice) comes as "secret" there, and as
"my_secret" in GET /api/state. While a timed window is open (The Big Score's choosing)
the state says how long it has left ("window": {"seconds_left", "seconds"}).

A page whose session the box no longer knows (it restarted, or every device was
unpaired) is told so at once ("forgotten": true in GET /api/state and in its
WebSocket's "me"), so it asks for the PIN before a tap is lost. Between games (no game
under way) the LED display shows the pairing PIN every PIN_EVERY_SECONDS; the page's
copy of the LED never carries the PIN (anyone may read /api/state).

Events from the page go through the TableLoop's queue like the buttons' and --input's,
so events from two phones are applied one at a time, each once, in one order. POSTs
must carry the header ``X-Vault-Companion: 1`` and, when the browser sends one, an
Origin of this host: a page on another site cannot send either.

An event is answered 200 only once its log line is on disk (fsync'd); when the disk
does not say so within DURABLE_SECONDS the answer is 202, accepted but not yet durable,
with the log's fault in one line (the line is held and written when the disk lets it).
The verdict is shown on the table when judged, not after the disk.

Everything a stranger on the network can make the page hold is bounded: at most
MAX_CONNECTIONS open connections (at the limit the oldest idle one is closed to make
room, so the page stays reachable), a request's headers within KEEPALIVE_SECONDS of
connecting or of the last answer, its body within BODY_SECONDS; each WebSocket has one
sender holding only the latest message of each kind (a page that reads slowly is sent
the latest state, not every one), and one whose send is blocked for WS_SEND_SECONDS or
whose unsent bytes pass WS_BUFFER_BYTES is closed. A malformed request is at most one
line in the journal, never a traceback, and such lines are rate-limited (Journal).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import math
import sys
import termios
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from companion.display.view import View
from companion.events import EventFormatError, decode
from companion.games.base import NOTE_TYPES
from companion.games.house import Help, command
from companion.loop import TableLoop
from companion.web.address import Lookup, host_port, page_host, page_urls
from companion.web.pairing import Attempt, Pairing
from companion.web.view import History, earlier_game, led_rows, page_payload

STATIC = Path(__file__).parent / "static"
COOKIE = "vc_session"
CSRF_HEADER = "X-Vault-Companion"
MAX_BODY = 8 * 1024
SUBMIT_TIMEOUT = 5.0  # the referee judges an event within this, or 503
DURABLE_SECONDS = 2.0  # an accepted event's line on disk within this, or 202
MAX_SOCKETS = 64
# Open TCP connections at most (WebSockets among them), far below the service's file
# limit (systemd/companion.service LimitNOFILE): at the limit the oldest idle one is
# closed to make room for a new one (a new one is refused only when every one is busy).
MAX_CONNECTIONS = 256
KEEPALIVE_SECONDS = 10.0  # a request's headers within this of connecting or the last answer
BODY_SECONDS = 5.0  # a request's body within this of its headers, or 408 and closed
LINGER_SECONDS = 2.0  # an unread body is drained this long after the answer at most
MAX_LINE = 8190  # bytes in the request line and in one header
MAX_HEADERS = 64
WS_SEND_SECONDS = 5.0  # a WebSocket whose send is blocked this long is closed
WS_BUFFER_BYTES = 512 * 1024  # ...and one with more than this waiting to be sent
JOURNAL_SECONDS = 1.0  # one journal line of a kind this often at most
STOP_SECONDS = 3.0  # requests in progress when the page stops are given this long
LOG_PATTERN = "game-*.jsonl"
GAMES_RECHECK_SECONDS = 2.0  # earlier games re-listed this often at most (or on a change)
# Between games the LED shows the pairing PIN for PIN_SHOWN_SECONDS every PIN_EVERY_SECONDS.
PIN_EVERY_SECONDS = 20.0
PIN_SHOWN_SECONDS = 5.0
PIN_FLASH = "pin:"  # the referee's flash that shows a PIN on the LED: "pin:1234"
# Where a person finds the PIN, for the wrong-PIN answer (serve and the sim say better).
PIN_WHERE = "between games it shows on the box's LED display, and the box printed it at start"
# The state (for answers and the WebSockets) is made again this often at most: at once
# when the last one is older, else when this has passed since it (a burst of events is
# answered with one state made after all of them, not one state per event).
STATE_SECONDS = 0.01

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _error(status: int, text: str, **extra: Any) -> web.Response:
    return web.json_response({"error": text.splitlines()[0] if text else "error", **extra},
                             status=status)


ACCEPTED = {"accepted": True}
ACCEPTED_HEAD = json.dumps(ACCEPTED)[:-1]


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Journal:
    """The page's own lines for the journal (stderr, as `serve` prints its others), at
    most one of each kind every `interval` seconds: those held back meanwhile are
    counted in the next one of that kind, or, when none comes, in a line of their own
    once the interval is over (when an event loop runs). `lines` keeps the last ones
    written."""

    def __init__(
        self, interval: float = JOURNAL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.interval = interval
        self.clock = clock
        self.lines: deque[str] = deque(maxlen=100)
        self.held: dict[str, int] = {}
        self._last: dict[str, float] = {}
        self._last_text: dict[str, str] = {}
        self._flushing: set[str] = set()

    def note(self, kind: str, text: str) -> bool:
        """Write one line (True), or count it as held back (False)."""
        now = self.clock()
        last = self._last.get(kind)
        self._last_text[kind] = text
        if last is not None and now - last < self.interval:
            self.held[kind] = self.held.get(kind, 0) + 1
            self._flush_later(kind, last + self.interval - now)
            return False
        self._last[kind] = now
        held = self.held.pop(kind, 0)
        self._write(_one_line(text) + (f" ({held} more like it held back)" if held else ""))
        return True

    def _write(self, text: str) -> None:
        line = f"companion: page: {text}"
        self.lines.append(line)
        with contextlib.suppress(Exception):  # a closed stderr never stops the page
            print(line, file=sys.stderr, flush=True)

    def _flush_later(self, kind: str, delay: float) -> None:
        if kind in self._flushing:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the count waits for the next line of its kind
        self._flushing.add(kind)
        loop.call_later(max(delay, 0.0), self._flush, kind)

    def _flush(self, kind: str) -> None:
        self._flushing.discard(kind)
        held = self.held.pop(kind, 0)
        if held:
            self._last[kind] = self.clock()
            text = _one_line(self._last_text.get(kind, ""), 160)
            self._write(f"{held} more like it held back, the last: {text}")


class _RequestLog:
    """Stands in for aiohttp's `aiohttp.server` logger in the page's request handlers:
    what they would log with a traceback (a malformed request line, an oversized
    header, garbage bytes) becomes one rate-limited journal line, without the
    traceback; their debug lines are dropped. Nothing global is changed."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 (logging's name)
        return level >= logging.WARNING

    def debug(self, *args: Any, **kw: Any) -> None:
        pass

    info = debug

    def warning(self, msg: object, *args: Any, exc_info: Any = None, **kw: Any) -> None:
        try:
            text = str(msg) % args if args else str(msg)
        except (TypeError, ValueError):
            text = str(msg)
        if isinstance(exc_info, BaseException):
            text += f": {type(exc_info).__name__}: {_one_line(str(exc_info), 120)}"
        self.journal.note("request", text)

    error = warning
    critical = warning

    def exception(self, msg: object, *args: Any, exc_info: Any = True, **kw: Any) -> None:
        self.warning(msg, *args, exc_info=exc_info)

    def log(self, level: int, msg: object, *args: Any, **kw: Any) -> None:
        if level >= logging.WARNING:
            self.warning(msg, *args, **kw)


class Connections:
    """The page's open TCP connections (aiohttp request handlers), oldest first, at
    most `cap`: a new one past it closes the oldest idle one, or, when every one is
    busy with a request or is a WebSocket, is itself closed. Idle, in the order they
    are closed: one that has not yet sent a whole request (silent, or sending its
    headers slowly; not one whose bytes wait to be read), then one that does not read
    its answers, then one waiting for its next request (keep-alive) or sending a body.
    Installed on the aiohttp Server of a runner."""

    def __init__(self, server: web.Server, cap: int, journal: Journal) -> None:
        self.cap = cap
        self.journal = journal
        self.open: dict[Any, asyncio.Transport] = {}
        self.busy: set[Any] = set()
        self.evicted = 0  # idle ones closed to make room
        self.refused = 0  # new ones closed: every one was busy
        self._made = server.connection_made
        self._lost = server.connection_lost
        server.connection_made = self.made  # type: ignore[method-assign]
        server.connection_lost = self.lost  # type: ignore[method-assign]

    def made(self, handler: Any, transport: asyncio.Transport) -> None:
        self._made(handler, transport)
        self.open[handler] = transport
        if len(self.open) <= self.cap:
            return
        victim = self._idlest(handler)
        if victim is None:
            self.refused += 1
            self.drop(handler)
            self.journal.note("connections", f"{self.cap} connections open, every one "
                              "busy: a new one refused")
        else:
            self.evicted += 1
            self.drop(victim)
            self.journal.note("connections", f"{self.cap} connections open (the most): "
                              "the oldest idle one closed to make room")

    def _idlest(self, new: Any) -> Any:
        """The connection to close to make room for `new` (None: every one is busy)."""
        not_reading = kept_alive = None
        for handler, transport in self.open.items():
            if handler is new or handler in self.busy or getattr(handler, "_upgraded", False):
                continue
            if not getattr(handler, "_request_count", 0):
                if _unread(transport) > 0:
                    continue  # its request has arrived, not yet read: it is about to speak
                return handler  # not one whole request yet: the oldest such goes first
            if not_reading is None and _unsent(transport) > 0:
                not_reading = handler
            elif kept_alive is None and not getattr(handler, "_messages", None):
                kept_alive = handler  # (one with a request read is about to be handled)
        return not_reading if not_reading is not None else kept_alive

    def lost(self, handler: Any, exc: BaseException | None = None) -> None:
        self.open.pop(handler, None)
        self.busy.discard(handler)
        self._lost(handler, exc)

    def drop(self, handler: Any) -> None:
        """Close a connection now, whatever it has not yet sent."""
        transport = self.open.pop(handler, None)
        self.busy.discard(handler)
        if transport is not None:
            transport.abort()
        with contextlib.suppress(Exception):
            handler.force_close()

    def working(self, handler: Any) -> None:
        if handler in self.open:
            self.busy.add(handler)

    def waiting(self, handler: Any) -> None:
        self.busy.discard(handler)


def _unread(transport: asyncio.Transport) -> int:
    """Bytes a connection has sent that the page has not yet read (FIONREAD)."""
    try:
        sock = transport.get_extra_info("socket")
        buf = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (AttributeError, OSError, ValueError):
        return 0
    return int.from_bytes(buf, sys.byteorder)


def _unsent(transport: asyncio.Transport | None) -> int:
    """Bytes written to a connection that it has not yet taken (0 when closing)."""
    if transport is None or transport.is_closing():
        return 0
    try:
        return transport.get_write_buffer_size()
    except (AttributeError, RuntimeError):
        return 0


class _Peer:
    """One open page's WebSocket: the latest message of each kind not yet sent (a
    newer one replaces it), and the one task that sends them, in turn."""

    __slots__ = ("ws", "token", "transport", "remote", "pending", "wake", "me", "task",
                 "closed")

    def __init__(self, ws: web.WebSocketResponse, request: web.Request) -> None:
        self.ws = ws
        self.token = request.cookies.get(COOKIE)
        self.transport = request.transport
        self.remote = request.remote or "?"
        self.pending: dict[str, str] = {}
        self.wake = asyncio.Event()
        self.me = ""
        self.task: asyncio.Task[None] | None = None
        self.closed = False

    def offer(self, kind: str, text: str) -> None:
        self.pending[kind] = text
        self.wake.set()

    def unsent_bytes(self) -> int:
        return _unsent(self.transport)


class PageServer:
    """The page for one TableLoop. Start it on the loop that runs the table."""

    def __init__(
        self,
        table: TableLoop,
        *,
        pairing: Pairing | None = None,
        log_dir: str | Path | None = None,
        new_game_after_over: bool = False,
        host: str = "127.0.0.1",
        port: int = 8080,
        window_timer: Any = None,
        max_connections: int = MAX_CONNECTIONS,
        durable_seconds: float = DURABLE_SECONDS,
        body_seconds: float = BODY_SECONDS,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
        ws_send_seconds: float = WS_SEND_SECONDS,
        ws_buffer_bytes: int = WS_BUFFER_BYTES,
        journal: Journal | None = None,
        pin_where: str = PIN_WHERE,
    ) -> None:
        self.table = table
        # Where people find the PIN (said with a wrong PIN): true for this box.
        self.pin_where = pin_where
        self._pin_shown_at = float("-inf")  # when the PIN was last put on the LED
        self.max_connections = max_connections
        self.durable_seconds = durable_seconds
        self.body_seconds = body_seconds
        self.keepalive_seconds = keepalive_seconds
        self.ws_send_seconds = ws_send_seconds
        self.ws_buffer_bytes = ws_buffer_bytes
        self.journal = journal or Journal()
        self.connections: Connections | None = None  # once started (start())
        # The timed window's timer (companion.window_timer), for the seconds left;
        # None: no timer closes the windows (no seconds shown).
        self.window_timer = window_timer
        # Which player each paired device said it is: session token -> seat.
        self.claims: dict[str, int] = {}
        self.referee = table.referee
        self.pairing = pairing or Pairing()
        self.log_dir = Path(log_dir) if log_dir else None
        self.new_game_after_over = new_game_after_over
        self.host = host
        self.port = port
        self.history = History()
        # The table's answer to a damaged log ("keep" or "new"), given by the appliance
        # (Appliance.choose_resume); the offer itself is Referee.resume_choice.
        self.on_resume_choice: Callable[[str], str] | None = None
        self.peers: dict[web.WebSocketResponse, _Peer] = {}
        self.ws_closed = 0  # WebSockets closed for not reading what they are sent
        self._runner: web.AppRunner | None = None
        self._scheduled = False
        self._last_push = 0.0
        self._last_state_key: Any = None
        self._state_made = 0.0  # time.monotonic() the state was last made
        self._state_waiter: asyncio.Future[str] | None = None
        self._last_me_key: Any = None
        self._last_state_json = ""
        self._last_led_json = ""
        self._fields_of = ""
        self._fields = ""
        self._accepted_body: tuple[str, bytes] = ("", b"")
        self._games_cache: dict[Path, tuple[tuple[float, int], dict[str, Any] | None]] = {}
        self._games_listed: tuple[Any, float, list[dict[str, Any]]] | None = None
        self._log_path = getattr(self.referee.log, "path", None)
        self._seed_history()
        self.referee.listeners.append(self._on_result)
        self.referee.displays.append(self)  # Display protocol: show(view)
        self.app = self.make_app()

    # ---- the referee side (loop thread)
    def _seed_history(self) -> None:
        log = self.referee.log
        path = getattr(log, "path", None)
        if path is None or not Path(path).exists():
            return
        from companion.gamelog import read_log

        with contextlib.suppress(OSError):
            self.history.seed([e for _, e in read_log(path).events])

    def _on_result(self, event: dict[str, Any], result: Any) -> None:
        path = getattr(self.referee.log, "path", None)
        if path != self._log_path:
            # A new log (serve starts one for a new game after a finished one): the
            # finished game is listed under "games"; the history starts again.
            self._log_path = path
            self.history.clear()
            self.claims.clear()
        if (isinstance(event, dict) and event.get("type") == "new_game"
                and not result.rejection):
            self.claims.clear()  # a new game: every device says again who it is
        self.history.add(event, result, self.referee.game)

    @property
    def sockets(self) -> set[web.WebSocketResponse]:
        """The open pages' WebSockets."""
        return set(self.peers)

    def show(self, view: View) -> None:
        """Called by the referee on every change and tick: push what changed (and,
        between games, put the PIN on the LED now and then)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._pin_between_games(loop)
        if self._scheduled or not self.peers:
            return
        self._scheduled = True
        wait = self._last_push + STATE_SECONDS - time.monotonic()
        if wait > 0:
            loop.call_later(wait, self._push)
        else:
            loop.call_soon(self._push)

    def between_games(self) -> bool:
        """No game under way: none started, or the last one finished for good."""
        game, state = self.referee.game, self.referee.state
        return not game.started(state) or game.finished(state)

    def _pin_between_games(self, loop: asyncio.AbstractEventLoop) -> None:
        """Between games, the pairing PIN on the LED for PIN_SHOWN_SECONDS every
        PIN_EVERY_SECONDS (so a phone can pair whenever no game is on); after the
        referee has drawn this view."""
        now = time.monotonic()
        if now - self._pin_shown_at < PIN_EVERY_SECONDS or not self.between_games():
            return
        if self.referee.flash:
            return  # a flash first: the game's, or a PIN (with the address) still up
        self._pin_shown_at = now
        loop.call_soon(self.show_pin, PIN_SHOWN_SECONDS)

    def show_pin(self, seconds: float) -> None:
        """The pairing PIN on the LED display for `seconds` (never on the page's LED)."""
        self.referee.show_flash_for(PIN_FLASH + self.pairing.pin, seconds)
        self.referee.refresh()

    def _push(self) -> None:
        self._scheduled = False
        self._last_push = time.monotonic()
        state_json = self.state_json()
        led_json = self.led_json()
        messages: list[tuple[str, str]] = []
        if state_json != self._last_state_json:
            self._last_state_json = state_json
            messages.append(("state", state_json))
        if led_json != self._last_led_json:
            self._last_led_json = led_json
            messages.append(("led", led_json))
        # Who each device is changes only with the game, a claim or the paired devices.
        me_key = (id(self.referee.state), dict(self.claims), frozenset(self.pairing.sessions))
        check_me = me_key != self._last_me_key
        self._last_me_key = me_key
        for peer in list(self.peers.values()):
            if peer.closed:
                continue
            if peer.unsent_bytes() > self.ws_buffer_bytes:
                self._close_peer(peer, f"over {self.ws_buffer_bytes} bytes unsent")
                continue
            for kind, text in messages:
                peer.offer(kind, text)
            if check_me:
                me = self.me_json(peer.token)
                if me != peer.me:
                    peer.me = me
                    peer.offer("me", me)

    async def _sender(self, peer: _Peer) -> None:
        """Send a page the latest message of each kind, one at a time; close it when a
        send is blocked for ws_send_seconds or its unsent bytes pass the cap."""
        ws = peer.ws
        try:
            while not peer.closed:
                await peer.wake.wait()
                peer.wake.clear()
                while peer.pending and not peer.closed:
                    kind = next(iter(peer.pending))
                    text = peer.pending.pop(kind)
                    if peer.unsent_bytes() > self.ws_buffer_bytes:
                        self._close_peer(peer, f"over {self.ws_buffer_bytes} bytes unsent")
                        return
                    try:
                        async with asyncio.timeout(self.ws_send_seconds):
                            await ws.send_str(text)
                    except TimeoutError:
                        self._close_peer(peer, f"a send blocked for {self.ws_send_seconds:g} s")
                        return
        except (ConnectionError, RuntimeError):
            peer.closed = True

    def _close_peer(self, peer: _Peer, reason: str) -> None:
        """Close a page that does not read what it is sent: at once, whatever is unsent
        (a polite close would wait for it to read), with one journal line."""
        if peer.closed:
            return
        peer.closed = True
        self.ws_closed += 1
        self.journal.note("websocket", f"closed the WebSocket of {peer.remote}: it does "
                          f"not read what it is sent ({reason})")
        if peer.transport is not None:
            peer.transport.abort()
        if peer.task is not None and peer.task is not asyncio.current_task():
            peer.task.cancel()

    # ---- payloads
    def games(self) -> list[dict[str, Any]]:
        """The earlier games in the log folder, newest first (20 at most). Listed again
        when the folder or the current log changes, or GAMES_RECHECK_SECONDS after the
        last listing, not for every state sent."""
        if self.log_dir is None:
            return []
        current = getattr(self.referee.log, "path", None)
        try:
            key = (self.log_dir.stat().st_mtime_ns, current)
        except OSError:
            return []
        now = time.monotonic()
        listed = self._games_listed
        if listed is not None and listed[0] == key and now - listed[1] < GAMES_RECHECK_SECONDS:
            return listed[2]
        out = self._list_games(current)
        self._games_listed = (key, now, out)
        return out

    def _list_games(self, current: Any) -> list[dict[str, Any]]:
        if self.log_dir is None or not self.log_dir.is_dir():
            return []
        out = []
        paths = sorted(self.log_dir.glob(LOG_PATTERN), reverse=True)
        for path in paths:
            if current is not None and path.resolve() == Path(current).resolve():
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            key = (st.st_mtime, st.st_size)
            cached = self._games_cache.get(path)
            if cached is None or cached[0] != key:
                cached = (key, earlier_game(path))
                self._games_cache[path] = cached
            if cached[1] is not None:
                out.append(cached[1])
            if len(out) >= 20:
                break
        return out

    def state(self) -> dict[str, Any]:
        referee = self.referee
        game = referee.game
        payload = page_payload(
            game,
            referee.state,
            history=self.history,
            messages=list(referee.messages),
            moves=game.page_moves(referee.state, self.new_game_after_over),
            games=self.games(),
        )
        window = self.window()
        if window is not None:
            payload["window"] = window
        payload["pin_where"] = self.pin_where  # where people find the PIN
        # what the camera does with claims ([camera] claims): "off", "advise", "challenge"
        payload["claims"] = referee.claims_mode
        return payload

    def window(self) -> dict[str, Any] | None:
        """The open timed window (The Big Score's choosing): whole seconds left (rounded
        up: 0 only when it is closing) and its length; None when none is open or no
        timer closes it."""
        timer = self.window_timer
        if timer is None or self.referee.game.timed_window(self.referee.state) is None:
            return None
        left = timer.remaining()
        if left is None:
            return None
        return {"seconds_left": math.ceil(left), "seconds": timer.seconds}

    # ---- which player a device is
    def seat_names(self) -> list[str]:
        """The players of the game being played, in seat order ([] while none is)."""
        return self.referee.game.seat_names(self.referee.state)

    def my_seat(self, token: str | None) -> int | None:
        """The seat this device said it is, while paired and that seat is in the game."""
        if not token or not self.pairing.is_paired(token):
            return None
        seat = self.claims.get(token)
        if seat is None or seat >= len(self.seat_names()):
            return None
        return seat

    def me(self, token: str | None) -> dict[str, Any]:
        """Who this device is: its seat and name, whether it is paired, whether its
        session is one the box forgot (it restarted, or unpaired every device), and
        what only it may see now (`Game.private`)."""
        seat = self.my_seat(token)
        paired = self.pairing.is_paired(token)
        secret = self.referee.game.private(self.referee.state, seat) if paired else None
        return {"seat": seat, "name": None if seat is None else self.seat_names()[seat],
                "paired": paired, "forgotten": bool(token) and not paired, "secret": secret}

    def me_json(self, token: str | None) -> str:
        return json.dumps({"kind": "me", **self.me(token)})

    def resume_offer(self) -> dict[str, Any] | None:
        """What a damaged log offers the table now, if the page can answer it."""
        return self.referee.resume_choice if self.on_resume_choice is not None else None

    def _state_key(self) -> tuple[Any, ...]:
        """What the state depends on: it is made again only when this changes."""
        window = self.window()
        return (id(self.referee.state), tuple(self.referee.messages), self.history.seq,
                id(self.resume_offer()), window and window["seconds_left"])

    def state_json(self) -> str:
        """{"kind": "state", ...}: the state now, made again only when it changed."""
        key = self._state_key()
        if key != self._last_state_key or not self._cached_state:
            self._last_state_key = key
            self._cached_state = json.dumps(
                {"kind": "state", **self.state(), "resume_choice": self.resume_offer()}
            )
            self._state_made = time.monotonic()
        return self._cached_state

    async def fresh_state_fields(self) -> str:
        """`state_fields` made after every event judged so far, but made STATE_SECONDS
        apart at most: a burst of answers waits (that long at most) for one state."""
        if self._state_key() == self._last_state_key and self._cached_state:
            return self.state_fields()
        wait = self._state_made + STATE_SECONDS - time.monotonic()
        if wait <= 0:
            return self.state_fields()
        waiter = self._state_waiter
        if waiter is None:
            loop = asyncio.get_running_loop()
            waiter = self._state_waiter = loop.create_future()
            loop.call_later(wait, self._state_ready, waiter)
        return await asyncio.shield(waiter)

    def _state_ready(self, waiter: asyncio.Future[str]) -> None:
        self._state_waiter = None
        if not waiter.done():
            waiter.set_result(self.state_fields())

    _cached_state = ""
    _pairing_lock_told = False  # the table was told pairing is paused for everyone

    def state_fields(self) -> str:
        """The state's JSON object without its "kind" (for answers), made once for each
        state, so an answer splices it in rather than decoding and encoding it again."""
        text = self.state_json()
        if text is not self._fields_of:
            head = '{"kind": "state", '
            self._fields = "{" + text[len(head):] if text.startswith(head) else text
            self._fields_of = text
        return self._fields

    def _answer(self, head: dict[str, Any], status: int = 200,
                fields: str | None = None) -> web.Response:
        """`head`'s fields, then "state": `fields` (default: the state now)."""
        if fields is None:
            fields = self.state_fields()
        if head == ACCEPTED:  # most answers: one body for each state, shared
            if self._accepted_body[0] is not fields:
                body = ACCEPTED_HEAD + ', "state": ' + fields + "}"
                self._accepted_body = (fields, body.encode())
            data = self._accepted_body[1]
        else:
            data = (json.dumps(head)[:-1] + ', "state": ' + fields + "}").encode()
        return web.Response(body=data, status=status, content_type="application/json")

    def led(self) -> dict[str, Any]:
        """The LED frame now, as the page draws it: never the pairing PIN (anyone on
        the network may read it); and, while the game has a board, what each part of it
        means ("legend", `Game.led_legend`) with the board's frame ("frame": the frame
        itself, or the board under a flash word)."""
        referee = self.referee
        view = referee.view()
        frame, flash = view.frame, view.flash
        board = frame
        if flash:  # the board under the flash word (what shows again after it)
            board = referee.game.render(referee.state, None, referee.tick, referee.size)
        if flash and flash.startswith(PIN_FLASH):
            frame, flash = board, None
        legend = referee.game.led_legend(referee.state, referee.size)
        if legend is not None:  # the key, with the board frame it reads
            legend = {**legend, "frame": led_rows(board)}
        return {
            "width": frame.width,
            "height": frame.height,
            "rows": led_rows(frame),
            "flash": flash,
            "legend": legend,
        }

    def led_json(self) -> str:
        return json.dumps({"kind": "led", **self.led()})

    # ---- HTTP
    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._middleware])
        app.router.add_get("/", self._page("index.html"))
        app.router.add_get("/board", self._page("board.html"))
        app.router.add_get("/api/state", self.get_state)
        app.router.add_get("/api/ws", self.websocket)
        app.router.add_post("/api/pair", self.post_pair)
        app.router.add_post("/api/unpair", self.post_unpair)
        app.router.add_post("/api/events", self.post_events)
        app.router.add_post("/api/seat", self.post_seat)
        app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        connections = self.connections
        if connections is not None:
            connections.working(request.protocol)
        try:
            if request.method == "POST":
                refused = self._cross_site(request)
                if refused:
                    response: web.StreamResponse = _error(403, refused)
                else:
                    response = await handler(request)
            else:
                response = await handler(request)
        except web.HTTPRequestEntityTooLarge:
            response = _error(413, f"body too large (at most {MAX_BODY} bytes)")
        except web.HTTPException as exc:
            if exc.status >= 400:
                response = _error(exc.status, exc.reason or "error")
            else:
                raise
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:  # never a traceback to the client
            self.referee.notice(f"page: {type(exc).__name__}: {str(exc)[:80]}")
            response = _error(500, "internal error (the table goes on)")
        finally:
            if connections is not None:
                connections.waiting(request.protocol)
        if not response.prepared:
            for k, v in SECURITY_HEADERS.items():
                response.headers.setdefault(k, v)
        return response

    def _cross_site(self, request: web.Request) -> str | None:
        if request.headers.get(CSRF_HEADER) != "1":
            return f"cross-site request refused (missing {CSRF_HEADER} header)"
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return "cross-site request refused (Origin is not this box)"
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            return "cross-site request refused (Sec-Fetch-Site)"
        return None

    def _page(self, name: str) -> Any:
        path = STATIC / name

        async def handler(_request: web.Request) -> web.StreamResponse:
            return web.FileResponse(path, headers={"Content-Type": "text/html; charset=utf-8"})

        return handler

    def _token(self, request: web.Request) -> str | None:
        """The session cookie's value (read from the header: the one cookie wanted)."""
        header = request.headers.get("Cookie")
        if not header or COOKIE not in header:
            return None
        for part in header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return value.strip('"') or None
        return None

    def paired(self, request: web.Request) -> bool:
        return self.pairing.is_paired(self._token(request))

    async def get_state(self, request: web.Request) -> web.Response:
        text = self.state_fields()
        me = self.me(self._token(request))
        extra = {"led": self.led(), "paired": me["paired"], "my_seat": me["seat"],
                 "forgotten": me["forgotten"], "my_secret": me["secret"]}
        body = text[:-1] + ", " + json.dumps(extra)[1:]
        return web.Response(text=body, content_type="application/json")

    async def _read_body(self, request: web.Request) -> bytes | web.Response:
        """The body, within body_seconds (else 408 and the connection closed); while it
        arrives the connection counts as idle (it may be closed to make room)."""
        if request.content.is_eof():  # it came with the headers
            return await request.read()
        connections = self.connections
        if connections is not None:
            connections.waiting(request.protocol)
        try:
            async with asyncio.timeout(self.body_seconds):
                return await request.read()
        except TimeoutError:
            response = _error(408, f"the body did not arrive within {self.body_seconds:g} s")
            response.force_close()
            return response
        finally:
            if connections is not None:
                connections.working(request.protocol)

    async def _json_body(self, request: web.Request) -> dict[str, Any] | web.Response:
        raw = await self._read_body(request)
        if isinstance(raw, web.Response):
            return raw
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _error(400, "body is not UTF-8 text")
        try:
            return decode(text)
        except EventFormatError as exc:
            return _error(400, f"body: {exc}")
        except RecursionError:
            return _error(400, "body: nested too deeply")

    async def post_pair(self, request: web.Request) -> web.Response:
        client = request.remote or "?"
        # Counted before anything is awaited: requests sent all at once are each counted
        # before any PIN is read, so they compare no more PINs than the limits allow.
        if not self.pairing.everyone_locked():
            self._pairing_lock_told = False
        attempt = self.pairing.attempt(client)
        if not isinstance(attempt, Attempt):
            wait = max(1, math.ceil(attempt))
            return _error(403, f"too many wrong PINs: try again in {wait} s", retry_after=wait)
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body  # the try stays counted
        token = self.pairing.check(attempt, body.get("pin"))
        if token is None:
            self.journal.note("pairing", f"wrong PIN from {client}")
            if self.pairing.everyone_locked() and not self._pairing_lock_told:
                self._pairing_lock_told = True  # told once a lock, to the table itself
                self.referee.notice("Page: pairing paused, too many wrong PINs from the "
                                    "network; 'Unpair every device' draws a new PIN")
            return _error(403, f"wrong PIN ({self.pin_where})")
        response = web.json_response({"paired": True})
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        return response

    async def post_unpair(self, request: web.Request) -> web.Response:
        if not self.paired(request):
            return _error(401, "not paired: enter the PIN first")
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body
        if body.get("all") is True:
            self.pairing.unpair_all()
            self._pairing_lock_told = False
            self.referee.notice("Page: every device unpaired; a new PIN is on the box")
        else:
            self.pairing.unpair(self._token(request))
        response = web.json_response({"paired": False})
        response.del_cookie(COOKIE, path="/")
        return response

    def event_from_body(self, body: dict[str, Any]) -> dict[str, Any] | Help | str:
        """The event a body asks for, the help (a `{"command": "help"}`), or a one-line
        reason it is not an event."""
        if "command" in body:
            command_ = body["command"]
            if len(body) != 1 or not isinstance(command_, str):
                return "a command body is {\"command\": \"<short command>\"} and nothing else"
            if len(command_) > 500 or "\n" in command_:
                return "command: one line of at most 500 characters"
            try:
                parsed = command(command_, self.referee.game, self.referee.state)
            except (ValueError, IndexError) as exc:
                return f"command: {exc}"
            if isinstance(parsed, Help):
                return parsed
            body = parsed
        kind = body.get("type")
        if not isinstance(kind, str):
            return "event has no 'type'"
        known = self.referee.game.event_types | {"new_game"}
        if kind not in known or kind in NOTE_TYPES:
            return f"unknown event type {kind[:40]!r}"
        if kind in self.referee.game.camera_only:
            return f"{kind}: only the camera says this, never a phone"
        return body

    async def post_events(self, request: web.Request) -> web.Response:
        if not self.paired(request):
            return _error(401, self.not_paired(request))
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body
        if body.get("type") == "resume_choice":
            return self._resume_choice(body)
        event = self.event_from_body(body)
        if isinstance(event, Help):  # `help`: the commands now, no event
            return self._answer({"help": event.splitlines()})
        if isinstance(event, str):
            return _error(400, event)
        refused = self.not_this_devices(request, event)
        if refused:
            return _error(403, refused)
        try:
            async with asyncio.timeout(SUBMIT_TIMEOUT + self.durable_seconds):
                result, durable = await self.table.submit_durable(event, self.durable_seconds)
        except TimeoutError:
            return _error(503, "the referee did not answer in time")
        head: dict[str, Any] = (
            {"rejected": result.rejection} if result.rejection else {"accepted": True})
        if durable is False:  # held in memory: the disk is slow or failing
            head["durable"] = False
            head["warning"] = self.not_durable_warning()
        fields = await self.fresh_state_fields()
        if result.rejection:
            return self._answer(head, 409, fields)
        return self._answer(head, 200 if durable is not False else 202, fields)

    def not_paired(self, request: web.Request) -> str:
        """Why this device's taps are not taken, and what to do: one line."""
        if self._token(request):
            return ("this phone is no longer paired (the box restarted or every device "
                    f"was unpaired): enter the PIN ({self.pin_where})")
        return f"not paired: enter the PIN ({self.pin_where})"

    def not_durable_warning(self) -> str:
        """One line: why an accepted event is not yet on disk."""
        fault = getattr(self.referee.log, "fault", None)
        if fault is not None:
            return _one_line(fault.text)
        return (f"the log is not on disk after {self.durable_seconds:g} s (the storage is "
                "slow): the event is held in memory and written when it can be")

    def not_this_devices(self, request: web.Request, event: dict[str, Any]) -> str | None:
        """Why a device that said which player it is may not send this event (another
        player's secret choice), or None."""
        # the game's events that carry one player's secret choice (The Big Score's
        # Rob/Flee): a device that claimed a seat sends them for that seat only
        if event.get("type") not in self.table.referee.game.secret_events:
            return None
        mine = self.my_seat(self._token(request))
        seat = event.get("seat")
        if mine is None or seat == mine or type(seat) is not int:
            return None  # no claim: the table's control page; a bad seat: the rules say
        names = self.seat_names()  # seats for people, from 1
        theirs = (f"{names[seat]} (seat {seat + 1})" if 0 <= seat < len(names)
                  else f"seat {seat + 1}")
        return (f"{event['type']}: this phone is {names[mine]}'s (seat {mine + 1}): it may "
                f"not choose for {theirs}")

    async def post_seat(self, request: web.Request) -> web.Response:
        """{"seat": S}: this device is that player's; {"seat": null}: nobody's (the
        table's control page)."""
        if not self.paired(request):
            return _error(401, self.not_paired(request))
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body
        seat = body.get("seat", "missing")
        if set(body) != {"seat"} or not (seat is None or type(seat) is int):
            return _error(400, 'seat: the body is {"seat": <seat number>} or {"seat": null}')
        token = self._token(request)
        assert token is not None
        self.claims = {t: s for t, s in self.claims.items() if self.pairing.is_paired(t)}
        if seat is None:
            self.claims.pop(token, None)
        else:
            names = self.seat_names()
            if not names:
                return _error(409, "seat: no game is being played (start one first)")
            if not 0 <= seat < len(names):
                return _error(409, f"seat: this game's seats are 0-{len(names) - 1} "
                                   f"(seats 1-{len(names)} to people), got {seat}")
            self.claims[token] = seat
        self._push()
        return web.json_response(self.me(token))

    def _resume_choice(self, body: dict[str, Any]) -> web.Response:
        """{"type":"resume_choice","choice":"keep"|"new"}: the table's answer to a
        damaged log (not a game event: it picks which log the game goes on in)."""
        choice = body.get("choice")
        if set(body) != {"type", "choice"} or choice not in ("keep", "new"):
            return _error(400, 'resume_choice: the body is {"type":"resume_choice",'
                               '"choice":"keep"|"new"}')
        if self.resume_offer() is None:
            reason = "resume_choice: no choice pending (the log was not damaged)"
            return web.json_response({"rejected": reason}, status=409)
        assert self.on_resume_choice is not None
        what = self.on_resume_choice(choice)
        self._push()
        return self._answer({"accepted": True, "message": what})

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if len(self.peers) >= MAX_SOCKETS:
            return _error(503, f"too many open pages (at most {MAX_SOCKETS})")
        ws = web.WebSocketResponse(heartbeat=20, max_msg_size=1024)
        await ws.prepare(request)
        peer = _Peer(ws, request)
        self.peers[ws] = peer
        peer.offer("state", self.state_json())
        peer.offer("led", self.led_json())
        peer.me = self.me_json(peer.token)
        peer.offer("me", peer.me)
        peer.task = asyncio.create_task(self._sender(peer), name="page-ws-sender")
        try:
            async for msg in ws:  # the page sends nothing; pings are answered by aiohttp
                if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE) or peer.closed:
                    break
        finally:
            peer.closed = True
            self.peers.pop(ws, None)
            peer.task.cancel()
            transport = peer.transport
            if transport is not None and peer.unsent_bytes() > 0:
                transport.abort()  # a polite close would wait for it to read
        return ws

    # ---- running
    # How the box's name and LAN addresses are found for `url` and `urls` (tests and
    # the appliance may set their own on an instance).
    lookup = Lookup()

    @property
    def url(self) -> str:
        """The page's address for people: on every address of the box (0.0.0.0), its
        mDNS name (http://vault.local:8080/), never http://0.0.0.0:PORT/."""
        return f"http://{host_port(page_host(self.host, self.lookup), self.port)}/"

    def urls(self) -> list[str]:
        """`url` and, on every address, each of the box's LAN IPv4 addresses (this may
        run `ip`: off the event loop where it matters)."""
        return page_urls(self.host, self.port, self.lookup)

    async def start(self) -> None:
        """Listen on host:port. A listen that fails (OSError: an address the box does
        not have yet, a port in use) leaves the page ready to start again."""
        if self._runner is None:
            self._runner = web.AppRunner(
                self.app,
                access_log=None,
                handle_signals=False,
                shutdown_timeout=STOP_SECONDS,
                logger=_RequestLog(self.journal),
                keepalive_timeout=self.keepalive_seconds,
                lingering_time=LINGER_SECONDS,
                max_line_size=MAX_LINE,
                max_field_size=MAX_LINE,
                max_headers=MAX_HEADERS,
            )
            await self._runner.setup()
            assert self._runner.server is not None
            self.connections = Connections(self._runner.server, self.max_connections,
                                           self.journal)
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await site.stop()  # out of the runner's sites: the next try makes its own
            raise
        if self.port == 0:  # an ephemeral port (tests): find which
            server = getattr(site, "_server", None)
            if server is not None and server.sockets:
                self.port = server.sockets[0].getsockname()[1]
        self.started_at = time.monotonic()

    async def stop(self) -> None:
        for peer in list(self.peers.values()):
            if peer.unsent_bytes() > 0 and peer.transport is not None:
                peer.transport.abort()  # it does not read: no polite close
                continue
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await peer.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        with contextlib.suppress(ValueError):
            self.referee.displays.remove(self)
        with contextlib.suppress(ValueError):
            self.referee.listeners.remove(self._on_result)


def parse_hostport(text: str) -> tuple[str, int]:
    """'HOST:PORT' (IPv6 as [::1]:PORT) -> (host, port); ValueError with one line."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--page must be HOST:PORT (e.g. 127.0.0.1:8080), got {text!r}")
    return host, int(port)


async def start_page(
    table: TableLoop,
    host: str,
    port: int,
    pin: str | None = None,
    *,
    new_game_after_over: bool = False,
    window_timer: Any = None,
) -> PageServer:
    """Serve the page for `table` (the sim's way): game logs listed from the log's
    folder, the address and PIN printed and shown among the referee's messages."""
    import sys

    log_path = getattr(table.referee.log, "path", None)
    server = PageServer(
        table,
        pairing=Pairing(pin=pin) if pin else Pairing(),
        log_dir=Path(log_path).parent if log_path else None,
        new_game_after_over=new_game_after_over,
        host=host,
        port=port,
        window_timer=window_timer,
        pin_where="the sim shows it among its messages (type pin), and on its LED "
                  "between games",
    )
    await server.start()
    line = f"Table page {server.url} PIN {server.pairing.pin}"
    print(f"companion: {line}", file=sys.stderr, flush=True)
    table.referee.notice(line)
    server.pairing.on_pin.append(lambda p: table.referee.notice(f"Page PIN is now {p}"))
    return server
