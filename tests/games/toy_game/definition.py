"""Coin Race as data: 2-3 players take turns stepping 1-3 spaces; the first to reach
the goal wins."""

GAME_ID = "coin-race"
PLAYERS = (2, 3)
GOAL = 6
MAX_STEP = 3
