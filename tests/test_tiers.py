"""The tier lists of tests/conftest.py name files that exist: a heavy file moved to another folder would otherwise
drop out of ``HEAVY_FILES`` silently and run in the fast tier (``studies/test_studies_longeval.py`` did, once)."""

import ast
from pathlib import Path

from conftest import FAST_TIER, HEAVY_FILES, INTEGRATION, XDIST_GROUPS, integration_test

TESTS = Path(__file__).parent


def test_every_heavy_file_and_grouped_file_exists():
    missing = sorted(f for f in set(HEAVY_FILES) | set(XDIST_GROUPS) if not (TESTS / f).is_file())
    assert missing == [], f"tests/conftest.py names test files that do not exist: {missing}"


def test_every_integration_file_and_test_exists():
    """A renamed integration test would otherwise fall back into the fast tier unnoticed."""
    missing = sorted(f for f in INTEGRATION if not (TESTS / f).is_file())
    assert missing == [], f"tests/conftest.py INTEGRATION names test files that do not exist: {missing}"
    for rel, names in INTEGRATION.items():
        if names is None:
            continue
        defined = {n.name for n in ast.parse((TESTS / rel).read_text()).body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        missing = {n for n in names if n.split("[", 1)[0] not in defined}
        assert not missing, f"tests/conftest.py INTEGRATION names tests that {rel} does not define: {missing}"
        assert rel not in HEAVY_FILES, rel


def test_integration_selection_by_file_and_by_name():
    assert integration_test("test_reliability_spend.py", "test_anything[case-1]")
    assert integration_test("files/test_sqlitewal.py", "test_new_stores_opened_by_four_processes_at_once_never_fail[bare-3]")
    assert not integration_test("files/test_sqlitewal.py", "test_wal_mode")
    assert integration_test("experiment/test_inspect_every_study.py", "test_own_study_inspection[report]")
    assert not integration_test("experiment/test_inspect_every_study.py", "test_own_study_inspection[show]")
    assert not integration_test("test_cli.py", "test_anything")
    # `make check` selects with the expression conftest.py recognises (it then skips importing whole integration files)
    make = (TESTS.parent / "Makefile").read_text()
    check = make[make.index("\ncheck:"):make.index("\ncheck-integration:")]
    assert f'TIER="{FAST_TIER}"' in check


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
