"""The tests' shared helpers: what more than one test module uses (the engine contract and
the leak tables, the server lanes, misbehaving bots, and the helpers that build apps,
matches, pages and positions).  Test modules import from here, never from one another;
pytest fixtures shared by every module stay in tests/conftest.py."""
