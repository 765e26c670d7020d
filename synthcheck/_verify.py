"""Running a suite against task models: the one set-up that `verify` and `discover` share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formalize import VERIFY_CASES

if TYPE_CHECKING:
    from formalize import Suite, TestSample, VerifyConfig, VerifyResult


def check_verify_size(suite: Suite, verify_cfg: VerifyConfig) -> tuple[int, dict[str, TestSample]]:
    """What verify would expand under ``verify_cfg``: the case count (an upper bound) and
    the tests it samples under ``max_cases_per_test`` (counted, nothing expanded).

    Raises:
        TemplateError: still over the case limit after that sampling.
    """
    from formalize import sampling_plan

    v = verify_cfg
    plan = sampling_plan(suite, v.sample, v.max_cases_per_test, v.max_cases)
    counts = {t.name: plan[t.name].sampled if t.name in plan else t.count(v.sample)
              for t in suite.tests}
    return suite.check_limit(v.sample, v.max_cases, counts=counts), plan


def name_pair_fields(scorers: Mapping[str, Any], text_fields: Sequence[str]) -> None:
    """Tell task models that show a sentence pair in a prompt (``fewshot:``, through their
    ``pair_fields``) the suite's two ``text_fields``, so a pair reads ``Premise: ...`` /
    ``Hypothesis: ...``; nothing for a one-text suite or other models."""
    if len(text_fields) != 2:
        return
    for scorer in scorers.values():
        if hasattr(scorer, "pair_fields"):
            scorer.pair_fields = tuple(text_fields)


def run_verify(suite: Suite, scorers: Mapping[str, Any], verify_cfg: VerifyConfig,
               out_dir: str | Path, chash: str,
               recall: Mapping[str, Mapping[str, float]] | None, *,
               progress: bool = True) -> tuple[VerifyResult, list[Path]]:
    """Run ``suite`` against ``scorers`` as ``verify_cfg`` (a run config's ``verify:``
    section) says, and write ``cases.jsonl``, the tables and ``summary.json`` (recording
    ``chash``) into ``out_dir``. Nothing is written under a final name until every case is
    scored (a progress bar of cases on a terminal, unless ``progress`` is off). Returns the
    result and the paths written besides ``cases.jsonl``.

    Raises:
        TemplateError: the expansion is over the case limit.
        DataError: a model's labels differ from the suite's, or it returns a bad row.
    """
    from formalize import TemplateRunner

    v = verify_cfg
    name_pair_fields(scorers, suite.spec.text_fields)
    runner = TemplateRunner(sample=v.sample, seed=v.seed, batch_size=v.batch_size,
                            chunk_size=v.chunk_size, max_cases=v.max_cases,
                            max_cases_per_test=v.max_cases_per_test,
                            max_examples=v.max_examples, keep_cases=False,
                            heldout_recall=recall, progress=progress)
    out = Path(out_dir)
    result = runner.run(suite, scorers, cases_path=out / VERIFY_CASES.name)
    # Models whose probabilities are squashed decision scores say so in summary.json.
    uncalibrated = {name: s.probability for name, s in scorers.items()
                    if getattr(s, "uncalibrated", False)}
    if uncalibrated:
        result.meta["uncalibrated"] = uncalibrated
    return result, result.write(out, chash)
