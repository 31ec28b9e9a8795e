"""Vault Assault: its pure rules (`definition`, `state`, `engine`, `summary`), and,
apart from them, what the table makes of them, ending in `table.py` with its `GAME`."""
