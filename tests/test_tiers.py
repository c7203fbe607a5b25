"""The tier lists of tests/conftest.py name files that exist: a heavy file moved to another folder would otherwise
drop out of ``HEAVY_FILES`` silently and run in the fast tier (``studies/test_studies_longeval.py`` did, once)."""

from pathlib import Path

from conftest import HEAVY_FILES, XDIST_GROUPS

TESTS = Path(__file__).parent


def test_every_heavy_file_and_grouped_file_exists():
    missing = sorted(f for f in set(HEAVY_FILES) | set(XDIST_GROUPS) if not (TESTS / f).is_file())
    assert missing == [], f"tests/conftest.py names test files that do not exist: {missing}"
