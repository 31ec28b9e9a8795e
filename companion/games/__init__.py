"""The games this box plays, each a package of its own: its pure rules (`definition.py`
the numbers as data, `state.py` an immutable state, `engine.py` `new_state()` and
`apply(state, event) -> Result` through `base.run`, `summary.py` what `replay --json`
prints) and, apart from them, what the table makes of them, ending in `table.py` with
its `GAME` (companion.games.registry.Game). `registry.get(game_id)` gives a game by
the `new_game` event's `game` field; `house` reads the commands every game takes."""
