"""Vault Assault as data: the numbers the rulebook fixes, per player count.

The engine reads every count from here, so a house rule is a data change.
"""

from __future__ import annotations

from dataclasses import dataclass

GAME_ID = "vault-assault"


@dataclass(frozen=True)
class Setup:
    players: int
    seats: int  # 4 players play as 2 teams
    rounds: int
    row_dice: dict[str, int]  # the cops' hidden heist row
    robber_dice: int  # dice each robber seat rolls
    escape_needs: int  # Escape faces showing to yell "Escaped!"
    # "A 3-player game is not a team game, so Robbers hide their chosen dice from
    # other Robbers": which dice each robber flips is never shown to the table.
    secret_flips: bool = False
    # Whose dice are which colours (the rules' setup), for the camera checking claims:
    # the robbers' sets in the cops' comparison order (clockwise from the cops' left;
    # the dice pass clockwise with the cops, so the order holds every turn). The 2-player
    # robber "takes all 5 dice of one set, black or white": black unless the table says
    # otherwise; the 4-player robber team holds 3 black and 3 white dice.
    robber_sets: tuple[tuple[str, ...], ...] = (("black",), ("white",))
    cop_sets: tuple[str, ...] = ("red", "blue")
    # The cops' dice on the table: all red and blue less the Diamond die returned to
    # the box (2-3 players), or 3 red and 3 blue (4 players, one cop each).
    cop_dice: int = 5


SETUPS: dict[int, Setup] = {
    2: Setup(2, 2, 3, {"alarm": 3, "dye_pack": 1, "diamond": 1}, 5, 5),
    3: Setup(3, 3, 2, {"alarm": 3, "dye_pack": 1, "diamond": 1}, 5, 5, secret_flips=True),
    4: Setup(4, 2, 3, {"alarm": 4, "dye_pack": 1, "diamond": 1}, 6, 5,
             robber_sets=(("black", "white"),), cop_dice=6),
}

CARS_PER_SEAT = 3
DIAMONDS_IN_BOX = 5
DIAMOND_VALUE = 40_000
MAX_PRESET_PIECES = 4  # the first mosaic has four pieces
STAGES_BEFORE_ARREST = 3  # stage 4 is the Arrest itself
TILES_PER_DYE_PACK = 2
ROW_FACES = ("alarm", "dye_pack", "diamond")
