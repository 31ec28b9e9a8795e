"""The sound card the speaker will play on, checked against /proc/asound/cards.

``[sound] device`` is an ALSA device name as ``aplay -D`` takes it: ``""`` or
``"default"`` (ALSA's default: card 0, or the card ``ALSA_PCM_CARD`` / ``ALSA_CARD``
name, unless /etc/asound.conf or ~/.asoundrc says otherwise), or a name with a card in
it: ``"plughw:1,0"``, ``"hw:CARD=UACDemoV10,DEV=0"``, ``"sysdefault:CARD=MAX98357A"``.
The card it names (by index or by id) must be listed; a name without a card
(``"pulse"``, a device of asound.conf's own) cannot be checked here and is left to aplay.
ALSA's default on a box whose default card is HDMI (a Pi's vc4hdmi) plays where no one
hears it without a screen's speakers: that is said in one line, naming the card to set
when a USB speaker or an I2S amplifier is there too. Pure: the /proc text is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROC_CARDS = Path("/proc/asound/cards")
DEFAULT_NAMES = frozenset({"", "default", "sysdefault", "hw", "plughw"})
# Configurations that may make ALSA's default some other device than card 0.
ALSA_CONFS = (Path("/etc/asound.conf"), Path("~/.asoundrc"))


@dataclass(frozen=True)
class Card:
    """One line of /proc/asound/cards: ` 2 [UACDemoV10     ]: USB-Audio - UACDemoV1.0`."""

    index: int
    id: str
    driver: str
    name: str

    @property
    def hdmi(self) -> bool:
        return "hdmi" in f"{self.id} {self.driver} {self.name}".lower()

    def __str__(self) -> str:
        return f"{self.index} {self.id}"


def parse_cards(text: str) -> list[Card]:
    """The cards /proc/asound/cards lists (none for "--- no soundcards ---" or "")."""
    cards = []
    for line in text.splitlines():
        head, sep, desc = line.partition("]:")
        index, bracket, ident = head.strip().partition("[")
        if sep and bracket and index.strip().isdigit():
            driver, _, name = desc.strip().partition(" - ")
            cards.append(Card(int(index), ident.strip(), driver.strip(), name.strip()))
    return cards


def read_cards(path: Path = PROC_CARDS) -> str:
    """The text of /proc/asound/cards; "" where there is none (no ALSA)."""
    try:
        return path.read_text()
    except OSError:
        return ""


def own_default() -> bool:
    """Whether an ALSA configuration of this system or user may set its own default."""
    return any(p.expanduser().exists() for p in ALSA_CONFS)


def card_in(device: str) -> str | None:
    """The card an ALSA device name gives ("1", "UACDemoV10"), "" for one that takes
    the default card ("default", "hw", "plughw:,0"), None for a name without a card
    ("pulse")."""
    name, colon, args = device.strip().partition(":")
    positional: list[str] = []
    for arg in args.split(",") if colon else []:
        key, eq, value = arg.partition("=")
        if eq and key.strip().upper() == "CARD":
            return value.strip().strip("'\"")
        if not eq:
            positional.append(arg.strip().strip("'\""))
    if positional and positional[0]:
        return positional[0]
    return "" if name in DEFAULT_NAMES or colon else None


@dataclass(frozen=True)
class DeviceCheck:
    """What the check found: `ok` (the speaker may play there), the card (None where it
    cannot be told), and `line`: why not (not ok), a warning (ok), or ""."""

    ok: bool
    card: Card | None = None
    line: str = ""


def check_device(
    device: str,
    cards_text: str,
    *,
    env: Mapping[str, str] | None = None,
    configured_default: bool = False,
) -> DeviceCheck:
    """Check `device` (``[sound] device``) against `cards_text` (/proc/asound/cards).
    `env`: the environment ALSA reads its default card from (os.environ when None);
    `configured_default`: an asound.conf may set the default (`own_default`)."""
    env = os.environ if env is None else env
    cards = parse_cards(cards_text)
    shown = f"ALSA device {device!r}" if device else "ALSA's default device"
    if not cards:
        return DeviceCheck(False, None, f"{shown}: no sound card (/proc/asound/cards lists "
                                       "none)")
    wanted = card_in(device)
    if wanted is None:  # pulse, a device of asound.conf's: aplay will say
        return DeviceCheck(True)
    by_default = wanted == ""
    if by_default:
        if configured_default:
            return DeviceCheck(True)
        wanted = env.get("ALSA_PCM_CARD") or env.get("ALSA_CARD") or "0"
    card = next((c for c in cards if str(c.index) == wanted or c.id == wanted), None)
    listed = ", ".join(str(c) for c in cards)
    if card is None:
        return DeviceCheck(False, None, f"{shown}: no card {wanted} in /proc/asound/cards "
                                        f"({listed}); aplay -L lists the devices")
    if by_default and card.hdmi:
        return DeviceCheck(True, card, hdmi_warning(shown, card, cards))
    return DeviceCheck(True, card)


def hdmi_warning(shown: str, card: Card, cards: list[Card]) -> str:
    """One line: the default plays on HDMI, and where a table speaker is set."""
    others = [c for c in cards if not c.hdmi]
    where = (f'set [sound] device = "plughw:CARD={others[0].id},DEV=0" (card {others[0]})'
             if others else "add a USB speaker or an I2S amplifier and set [sound] device "
             "(docs/maker-guide.md)")
    return (f"{shown} plays on card {card}, HDMI: silent on a box without a screen's "
            f"speakers; {where}")
