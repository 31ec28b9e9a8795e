"""The reader's benchmarks and audits: each a module with ``main(argv)``, run as
``python -m reader_lab NAME`` (``reader_lab.cli`` lists them) from the repository root."""
