"""Numbers quoted in the documentation that a generated output holds are checked against it: the paper sweep's
dry-run cost tables of docs/cost.md and docs/real_models.md against ``lcrag reproduce --params params/paper.yaml
--dry-run`` (needs the data directory: without it the sweep has other notebooks and other numbers)."""

import re
from pathlib import Path

import pytest

from tests.conftest import PAPER_DRY_RUN

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # a fresh interpreter plans the whole paper sweep (about a minute on 2 cores)

#: the data the paper sweep's plan reads (lcrag data list): NoLiMa haystacks and the LongEval-RAG files
NEEDS = ("lc-ebg", "longeval2026task4")
#: the docs round to cents what the dry run prints to 4 decimals: a quoted amount is within half a cent of it
CENT = 0.0051


def _data_dir() -> Path | None:
    from lcrag import data_dir

    d = data_dir()  # None without a data directory: the tests that need it skip (they were a collection error)
    return Path(d) if d is not None and all((Path(d) / n).exists() for n in NEEDS) else None


def money(s: str) -> float:
    return float(s.replace("$", "").replace(",", "").replace("*", ""))


def dry_run_per_reader(out: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The per-reader table (reader -> column -> value) and the TOTAL / prefix-caching / batch totals of a dry run's
    output."""
    block = out[out.index("per reader:"):].splitlines()
    header = block[1].split()
    rows = {}
    for line in block[3:]:
        parts = line.split()
        if len(parts) != len(header) + 1:
            break
        rows[parts[0]] = dict(zip(header, map(float, parts[1:])))
    total = re.search(r"TOTAL: ([\d,]+) calls, ([\d,]+) N/A, ([\d,]+) prompt tokens, estimated (\$[\d,.]+) input, "
                      r"at most (\$[\d,.]+)", out)
    cached = re.search(r"with prefix caching .*?: (\$[\d,.]+) input .*batch API without caching: (\$[\d,.]+) input", out)
    return rows, {"calls": money(total.group(1)), "prompt_tokens": money(total.group(3)), "usd": money(total.group(4)),
                  "usd_max": money(total.group(5)), "usd_cached": money(cached.group(1)), "usd_batch": money(cached.group(2))}


def test_dry_run_parser_reads_the_table_and_totals():
    out = ("per reader:\n   calls  n_na  usd_input  usd_input_cached  usd_input_batch\nreader\n"
           "gpt-5  10  0  1.5  1.25  0.75\n\nTOTAL: 10 calls, 0 N/A, 1,000 prompt tokens, estimated $1.50 input, at most "
           "$3.00 with every output budget used (upper bound)\nwith prefix caching (x): $1.25 input (5 prompt tokens "
           "from the cache); through the batch API without caching: $0.75 input\n")
    rows, tot = dry_run_per_reader(out)
    assert rows == {"gpt-5": {"calls": 10, "n_na": 0, "usd_input": 1.5, "usd_input_cached": 1.25, "usd_input_batch": 0.75}}
    assert tot == {"calls": 10, "prompt_tokens": 1000, "usd": 1.5, "usd_max": 3.0, "usd_cached": 1.25, "usd_batch": 0.75}


@pytest.mark.skipif(_data_dir() is None, reason="needs the data directory's NoLiMa and LongEval-RAG files (lcrag data list)")
@pytest.mark.xdist_group(PAPER_DRY_RUN)
def test_cost_tables_of_the_docs_are_the_dry_run(paper_dry_run):
    r = paper_dry_run  # `lcrag reproduce --params params/paper.yaml --dry-run`, fresh cache (tests/conftest.py)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows, tot = dry_run_per_reader(r.stdout)
    cost = (ROOT / "docs" / "cost.md").read_text()
    seen = 0
    for m in re.finditer(r"(?m)^\| `([\w.\-]+)` \| ([\d,]+) \| ([\d,]+) \| (\$[\d,.]+) \| (\$[\d,.]+) \| [^|]+ \| "
                         r"(\$[\d,.]+) \| (\$[\d,.]+) \|$", cost):
        want = rows[m.group(1)]
        got = [money(m.group(i)) for i in range(2, 8)]
        assert got == pytest.approx([want["calls"], want["prompt_tokens"], want["usd_input"], want["usd_input_cached"],
                                     want["usd_input_batch"], want["usd_max"]], abs=CENT), m.group(0)
        seen += 1
    assert seen >= 9
    t = re.search(r"(?m)^\| \*\*total\*\* \| ([\d,]+) \| ([\d,]+) \| \*\*(\$[\d,.]+)\*\* \| \*\*(\$[\d,.]+)\*\* \| [^|]+ \| "
                  r"\*\*(\$[\d,.]+)\*\* \| (\$[\d,.]+) \|$", cost)
    assert [money(g) for g in t.groups()] == [tot["calls"], tot["prompt_tokens"], tot["usd"], tot["usd_cached"],
                                              tot["usd_batch"], tot["usd_max"]]
    models = (ROOT / "docs" / "real_models.md").read_text()
    seen = 0
    for m in re.finditer(r"(?m)^\| `([\w.\-]+)`[^|]* \| (\$[\d,.]+) \| (\$[\d,.]+) \| (\$[\d,.]+) \|$", models):
        want = rows[m.group(1)]
        assert [money(m.group(i)) for i in (2, 3, 4)] == pytest.approx(
            [want[k] for k in ("usd_input", "usd_input_cached", "usd_input_batch")], abs=CENT), m.group(0)
        seen += 1
    assert seen >= 9
    t = re.search(r"(?m)^\| total \(([\d,]+) calls[^|]*\| (\$[\d,.]+) \| (\$[\d,.]+) \| (\$[\d,.]+) \|$", models)
    assert [money(g) for g in t.groups()] == [tot["calls"], tot["usd"], tot["usd_cached"], tot["usd_batch"]]
