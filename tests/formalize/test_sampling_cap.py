"""Very large tests are sampled under verify's per-test cap (seeded, stratified over
templates, counted not expanded) with a note, instead of the suite being refused."""

from __future__ import annotations

import json
import random
import textwrap
import tracemalloc
from collections import Counter

import pytest

from formalize import Suite, TemplateRunner, sampling_plan
from formalize._expand import StratifiedSample, allocate
from synth.core import TemplateError
from synthcheck.cli import main
from tests.formalize.conftest import KeywordScorer, suite_dict

LEX = {"A": [f"a{i}" for i in range(30)], "B": [f"b{i}" for i in range(30)],
       "C": [f"c{i}" for i in range(30)], "ONE": ["x", "y"]}


def big_suite(**extra) -> Suite:
    """'big': a 27,000-fill template and a 2-fill one; 'small': 2 cases."""
    return Suite.from_dict(suite_dict(
        {"name": "big", "type": "mft", "label": "positive",
         "templates": ["{A} {B} {C} good", "only {ONE} good"]},
        {"name": "small", "type": "mft", "label": "positive", "template": "tiny {ONE} good"},
        lexicons=LEX, **extra))


def test_plan_counts_without_expanding_and_skips_sampled_tests():
    suite = big_suite()
    plan = sampling_plan(suite, None, 100)
    assert list(plan) == ["big"]
    assert (plan["big"].total, plan["big"].sampled, plan["big"].draws) == (27_002, 100, 100)
    assert sampling_plan(suite, 50, 100) == {}  # --sample N chooses instead
    assert sampling_plan(suite, None, None) == {}
    assert sampling_plan(suite, None, 30_000) == {}
    assert "expands to 27,002 cases; sampling 100 (verify.max_cases_per_test; --sample N" in \
        plan["big"].note("big")


def test_runner_samples_stratified_so_every_template_keeps_cases():
    suite = big_suite()
    runner = TemplateRunner(max_cases_per_test=100, seed=3)
    result = runner.run(suite, [KeywordScorer()])
    per_test = Counter(result.cases.test)
    assert per_test == {"big": 100, "small": 2}
    templates = Counter(result.cases.query("test == 'big'").template)
    # The 2-fill template is not lost among 27,000 fills (a plain sample would drop it).
    assert templates["only {ONE} good"] >= 1 and sum(templates.values()) == 100
    assert result.meta["sampled"] == {"big": {"total": 27_002, "sampled": 100}}
    again = TemplateRunner(max_cases_per_test=100, seed=3).run(suite, [KeywordScorer()])
    assert list(again.cases.text) == list(result.cases.text)  # seeded
    other = TemplateRunner(max_cases_per_test=100, seed=4).run(suite, [KeywordScorer()])
    assert list(other.cases.text) != list(result.cases.text)


def test_no_cap_no_change():
    suite = big_suite()
    result = TemplateRunner(sample=7, seed=1).run(suite, [KeywordScorer()])
    assert "sampled" not in result.meta and Counter(result.cases.test)["big"] == 7


def test_cap_is_lowered_to_fit_the_case_limit_else_refused():
    suite = big_suite(max_cases=50)
    total, plan = TemplateRunner(max_cases_per_test=100).check(suite)
    assert total == 50 and plan["big"].sampled == 48 and plan["big"].lowered
    assert "lowered to keep the suite within its case limit" in plan["big"].note("big")
    total, plan = TemplateRunner(max_cases_per_test=40).check(suite)
    assert total == 42 and plan["big"].sampled == 40 and not plan["big"].lowered
    tight = big_suite(max_cases=2)  # 'small' alone is 2: no draw of 'big' fits
    with pytest.raises(TemplateError, match=r"102 cases, over the limit of 2"):
        TemplateRunner(max_cases_per_test=100).check(tight)


def test_allocate_gives_each_part_a_share():
    rng = random.Random(0)
    assert allocate([27_000, 2, 0], 100, rng) == [99, 1, 0]  # one each, the rest by size
    assert sum(allocate([5, 5, 5], 2, rng)) == 2  # fewer draws than parts: one each to two
    q = allocate([10, 1000, 90], 50, rng)
    assert sum(q) == 50 and all(x >= 1 for x in q) and q[1] > q[2] > q[0]


def test_huge_test_samples_in_memory_independent_of_its_size():
    lex = {k: [f"{k.lower()}{i}" for i in range(300)] for k in "ABC"}  # 27,000,000 fills
    suite = Suite.from_dict(suite_dict(
        {"name": "huge", "type": "mft", "label": "positive", "template": "{A} {B} {C} good"},
        lexicons=lex, max_cases=10_000_000))
    test = suite.test("huge")
    assert test.count() == 27_000_000
    tracemalloc.start()
    cases = list(test.cases(StratifiedSample(2_000), 0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(cases) == 2_000 and peak < 20_000_000


SUITE = textwrap.dedent("""\
    name: wide
    labels: [negative, positive]
    lexicons:
      A: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]
      B: [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9]
    tests:
      - {name: grid, type: mft, templates: ["{A} {B} good", "just good"], label: positive}
      - {name: tiny, type: mft, template: "{A} good", label: positive}
    """)


def test_verify_cli_samples_with_a_note_and_records_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "wide.yaml").write_text(SUITE)
    (tmp_path / "mod_cap.py").write_text(
        "def predict(texts):\n    return [{'positive': 0.9, 'negative': 0.1} for t in texts]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent("""\
        task: {labels: [negative, positive]}
        task_models: [{name: m, spec: "python:mod_cap:predict"}]
        verify: {max_cases_per_test: 20}
        """))
    code = main(["verify", "--suite", str(tmp_path / "wide.yaml"), "--config", str(cfg),
                 "--run", str(tmp_path / "run"), "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert ("note: test 'grid' expands to 101 cases; sampling 20 "
            "(verify.max_cases_per_test; --sample N to choose)") in out.err
    summary = json.loads((tmp_path / "run" / "verify" / "wide" / "summary.json").read_text())
    assert summary["sampled"] == {"grid": {"total": 101, "sampled": 20}}
    rows = [json.loads(x) for x in
            (tmp_path / "run" / "verify" / "wide" / "cases.jsonl").read_text().splitlines()]
    assert Counter(r["test"] for r in rows) == {"grid": 20, "tiny": 10}
    assert "just good" in {r["text"] for r in rows}  # the 1-fill template kept


def test_validate_and_verify_follow_one_rule_for_a_huge_test(tmp_path, capsys):
    """Issue 19: validate refused a suite that verify samples (two answers to one suite)."""
    import yaml

    lex = {k: [f"{k.lower()}{i}" for i in range(300)] for k in ("A", "B", "C")}
    data = suite_dict({"name": "huge", "type": "mft", "label": "positive",
                       "template": "{A} {B} {C} good"}, lexicons=lex)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["validate", "--suite", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  huge  mft      General                  20,000  (sampled)\n" in out
    assert ("note: test 'huge' expands to 27,000,000 cases; sampling 20,000 "
            "(verify.max_cases_per_test; --sample N to choose)\n") in out
    assert out.endswith("total: up to 20,000 cases (limit 100,000); ok\n")
