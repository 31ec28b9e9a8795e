"""A race where the camera challenges a false Escape and the table upholds the
challenge from the page (Chromium, a 360x740 phone, taps only), with the camera's claim
watch as serve runs it (companion.claims, `[camera] claims = "challenge"`): Bob presses
"Escaped!" while the camera reads only four Escapes among his black dice.

With VAULT_SHOTS=DIR it also saves the challenge on the phone as DIR/page-challenge.png
(the picture in docs/camera.md)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from test_browser import chromium_or_skip, launch
from test_vault_touch_browser import Phone, SimTable

from companion.claims import ClaimWatch
from companion.gamelog import read_log
from companion.games.claims import CHALLENGE
from companion.vision.types import DieReading, FrameReading

ROW = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]


def black_dice(*faces: str) -> FrameReading:
    return FrameReading(1280, 720, tuple(
        DieReading("black", f, 0.99, (100 + 40 * i, 100, 130 + 40 * i, 130),
                   (115.0 + 40 * i, 115.0)) for i, f in enumerate(faces)), mat_found=True)


def test_a_false_escape_is_challenged_and_upheld_from_the_page(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await SimTable().start(tmp_path)
        watch = ClaimWatch(t.referee, t.table.post, mode=CHALLENGE)
        watch.attach(asyncio.get_running_loop())
        pw, browser = await launch(executable)
        try:
            for ev in ({"type": "new_game", "game": "vault-assault", "players": 2,
                        "names": ["Ann", "Bob"], "first_cop": 0},
                       {"type": "heist_hide", "row": ROW},
                       {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]}):
                assert (await t.table.submit(ev)).rejection is None
            cops = await Phone.open(t, browser, "cops")
            await cops.pair()
            text = await cops.page.text_content("#claims-mode")
            assert text == "Claims: challenge (the camera checks claims and challenges false ones)"
            await cops.tap("#go")
            # The camera has settled Bob's dice: four Escapes and a Loot.
            watch.on_reading(black_dice("escape", "escape", "escape", "escape", "loot"))
            await cops.page.click("#buzz-fold summary")
            await cops.tap('[data-buzz="1"]')  # Bob: "Escaped!" (the turn ends)
            await t.until(lambda: bool(t.referee.state.challenges))
            await cops.synced()
            check = await cops.page.text_content("#challenges")
            assert "CHECK: Bob's Escape: the camera sees 4 Escapes" in check
            await cops.check()
            if os.environ.get("VAULT_SHOTS"):  # docs/page-challenge.png
                await cops.page.locator("#challenges").scroll_into_view_if_needed()
                await cops.page.screenshot(
                    path=str(Path(os.environ["VAULT_SHOTS"]) / "page-challenge.png"))
            number = t.referee.state.challenges[0].event
            await cops.tap(f"#upheld-{number}")
            state = t.referee.state
            assert state.phase == "assault" and state.turn.escaped == ()
            assert state.challenges == () and state.seats[1].escaped == 0
            assert await cops.page.locator("#challenges").count() == 0
            said = " ".join(t.referee.messages)
            assert "Challenge upheld: Bob's Escape is taken back" in said
            # the log keeps the press, the camera's check and the table's answer
            t.log.flush()
            kinds = [e.get("type") for _, e in read_log(t.log.path).events]
            assert kinds[-3:] == ["buzz", "claim_check", "challenge_upheld"]
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())
