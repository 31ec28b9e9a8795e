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
the WebSocket sends it {"kind": "me", "seat", "name"} when it changes. Such a device may
send a secret choice (The Big Score's `choose`) for its own seat only; one that claimed
no seat is the table's own control page and may send it for any seat. While a timed
window is open (The Big Score's choosing) the state says how long it has left
("window": {"seconds_left", "seconds"}).

Events from the page go through the TableLoop's queue like the buttons' and --input's,
so events from two phones are applied one at a time, each once, in one order. POSTs
must carry the header ``X-Vault-Companion: 1`` and, when the browser sends one, an
Origin of this host: a page on another site cannot send either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from companion.events import EventFormatError, decode
from companion.games import registry
from companion.loop import TableLoop, View
from companion.rules.engine import EVENT_TYPES, NOTE_TYPES
from companion.web.moves import legal_moves
from companion.web.pairing import Pairing
from companion.web.view import (
    History,
    earlier_game,
    game_payload,
    led_rows,
    other_games,
    state_payload,
)

STATIC = Path(__file__).parent / "static"
COOKIE = "vc_session"
CSRF_HEADER = "X-Vault-Companion"
MAX_BODY = 8 * 1024
SUBMIT_TIMEOUT = 5.0
MAX_SOCKETS = 64
LOG_PATTERN = "game-*.jsonl"

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
    ) -> None:
        self.table = table
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
        self.sockets: set[web.WebSocketResponse] = set()
        self._socket_token: dict[web.WebSocketResponse, str | None] = {}
        self._socket_me: dict[web.WebSocketResponse, str] = {}
        self._runner: web.AppRunner | None = None
        self._scheduled = False
        self._last_state_key: Any = None
        self._last_me_key: Any = None
        self._last_state_json = ""
        self._last_led_json = ""
        self._games_cache: dict[Path, tuple[tuple[float, int], dict[str, Any] | None]] = {}
        self._send_tasks: set[asyncio.Task[Any]] = set()
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
        self.history.add(event, result)

    def show(self, view: View) -> None:
        """Called by the referee on every change and tick: push what changed."""
        if self._scheduled or not self.sockets:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._scheduled = True
        loop.call_soon(self._push)

    def _push(self) -> None:
        self._scheduled = False
        state_json = self.state_json()
        led_json = self.led_json()
        messages = []
        if state_json != self._last_state_json:
            self._last_state_json = state_json
            messages.append(state_json)
        if led_json != self._last_led_json:
            self._last_led_json = led_json
            messages.append(led_json)
        # Who each device is changes only with the game, a claim or the paired devices.
        me_key = (id(self.referee.state), dict(self.claims), frozenset(self.pairing.sessions))
        check_me = me_key != self._last_me_key
        self._last_me_key = me_key
        for ws in list(self.sockets):
            texts = list(messages)
            me = self.me_json(self._socket_token.get(ws)) if check_me else None
            if me is not None and me != self._socket_me.get(ws):
                self._socket_me[ws] = me
                texts.append(me)
            for text in texts:
                task = asyncio.ensure_future(self._send(ws, text))
                self._send_tasks.add(task)
                task.add_done_callback(self._send_tasks.discard)

    async def _send(self, ws: web.WebSocketResponse, text: str) -> None:
        try:
            await ws.send_str(text)
        except (ConnectionError, RuntimeError):
            self.sockets.discard(ws)

    # ---- payloads
    def games(self) -> list[dict[str, Any]]:
        if self.log_dir is None or not self.log_dir.is_dir():
            return []
        current = getattr(self.referee.log, "path", None)
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
        if game.id != registry.DEFAULT:  # another game: its own moves and payload
            payload = game_payload(
                referee.state,
                history=self.history,
                messages=list(referee.messages),
                moves=game.page_moves(referee.state, self.new_game_after_over),
                games=self.games(),
            )
            window = self.window()
            if window is not None:
                payload["window"] = window
            return payload
        payload = state_payload(
            referee.state,
            history=self.history,
            messages=list(referee.messages),
            moves=legal_moves(referee.state, new_game_after_over=self.new_game_after_over),
            games=self.games(),
        )
        if "new_game" in payload["moves"]:
            payload["other_games"] = other_games()  # the page may start one of these
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
        state = self.referee.state
        if self.referee.game.id == registry.DEFAULT:
            return [s.name for s in state.seats]
        summary_ = self.referee.game.summary(state)
        if isinstance(summary_.get("players"), list):  # The Big Score
            return [str(p.get("name")) for p in summary_["players"]]
        if isinstance(summary_.get("names"), list):  # Vault (abstract)
            return [str(n) for n in summary_["names"]]
        if summary_.get("name"):  # Vault (solitaire)
            return [str(summary_["name"])]
        return []

    def my_seat(self, token: str | None) -> int | None:
        """The seat this device said it is, while paired and that seat is in the game."""
        if not token or not self.pairing.is_paired(token):
            return None
        seat = self.claims.get(token)
        if seat is None or seat >= len(self.seat_names()):
            return None
        return seat

    def me(self, token: str | None) -> dict[str, Any]:
        seat = self.my_seat(token)
        return {"seat": seat, "name": None if seat is None else self.seat_names()[seat]}

    def me_json(self, token: str | None) -> str:
        return json.dumps({"kind": "me", **self.me(token)})

    def resume_offer(self) -> dict[str, Any] | None:
        """What a damaged log offers the table now, if the page can answer it."""
        return self.referee.resume_choice if self.on_resume_choice is not None else None

    def state_json(self) -> str:
        offer = self.resume_offer()
        window = self.window()
        key = (id(self.referee.state), tuple(self.referee.messages), self.history.seq, id(offer),
               window and window["seconds_left"])
        if key != self._last_state_key or not self._cached_state:
            self._last_state_key = key
            self._cached_state = json.dumps(
                {"kind": "state", **self.state(), "resume_choice": offer}
            )
        return self._cached_state

    _cached_state = ""

    def led(self) -> dict[str, Any]:
        view = self.referee.view()
        return {
            "width": view.frame.width,
            "height": view.frame.height,
            "rows": led_rows(view.frame),
            "flash": view.flash,
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
        return request.cookies.get(COOKIE)

    def paired(self, request: web.Request) -> bool:
        return self.pairing.is_paired(self._token(request))

    async def get_state(self, request: web.Request) -> web.Response:
        text = self.state_json()
        head = '{"kind": "state", '
        if text.startswith(head):
            text = "{" + text[len(head):]
        extra = {"led": self.led(), "paired": self.paired(request),
                 "my_seat": self.my_seat(self._token(request))}
        body = text[:-1] + ", " + json.dumps(extra)[1:]
        return web.Response(text=body, content_type="application/json")

    async def _json_body(self, request: web.Request) -> dict[str, Any] | web.Response:
        raw = await request.read()
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
        wait = self.pairing.locked(client)
        if wait > 0:
            return _error(403, f"too many wrong PINs: try again in {wait:.0f} s",
                          retry_after=round(wait))
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body
        token = self.pairing.try_pin(client, body.get("pin"))
        if token is None:
            return _error(403, "wrong PIN (it is on the box's display and in its log)")
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
            self.referee.notice("Page: every device unpaired; a new PIN is on the box")
        else:
            self.pairing.unpair(self._token(request))
        response = web.json_response({"paired": False})
        response.del_cookie(COOKIE, path="/")
        return response

    def event_from_body(self, body: dict[str, Any]) -> dict[str, Any] | str:
        """The event a body asks for, or a one-line reason it is not an event."""
        if "command" in body:
            command = body["command"]
            if len(body) != 1 or not isinstance(command, str):
                return "a command body is {\"command\": \"<short command>\"} and nothing else"
            if len(command) > 500 or "\n" in command:
                return "command: one line of at most 500 characters"
            try:
                body = registry.parse_command(command, self.referee.state)
            except (ValueError, IndexError) as exc:
                return f"command: {exc}"
        kind = body.get("type")
        if not isinstance(kind, str):
            return "event has no 'type'"
        known = EVENT_TYPES if self.referee.game.id == registry.DEFAULT else (
            self.referee.game.event_types | {"new_game"})
        if kind not in known or kind in NOTE_TYPES:
            return f"unknown event type {kind[:40]!r}"
        return body

    async def post_events(self, request: web.Request) -> web.Response:
        if not self.paired(request):
            return _error(401, "not paired: enter the PIN shown on the box")
        body = await self._json_body(request)
        if isinstance(body, web.Response):
            return body
        if body.get("type") == "resume_choice":
            return self._resume_choice(body)
        event = self.event_from_body(body)
        if isinstance(event, str):
            return _error(400, event)
        refused = self.not_this_devices(request, event)
        if refused:
            return _error(403, refused)
        try:
            result = await asyncio.wait_for(self.table.submit(event), SUBMIT_TIMEOUT)
        except TimeoutError:
            return _error(503, "the referee did not answer in time")
        state = json.loads(self.state_json())
        del state["kind"]
        if result.rejection:
            return web.json_response({"rejected": result.rejection, "state": state}, status=409)
        return web.json_response({"accepted": True, "state": state})

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
        names = self.seat_names()
        theirs = f"{names[seat]} (seat {seat})" if 0 <= seat < len(names) else f"seat {seat}"
        return (f"{event['type']}: this phone is {names[mine]}'s (seat {mine}): it may not "
                f"choose for {theirs}")

    async def post_seat(self, request: web.Request) -> web.Response:
        """{"seat": S}: this device is that player's; {"seat": null}: nobody's (the
        table's control page)."""
        if not self.paired(request):
            return _error(401, "not paired: enter the PIN shown on the box")
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
                return _error(409, f"seat: this game's seats are 0-{len(names) - 1}, got {seat}")
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
        state = json.loads(self.state_json())
        del state["kind"]
        return web.json_response({"accepted": True, "message": what, "state": state})

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if len(self.sockets) >= MAX_SOCKETS:
            return _error(503, f"too many open pages (at most {MAX_SOCKETS})")
        ws = web.WebSocketResponse(heartbeat=20, max_msg_size=1024)
        await ws.prepare(request)
        self.sockets.add(ws)
        token = self._token(request)
        self._socket_token[ws] = token
        try:
            await ws.send_str(self.state_json())
            await ws.send_str(self.led_json())
            self._socket_me[ws] = me = self.me_json(token)
            await ws.send_str(me)
            async for msg in ws:  # the page sends nothing; pings are answered by aiohttp
                if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
        finally:
            self.sockets.discard(ws)
            self._socket_token.pop(ws, None)
            self._socket_me.pop(ws, None)
        return ws

    # ---- running
    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        if self.port == 0:  # an ephemeral port (tests): find which
            server = getattr(site, "_server", None)
            if server is not None and server.sockets:
                self.port = server.sockets[0].getsockname()[1]
        self.started_at = time.monotonic()

    async def stop(self) -> None:
        for ws in list(self.sockets):
            with contextlib.suppress(Exception):
                await ws.close()
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
    )
    await server.start()
    line = f"Table page {server.url} PIN {server.pairing.pin}"
    print(f"companion: {line}", file=sys.stderr, flush=True)
    table.referee.notice(line)
    server.pairing.on_pin.append(lambda p: table.referee.notice(f"Page PIN is now {p}"))
    return server
