"""One CLI vocabulary: old spellings fail (exit status 2) with a message naming the new one."""

from __future__ import annotations

import pytest

from lcrag.cli import main


@pytest.mark.parametrize("argv, new", [
    (["run", "study.yaml", "--readers", "gpt-4o", "gpt-5"], "--reader PROFILE"),
    (["run", "study.yaml", "--budget-cap-usd", "40"], "--budget-usd"),
])
def test_old_flags_fail_naming_the_new_one(argv, new, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"{argv[2]} is now {new}" in err


def test_studies_show_names_studies_spec(capsys):
    assert main(["studies", "show", "synthetic-two-hop"]) == 2
    assert "is now `lcrag studies spec NAME`" in capsys.readouterr().err


def test_one_budget_flag_is_the_ray_cap(monkeypatch):
    from lcrag.cli import build_parser
    from lcrag.commands.run import _executor

    args = build_parser().parse_args(["run", "s.yaml", "--executor", "ray", "--budget-usd", "40"])
    assert _executor(args)["cap_usd"] == 40.0


def test_reader_flag_is_repeatable_and_takes_a_file(tmp_path):
    from lcrag.cli import build_parser

    f = tmp_path / "mine.yaml"
    args = build_parser().parse_args(["run", "s.yaml", "--reader", "extractive", "--reader", str(f)])
    assert args.reader == ["extractive", str(f)]
