"""The lab's tools for network files (half precision, merged heads, int8, weight soups):
each a module with ``main(argv)``, run as ``python -m reader_lab NAME``."""
