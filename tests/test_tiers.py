"""The tier lists of tests/conftest.py name files that exist: a heavy file moved to another folder would otherwise
drop out of ``HEAVY_FILES`` silently and run in the fast tier (``studies/test_studies_longeval.py`` did, once)."""

from pathlib import Path

from conftest import HEAVY_FILES, XDIST_GROUPS

TESTS = Path(__file__).parent


def test_every_heavy_file_and_grouped_file_exists():
    missing = sorted(f for f in set(HEAVY_FILES) | set(XDIST_GROUPS) if not (TESTS / f).is_file())
    assert missing == [], f"tests/conftest.py names test files that do not exist: {missing}"


def _item(fixtures, module="test_probe", path=TESTS / "experiment" / "test_probe.py"):
    """A stand-in test item using ``fixtures``: name -> (scope, defining module, autouse)."""
    from types import SimpleNamespace

    defs = {}
    for name, (scope, where, autouse) in fixtures.items():
        func = lambda: None  # noqa: E731
        func.__module__ = where
        defs[name] = (SimpleNamespace(scope=scope, func=func, _autouse=autouse),)
    return SimpleNamespace(_fixtureinfo=SimpleNamespace(name2fixturedefs=defs), module=SimpleNamespace(__name__=module),
                           fixturenames=list(fixtures), fspath=str(path))


def test_users_of_a_files_module_or_session_fixture_share_one_worker():
    """A module- or session-scoped fixture of the test's own file groups its users (one worker builds it once under
    ``--dist loadgroup``); function-scoped ones, conftest's, and autouse ones do not."""
    from conftest import shared_fixture_group

    assert shared_fixture_group(_item({"run": ("module", "test_probe", False)})) == "module-experiment/test_probe.py"
    assert shared_fixture_group(_item({"wheel": ("session", "test_probe", False)})) == "module-experiment/test_probe.py"
    assert shared_fixture_group(_item({"tmp": ("function", "test_probe", False)})) is None
    assert shared_fixture_group(_item({"local_server": ("session", "conftest", False)})) is None
    assert shared_fixture_group(_item({"guard": ("module", "test_probe", True)})) is None
    assert shared_fixture_group(_item({})) is None
