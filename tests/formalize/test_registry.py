"""Registered test types and formats: a new one is its module plus one registry entry."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

from formalize import (
    FORMATS,
    TEST_TYPES,
    Case,
    CompiledTest,
    Exported,
    Format,
    Suite,
    TemplateRunner,
    TestSpecBase,
    check_spec_labels,
    export_native_cases,
    load_suite,
    predict,
)
from synth.core import ConfigError, TemplateError, write_text_atomic
from synthcheck.cli import main
from tests.formalize.conftest import KeywordScorer, suite_dict


# -- a tiny test type: every text must NOT be predicted as `label` ---------------------
class AvoidTest(TestSpecBase):
    """Texts that must not get ``label``."""

    type: Literal["avoid"]
    texts: list[str]
    label: str


class Avoid(CompiledTest):
    """Pass when the top prediction is anything but the spec's label."""

    type_name = "avoid"
    spec_model = AvoidTest
    gold = False

    @classmethod
    def compile(cls, index: int, spec: Any, ctx: Any) -> Avoid:
        ctx.check_label(spec.label, index, "label", spec.name)
        return cls(spec, lexicons=ctx.lexicons)

    @classmethod
    def label_uses(cls, spec: Any) -> Iterator[tuple[tuple[int | str, ...], str]]:
        yield ("label",), spec.label

    def count(self, sample: int | None = None) -> int:
        return len(self.spec.texts)

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        for i, text in enumerate(self.spec.texts):
            yield Case(**self.base(), case_id=f"{self.slug}:{i}", text=text,
                       label=self.spec.label)

    @classmethod
    def judge(cls, spec: Any, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        pred = predict(probs, labels)
        return pred, pred != spec.label, None


@pytest.fixture
def avoid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the `avoid` type for one test (the registry is restored afterwards)."""
    monkeypatch.setattr(TEST_TYPES, "_entries", dict(TEST_TYPES._entries))
    TEST_TYPES.register("avoid", f"{__name__}:Avoid")


def avoid_suite() -> dict[str, Any]:
    return suite_dict({"name": "no praise", "capability": "Restraint", "type": "avoid",
                       "texts": ["a good film", "a dull film", "great fun", "not good"],
                       "label": "positive"},
                      {"name": "praise", "type": "mft", "texts": ["good"], "label": "positive"})


def test_a_registered_type_runs_through_a_suite(avoid: None, tmp_path: Path) -> None:
    suite = Suite.from_dict(avoid_suite())
    assert [type(t).__name__ for t in suite.tests] == ["Avoid", "MFT"]
    assert suite.counts() == {"no praise": 4, "praise": 1}
    result = TemplateRunner().run(suite, [KeywordScorer()], cases_path=tmp_path / "c.jsonl")
    # KeywordScorer says positive for "good"/"great" without "not": 2 of 4 texts fail.
    row = result.summary.set_index(["level", "key"]).loc[("test", "no praise")]
    assert (row.n, row.failures) == (4, 2)
    cap = result.summary.set_index(["level", "key"]).loc[("capability", "Restraint")]
    assert (cap.n, cap.failures) == (4, 2)
    # A non-gold type is not counted per gold label: only the MFT case is.
    assert list(result.summary[result.summary.level == "label"].n) == [1]
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [(r["type"], r["passed"]) for r in rows[:4]] == [
        ("avoid", False), ("avoid", True), ("avoid", False), ("avoid", True)]
    assert "no praise" in result.format_table() and "avoid" in result.format_table()
    assert export_native_cases(suite, tmp_path / "n.jsonl") == 5


def test_a_registered_types_labels_are_checked(avoid: None) -> None:
    bad = avoid_suite()
    bad["tests"][0]["label"] = "positiv"
    with pytest.raises(TemplateError, match=r"label 'positiv' is not one of the suite's labels"
                       r".*test 'no praise', label"):
        Suite.from_dict(bad)
    spec = Suite.from_dict(avoid_suite()).spec
    with pytest.raises(TemplateError, match=r"label 'positive' is not one of the task's labels "
                       r"\(neg, pos\) from the task"):
        check_spec_labels(spec, ["neg", "pos"])


def test_unknown_type_suggests_registered_ones(avoid: None) -> None:
    data = avoid_suite()
    data["tests"][0]["type"] = "avoud"
    with pytest.raises(TemplateError, match=r"unknown test type 'avoud'.*did you mean 'avoid'"):
        Suite.from_dict(data)


def test_without_the_entry_the_type_is_unknown() -> None:
    with pytest.raises(TemplateError, match=r"unknown test type 'avoid'"):
        Suite.from_dict(avoid_suite())
    with pytest.raises(ConfigError, match=r"unknown test type 'mtf'.*did you mean 'mft'"):
        TEST_TYPES.get("mtf")


# -- formats ------------------------------------------------------------------------------
class Lines(Format):
    """Every case's text, one per line."""

    name = "lines"
    description = "case texts, one per line"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        texts = [c.text for c in suite.cases(sample, seed, max_cases)]
        write_text_atomic(out, "".join(t + "\n" for t in texts))
        return Exported(f"wrote {len(texts)} lines to {out}", cases=len(texts))


def test_a_registered_format_is_a_cli_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(json.dumps(suite_dict({"name": "t", "type": "mft", "label": "positive",
                                            "texts": ["good", "great"]})))
    with pytest.raises(SystemExit):
        main(["export", "--suite", str(suite), "--format", "lines", "--out", str(tmp_path / "o")])
    assert "invalid choice: 'lines'" in capsys.readouterr().err
    monkeypatch.setattr(FORMATS, "_entries", dict(FORMATS._entries))
    FORMATS.register("lines", f"{__name__}:Lines")
    assert main(["export", "--suite", str(suite), "--format", "lines",
                 "--out", str(tmp_path / "o.txt")]) == 0
    assert "wrote 2 lines" in capsys.readouterr().out
    assert (tmp_path / "o.txt").read_text() == "good\ngreat\n"
    with pytest.raises(SystemExit):
        main(["import", "--format", "lines", "--in", str(tmp_path / "o.txt"),
              "--out", str(tmp_path / "back.yaml")])
    assert "invalid choice: 'lines'" in capsys.readouterr().err  # export only


def test_unknown_format_suggests() -> None:
    with pytest.raises(ConfigError, match=r"unknown format 'hatechek'.*did you mean 'hatecheck'"):
        FORMATS.get("hatechek")


def test_suite_yaml_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = Path(__file__).resolve().parents[2] / "configs" / "suites" / "sentiment.yaml"
    out = tmp_path / "sentiment.yaml"
    assert main(["export", "--suite", str(src), "--format", "suite-yaml", "--out", str(out)]) == 0
    back = tmp_path / "back.yaml"
    assert main(["import", "--format", "suite-yaml", "--in", str(out), "--name", "sentiment",
                 "--out", str(back)]) == 0
    orig, again = load_suite(src), load_suite(back)
    assert [c.to_record() for c in orig.cases(sample=3)] == \
        [c.to_record() for c in again.cases(sample=3)]
    capsys.readouterr()
