"""Coin Race, a fifth game that exists only in the tests: the shape every game
follows (definition, state, engine, summary, and `table.py` with its `GAME`), plugged
into the house with one registry line (tests/games/test_fifth_game.py)."""
