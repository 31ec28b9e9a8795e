"""The other games played by touch only in Chromium (Playwright), on a 360x740 phone:
taps (and names typed into their boxes), never JSON or the command box. Each game from
the new-game card to the winner, then the next game started from the page, as
`companion sim --page` serves it (a new game after one that is over: a new log):

- The Big Score: Act I's results entered with steppers and chips (the rules' checks
  refuse three Hackers and a short Vault Floor), then tests/scripts/big-score-3p.jsonl
  tapped (choices, tokens drawn with no default, the Driver's draws, the Gun Man's
  steal, trades): the same summary, "Winner: Ann ($830,000)";
- Vault (solitaire): tests/scripts/vault-solitaire.jsonl tapped on the board (faces for
  the roll and the re-roll, a square then its sum, a die then a skimmer), no "Busted"
  before the end;
- Vault (abstract): tests/scripts/vault-abstract.jsonl tapped pawn then cell.

After each screen the page is checked for text that is cut or sticks out (scrollWidth
beyond clientWidth, any box right of 360 px)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from page_checks import CUT
from test_browser import RIGHTMOST, Table, chromium_or_skip, launch

from companion.gamelog import GameLog, read_log
from companion.games import registry
from companion.games.vault_solitaire import table as sol_table
from companion.interactive import new_log_after_game_over
from companion.loop import Referee, TableLoop

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
PHONE = {"width": 360, "height": 740}



def events(script):
    return [ev for _, ev in read_log(SCRIPTS / script).events]


def replayed(evs):
    state = registry.default().new_state()
    for ev in evs:
        state = registry.judge(state, ev).state
    return state


class NextTable(Table):
    """The sim's objects with the page as `companion sim --page` serves it: a new game
    after one that is over starts a new log beside the old."""

    async def start(self, log_path, pin="2468"):
        from companion.web.server import start_page

        self.log = GameLog(log_path, fsync=False)
        self.referee = Referee(log=self.log)
        self.table = TableLoop(self.referee)
        self.table.before_submit.append(lambda ev: new_log_after_game_over(self.referee, ev))
        await self.table.start()
        self.buttons = None
        self.server = await start_page(self.table, "127.0.0.1", 0, pin,
                                       new_game_after_over=True)
        return self

    async def close(self):
        await self.server.stop()
        await self.table.stop()
        if self.referee.log is not None and self.referee.log is not self.log:
            self.referee.log.close()
        self.log.close()


class Phone:
    """A paired phone's page and the taps on it."""

    def __init__(self, t, page):
        self.t, self.page = t, page

    @classmethod
    async def open(cls, t, browser):
        page = await browser.new_page(viewport=PHONE)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(t.server.url)
        await page.fill("#pin", t.server.pairing.pin)
        await page.click("#pair-form button")
        await page.wait_for_selector("#start-other")
        phone = cls(t, page)
        phone.errors = errors
        return phone

    async def synced(self):
        await self.page.wait_for_selector(f'body[data-seq="{self.t.server.history.seq}"]')

    async def tap(self, selector, *, sends=False):
        """Tap `selector`; `sends`: the tap sends an event (wait for the box's answer
        to be on screen)."""
        seq = self.t.server.history.seq
        await self.page.click(selector)
        if sends:
            await self.t.until(lambda: self.t.server.history.seq > seq)
            await self.synced()

    async def fits(self):
        """No text cut and nothing wider than the phone, on this screen."""
        assert await self.page.evaluate(CUT) == []
        assert await self.page.evaluate(RIGHTMOST) <= PHONE["width"]
        assert self.errors == []

    async def text(self, selector):
        return await self.page.text_content(selector) or ""


def run_with_browser(tmp_path, play):
    executable = chromium_or_skip()

    async def go():
        t = await NextTable().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            phone = await Phone.open(t, browser)
            await play(t, phone)
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


# --------------------------------------------------------------------- The Big Score


async def enter_act1(phone, act1):
    """Act I's results by taps: cash with -10/+10/+100 from the $200K start, the payout
    tokens with + , the expert as a chip."""
    for i, a in enumerate(act1):
        cash = a.get("cash", 200)
        for step in (100, 10):
            while cash - 200 >= step:
                await phone.tap(f'[data-cash-step="{i}:{step}"]')
                cash -= step
        for f in ("diamonds", "artifacts", "hard_drives"):
            for _ in range(a.get(f, 0)):
                await phone.tap(f'[data-step="{i}:{f}:1"]')
        await phone.tap(f'[data-expert="{i}:{a.get("expert") or "none"}"]')


async def tap_big_score_event(phone, ev):
    kind = ev["type"]
    if kind == "choose":
        await phone.tap(f'[data-{"flee" if ev["flee"] else "rob"}="{ev["seat"]}"]', sends=True)
    elif kind == "reveal":
        assert await phone.page.is_disabled("#reveal")  # nothing assumed: all to tap
        for seat, tok in enumerate(ev["tokens"]):
            if tok is not None:
                assert "choose" in await phone.text(f'[data-token="{seat}"] .now')
                await phone.tap(f'[data-token="{seat}"] [data-token-kind="{tok}"]')
        if "driver" in ev:
            await phone.tap(f'[data-driver-use="{ev["driver"]["seat"]}"]')
            for j, tok in enumerate(ev["driver"]["tokens"]):
                await phone.tap(f'[data-driver-draw="{j}"] [data-driver-kind="{tok}"]')
        await phone.fits()
        await phone.tap("#reveal", sends=True)
    elif kind == "trade":
        if "steal" in ev:
            await phone.tap(f'[data-steal="{ev["steal"]}"]')
        await phone.fits()
        await phone.tap(f'[data-take="{ev["take"]}"]', sends=True)
    elif kind == "pass":
        await phone.tap("#pass", sends=True)
    else:
        raise AssertionError(f"no tap for {ev}")


def test_the_big_score_whole_game_by_touch_then_the_next_game(tmp_path):
    evs = events("big-score-3p.jsonl")
    act1 = evs[0]["act1"]

    async def play(t, phone):
        await phone.tap('[data-game="big-score"]')
        await phone.tap('[data-count="3"]')
        for i, name in enumerate(["Ann", "Bob", "Cat"]):
            await phone.page.fill(f"#other-name-{i}", name)
        # The rules' checks: three Hackers cannot train; five floor tokens are needed.
        for i in range(3):
            await phone.tap(f'[data-expert="{i}:hacker"]')
        problems = await phone.text("#setup-problems")
        assert "3 players trained a Hacker: at most 2 can" in problems
        assert "the Vault Floor needs 5 more tokens" in problems
        assert await phone.page.is_disabled("#start-other")
        await enter_act1(phone, act1)
        for tok in evs[0]["floor"]:
            await phone.tap(f'[data-floor="{tok}"]')
        assert await phone.page.is_disabled('[data-floor="gold"]')  # the only gold is out
        # Cat has the fewest payout tokens (1): she holds the First Player Marker.
        assert await phone.text("#first-player") == ("First Player Marker: Cat (the fewest "
                                                     "payout tokens)")
        assert await phone.text("#game-setup .fine") == "Ready."
        await phone.fits()
        await phone.tap("#start-other", sends=True)
        state = t.referee.state
        assert [(p.act1_cash, p.act1_diamonds, p.act1_artifacts, p.act1_drives, p.expert)
                for p in state.players] == [
            (a.get("cash"), a.get("diamonds", 0), a.get("artifacts", 0),
             a.get("hard_drives", 0), a.get("expert")) for a in act1]
        assert state.marker == 2
        await phone.fits()
        for ev in evs[1:]:
            await tap_big_score_event(phone, ev)
        assert registry.summary(t.referee.state) == registry.summary(replayed(evs))
        assert t.referee.rejections == 0
        assert await phone.text("#winners") == "Winner: Ann ($830,000)"
        await phone.fits()

        # The next game from the page: the same players, a new Act I, a new log.
        assert await phone.text("#game-setup h2") == "Next game"
        assert [await phone.page.input_value(f"#other-name-{i}") for i in range(3)] == [
            "Ann", "Bob", "Cat"]
        for tok in ("cash20", "cash30", "silver", "key", "artifact"):
            await phone.tap(f'[data-floor="{tok}"]')
        assert "tap the youngest" in await phone.text("#setup-problems")  # all tie at 0
        await phone.tap('[data-first="1"]')
        assert await phone.text("#start-other") == "Play again"
        await phone.tap("#start-other", sends=True)
        state = t.referee.state
        assert registry.of_state(state).id == "big-score" and state.round == 1
        assert state.marker == 1 and [p.act1_cash for p in state.players] == [200] * 3
        assert len(list(tmp_path.glob("game-*.jsonl"))) == 2
        await phone.fits()

    run_with_browser(tmp_path, play)


# --------------------------------------------------------------------- Vault (solitaire)


async def tap_faces(phone, values, done):
    for v in values:
        await phone.tap(f'.faces [data-face="{v}"]')
    await phone.tap(done, sends=True)


async def tap_solitaire_event(t, phone, ev):
    kind = ev["type"]
    state = t.referee.state
    if kind == "roll":
        await tap_faces(phone, ev["dice"], "#roll")
    elif kind == "mark":
        # The way offered for these dice values and skimmers, tapped by its sum.
        want = (sorted(state.dice[i] for i in ev["dice"]), sorted(ev.get("skimmers", [])))
        ways = sol_table.page_details(state)["ways"][ev["cell"]]
        text = next(w["text"] for w in ways
                    if (sorted(state.dice[i] for i in w["event"]["dice"]),
                        sorted(w["event"]["skimmers"])) == want)
        await phone.tap(f'[data-sq="{ev["cell"]}"]')
        if await phone.page.locator("#ways-all").count():
            await phone.tap("#ways-all")
        seq = t.server.history.seq
        await phone.page.get_by_role("button", name=text, exact=True).click()
        await t.until(lambda: t.server.history.seq > seq)
        await phone.synced()
    elif kind == "power":
        await phone.tap(f'[data-die="{ev["die"]}"]')
        await phone.tap(f'[data-power="{ev["die"]}:{ev["skimmer"]}"]', sends=True)
    elif kind == "reroll":
        for i in ev["dice"]:
            await phone.tap(f'[data-die="{i}"]')
        await phone.tap("#reroll-start")
        order = sorted(range(len(ev["dice"])), key=lambda j: ev["dice"][j])
        await tap_faces(phone, [ev["values"][j] for j in order], "#reroll-send")
    elif kind == "pass":
        await phone.tap("#sol-pass", sends=True)
    else:
        raise AssertionError(f"no tap for {ev}")


def test_solitaire_whole_game_by_touch_then_the_next_game(tmp_path):
    evs = events("vault-solitaire.jsonl")

    async def play(t, phone):
        await phone.tap('[data-game="vault-solitaire"]')
        await phone.page.fill("#other-name-0", "Sam")
        await phone.tap("#start-other", sends=True)
        # True words: a score so far, no rank ("Busted") before the game is over.
        assert "Busted" not in await phone.text("body")
        assert await phone.text("#phase") == ("Vault (solitaire) · Sam · round A: roll the "
                                              "five dice (lock A closes column b)")
        assert await phone.page.is_disabled("#roll")
        await phone.fits()
        for n, ev in enumerate(evs[1:]):
            await tap_solitaire_event(t, phone, ev)
            if n in (0, 1, 9):  # the board after a roll, a mark, a re-roll
                await phone.fits()
                if not t.referee.game.over(t.referee.state):
                    assert "Busted" not in await phone.text("body")
        final = replayed(evs)
        assert registry.summary(t.referee.state) == registry.summary(final)
        assert t.referee.rejections == 0
        assert await phone.text("#winners") == "Game over: 4 points, Busted!!!"
        await phone.fits()
        # The next game: the same player, one tap.
        assert await phone.page.input_value("#other-name-0") == "Sam"
        await phone.tap("#start-other", sends=True)
        state = t.referee.state
        assert registry.of_state(state).id == "vault-solitaire" and state.phase == "roll"
        assert state.name == "Sam" and len(list(tmp_path.glob("game-*.jsonl"))) == 2
        await phone.fits()

    run_with_browser(tmp_path, play)


def test_the_solitaire_marks_read_as_sums_with_their_minus_signs(tmp_path):
    async def play(t, phone):
        await phone.tap('[data-game="vault-solitaire"]')
        await phone.page.fill("#other-name-0", "Sam")
        await phone.tap("#start-other", sends=True)
        await tap_faces(phone, [5, 6, 4, 5, 1], "#roll")
        await phone.tap('[data-sq="a3"]')  # a 10
        ways = phone.page.locator("#ways button")
        texts = [x.strip() for x in await ways.all_text_contents()]
        assert "5 + 5 = 10" in texts and "6 + 4 = 10" in texts
        if await phone.page.locator("#ways-all").count():
            await phone.tap("#ways-all")
            texts = [x.strip() for x in await ways.all_text_contents()]
        assert "5 + 6 + 4 - 5 = 10" in texts  # the minus sign kept
        await phone.fits()
        await phone.page.get_by_role("button", name="5 + 6 + 4 - 5 = 10", exact=True).click()
        await t.until(lambda: "a3" in registry.summary(t.referee.state)["marked"])
        assert t.referee.state.used == frozenset({0, 1, 2, 3})

    run_with_browser(tmp_path, play)


# --------------------------------------------------------------------- Vault (abstract)


def test_abstract_whole_game_by_touch_then_the_next_game(tmp_path):
    evs = events("vault-abstract.jsonl")

    async def play(t, phone):
        await phone.tap('[data-game="vault-abstract"]')
        await phone.page.fill("#other-name-0", "Wanda")
        await phone.page.fill("#other-name-1", "Boris")
        await phone.tap("#start-other", sends=True)
        await phone.fits()
        for ev in evs[1:]:
            await phone.tap(f'#abstract-board [data-cell="{ev["from"]}"]')
            await phone.page.wait_for_selector(f'#abstract-board td.dest[data-cell="{ev["to"]}"]')
            await phone.tap(f'#abstract-board [data-cell="{ev["to"]}"]', sends=True)
        assert registry.summary(t.referee.state) == registry.summary(replayed(evs))
        assert t.referee.rejections == 0
        assert await phone.text("#winners") == "Winner: Wanda (far rank)"
        await phone.fits()
        assert [await phone.page.input_value(f"#other-name-{i}") for i in (0, 1)] == [
            "Wanda", "Boris"]
        await phone.tap("#start-other", sends=True)
        state = t.referee.state
        assert registry.of_state(state).id == "vault-abstract" and not state.moves
        assert len(list(tmp_path.glob("game-*.jsonl"))) == 2
        await phone.fits()

    run_with_browser(tmp_path, play)


def test_six_big_score_players_with_long_names_fit_the_phone(tmp_path):
    names = ["Alexandra-Catherine Montgomery-Smythe X", "B" * 40, "Cat", "Dmitri " * 5,
             "Eve", "F" * 39]

    async def play(t, phone):
        await phone.tap('[data-game="big-score"]')
        await phone.tap('[data-count="6"]')
        for i, name in enumerate(names):
            await phone.page.fill(f"#other-name-{i}", name[:24])  # the box takes 24
        for tok in ("cash100", "cash100", "gold", "silver", "diamond"):
            await phone.tap(f'[data-floor="{tok}"]')
        await phone.tap('[data-first="5"]')
        await phone.fits()
        await phone.tap("#start-other", sends=True)
        await phone.fits()
        await phone.tap("#close-choices", sends=True)  # everyone robs
        for seat, tok in enumerate(["cash50", "cash50", "artifact", "key", "cop", "silver"]):
            await phone.tap(f'[data-token="{seat}"] [data-token-kind="{tok}"]')
        await phone.fits()
        await phone.tap("#reveal", sends=True)
        assert t.referee.state.phase == "trade" and t.referee.state.marker == 5
        assert t.referee.rejections == 0
        await phone.fits()

    run_with_browser(tmp_path, play)
