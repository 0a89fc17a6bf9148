"""A package only so that pytest imports notebooks/conftest.py as ``notebooks.conftest``,
not as a second top-level ``conftest`` that would shadow tests/conftest.py."""
