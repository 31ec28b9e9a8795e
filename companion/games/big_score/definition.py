"""The Big Score, Act II (Van Ryder Games, 2018) as data. Money is in $K.

Readings where the rulebook text lost a picture (see the README, "More games on the same box"):
- COP_SPACES: the cop track's numbered spaces run 1..6 with Busted beyond space 1, so in
  an N-player game the first cop lies on space N and the (N+1)-th cop lands on Busted.
- ability timing: the Driver's two draws and the Grease Man's steal are entered with the
  round's reveal (both happen "immediately" after choosing to flee).
"""

from __future__ import annotations

GAME_ID = "big-score"
MIN_PLAYERS, MAX_PLAYERS = 1, 6

# The 62 circular Vault Tokens (rulebook: "Vault contents (62 tokens)").
VAULT_TOKENS: dict[str, int] = {
    "cash20": 4,
    "cash30": 6,
    "cash50": 6,
    "cash100": 4,
    "silver": 5,
    "gold": 1,
    "key": 6,
    "cop": 10,
    "artifact": 10,
    "diamond": 10,
}
TOKEN_KINDS = tuple(VAULT_TOKENS)
TOTAL_TOKENS = sum(VAULT_TOKENS.values())  # 62
CASH_VALUE = {"cash20": 20, "cash30": 30, "cash50": 50, "cash100": 100}
FLOOR_SIZE = 5  # Vault Floor tokens drawn at setup (never cops)
COP_SPACES = 6  # numbered spaces on the track; a cop beyond space 1 is on Busted

# Payouts ($K).
SILVER_BAR = 150
GOLD_BAR = 200
ARTIFACT_EACH = 30
ARTIFACT_MAJORITY = 250  # the single player with the most artifacts; a tie: nobody
DRIVE_WITH_KEY = 200  # a Hard Drive unlocked by a Digital Key; locked drives are $0
HACKER_UNPAIRED = 50  # the Hacker's unpaired Hard Drives or Digital Keys, each
DIAMONDS_BY_QUANTITY = (0, 20, 50, 100, 200, 350)  # total worth of 0..5 diamonds
DIAMOND_EACH_ADDITIONAL = 150

EXPERTS = ("muscle", "con_man", "driver", "grease_man", "gun_man", "hacker")
ONE_USE_EXPERTS = frozenset(EXPERTS) - {"hacker"}  # the Hacker only changes scoring
DRIVER_DRAWS = 2

# Act I payout tokens a player may bring into Act II (cash is a $K value).
ACT1_FIELDS = ("cash", "diamonds", "artifacts", "hard_drives")
# The box's Act I payout tokens ("Payout tokens for Act I": Hard Drive (30), Diamond
# (30), Artifact (30)): all players together bring no more of a kind into Act II.
ACT1_SUPPLY = {"diamonds": 30, "artifacts": 30, "hard_drives": 30}
CASH_TOKEN = 10  # $K: the smallest cash token (the page asks for multiples of it)
START_CASH = 200  # $K: "Each player starts the game with $200K in Cash Tokens"
# "There are 7 Expert Crew Cards of each Crew type" and training takes 3 of them, so
# "it is possible for 2 different players to each gain the same Expert Ability": no more.
EXPERT_CARDS, TRAINING_CARDS = 7, 3
MAX_SAME_EXPERT = EXPERT_CARDS // TRAINING_CARDS  # 2
EXPERT_NAMES = {"muscle": "Muscle", "con_man": "Con Man", "driver": "Driver",
                "grease_man": "Grease Man", "gun_man": "Gun Man", "hacker": "Hacker"}


def busted_after(players: int) -> int:
    """How many cops on the track put one on Busted: the first lies on space `players`."""
    return players + 1


def diamonds_worth(n: int) -> int:
    if n < len(DIAMONDS_BY_QUANTITY):
        return DIAMONDS_BY_QUANTITY[n]
    return DIAMONDS_BY_QUANTITY[-1] + (n - len(DIAMONDS_BY_QUANTITY) + 1) * DIAMOND_EACH_ADDITIONAL
