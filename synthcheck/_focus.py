"""The focus stage of a run config: adaptive focus rounds after mining.

The generator backend, the ranked task model and the reference are loaded only when some
candidate's sentences are still missing, each once for the whole stage (the task model is
the one `discover` shares with evaluate and verify). New sentences are calibrated with the
bias the score stage fitted, so they read exactly like the corpus. See
``discovery._focus_stage`` for the stage itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synth.core import RunDir, config_hash
from synthcheck._config import RunConfig


class _LazyBackend:
    """The generator backend, loaded on its first use."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = functools.cache(build)

    def render_chat(self, user: str, system: str | None = None) -> str:
        return str(self._build().render_chat(user, system))

    def generate(self, prompts: Sequence[str], params: Any, seeds: Sequence[int]) -> Any:
        return self._build().generate(prompts, params, seeds)


def focus_models_key(cfg: RunConfig) -> str:
    """Hash of what changes the focus scores: the ranked task model's and the reference's
    hashes (as the score stage computes them)."""
    from discovery import ranked_task_name, reference_hash, task_model_hash

    name = ranked_task_name(cfg.ranking, cfg.task_models)
    tm = next(t for t in cfg.task_models if t.name == name)
    labels = cfg.task.label_space
    return config_hash({"task": task_model_hash(tm, labels=labels, reference=cfg.reference,
                                                 evaluation=cfg.evaluation),
                        "reference": reference_hash(cfg.reference, labels)})


def focus_models(cfg: RunConfig, run_dir: str | Path,
                 task_scorers: Callable[[], Mapping[str, Any]] | None = None) -> Any:
    """The stage's :class:`discovery._focus_stage.FocusModels`, every model lazy.

    Args:
        task_scorers: returns the built task scorers by name (``discover`` passes the ones
            it shares with evaluate and verify); default: build the ranked one alone.
    """
    from discovery import build_task_scorers, ranked_task_name
    from discovery._focus_stage import FocusModels, reference_calibrator
    from synth import generator_backend

    labels = cfg.task.label_space
    name = ranked_task_name(cfg.ranking, cfg.task_models)
    tm = next(t for t in cfg.task_models if t.name == name)

    @functools.cache
    def task_scorer() -> Any:
        if task_scorers is not None:
            return task_scorers()[name]
        return build_task_scorers([tm], labels, reference=cfg.reference,
                                  evaluation=cfg.evaluation)[name]

    @functools.cache
    def reference() -> Any:
        from discovery import FewShotReference

        return FewShotReference.from_config(cfg.reference, labels.list)

    def task(texts: list[str]) -> np.ndarray:
        scorer = task_scorer()
        if str(tm.spec).startswith("fewshot:"):  # calibrated as the score stage did
            cal = reference_calibrator(run_dir, labels, file=f"task-{name}.jsonl")
            raw = np.asarray(scorer.raw_logprobs(texts))
            return np.asarray(cal.predict_proba(raw)) if cal is not None else np.exp(raw)
        rows = scorer.predict_proba(texts)
        return np.array([[row[lab] for lab in labels] for row in rows], dtype=np.float64)

    def ref(texts: list[str]) -> np.ndarray:
        cal = reference_calibrator(run_dir, labels)
        raw = np.asarray(reference().raw_logprobs(texts))
        return np.asarray(cal.predict_proba(raw)) if cal is not None else np.exp(raw)

    return FocusModels(backend=_LazyBackend(lambda: generator_backend(cfg)), task=task,
                       reference=ref, key=focus_models_key(cfg))


def seed_texts(cfg: RunConfig) -> list[str]:
    """The seed corpus documents focus queries are drawn from."""
    from synth import load_seed_corpus

    return [d.text for d in load_seed_corpus(cfg.corpus)]


def focus(cfg: RunConfig, run_dir: str | Path, *, progress: bool = True,
          task_scorers: Callable[[], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """discovery's ``focus_run`` on ``run_dir`` with ``cfg``'s sections (the corpus, scores,
    hard subset and n-grams must have been made with ``cfg``). With ``focus.enabled: false``
    nothing runs and the stage is forgotten in the manifest (the report then ignores an old
    ``focus.jsonl``): returns ``{"skipped": True, "disabled": True}``."""
    from discovery import mine_stage_hash, rank_stage_hash
    from discovery._focus_stage import focus_run
    from synthcheck._pipeline import _score_hash_if_corpus, check_corpus_config

    run = RunDir(run_dir)
    if not cfg.focus.enabled:
        if run.stage_status("focus") is not None:
            run.reset_stage("focus")
        return {"skipped": True, "disabled": True}
    check_corpus_config(cfg, run_dir)
    shash = _score_hash_if_corpus(cfg, run_dir)
    mine_hash = mine_stage_hash(cfg.mining, rank_stage_hash(cfg.ranking, shash)) \
        if shash else None
    return focus_run(run.path, labels=cfg.task.label_space, focus=cfg.focus,
                     ranking=cfg.ranking, mining=cfg.mining, task_models=cfg.task_models,
                     generator=cfg.generator, seed_docs=seed_texts(cfg),
                     models=focus_models(cfg, run.path, task_scorers),
                     config_dump=cfg.model_dump(mode="json"), mine_hash=mine_hash,
                     progress=progress, pool=candidate_pool(cfg, run.path))


def candidate_pool(cfg: RunConfig, run_dir: Path) -> dict[str, str]:
    """Focus candidates from the slice stages that are complete on ``run_dir`` (candidate ->
    kind): the significant occlusion words (highest z first) and the significant semantic
    slices' term groups, ``2 * focus.candidates`` of each at most."""
    from discovery import group_name
    from synth.core import iter_jsonl

    run = RunDir(run_dir)
    pool: dict[str, str] = {}
    for stage, file, kind in [("occlusion", "words.jsonl", "word"),
                              ("semantic", "slices.jsonl", "semantic")]:
        entry = run.stage_status(stage) or {}
        path = run_dir / file
        if entry.get("status") != "complete" or not path.is_file():
            continue
        rows = [r for r in iter_jsonl(path) if r.get("significant")]
        names = [r["word"] if kind == "word" else group_name(r["terms"])
                 for r in rows if kind == "word" or r.get("terms")]
        for name in names[:2 * cfg.focus.candidates]:
            pool.setdefault(name, kind)
    return pool


def focus_lines(run_dir: Path, info: Mapping[str, Any] | None, *, top: int = 10) -> list[str]:
    """The summary's focus block: what the stage did and how long it took (as recorded in the
    manifest when it ran), then one line per confirmed pattern (failure rate with its 95%
    interval vs the base rate, q-value), else the best candidates."""
    from synth.core import iter_jsonl

    if info is not None and info.get("disabled"):
        return ["focus rounds: off (focus.enabled: false)"]
    path = run_dir / "focus.jsonl"
    entry = RunDir(run_dir).stage_status("focus") or {}
    if not path.is_file() or entry.get("status") != "complete":
        return []
    rows = list(iter_jsonl(path))
    confirmed = [r for r in rows if r.get("confirmed")]
    sentences = sum(int(r.get("n", 0)) for r in rows)
    base = rows[0].get("base_rate") if rows else None
    took = f" in {entry['seconds']:.1f}s" if isinstance(entry.get("seconds"), float | int) \
        else ""
    head = (f"focus rounds: {len(rows)} candidates, {sentences} new sentences from "
            f"{entry.get('prompts', '?')} prompts{took}; {len(confirmed)} confirmed failure "
            f"pattern(s)")
    if base is not None:
        head += f" (failure: {focus_rule_text(cfg_focus(run_dir))}; base rate {base:.2f})"
    lines = [head + ":"]
    shown = confirmed[:top] if confirmed else rows[:min(3, top)]
    if not confirmed and rows:
        lines.append("  none confirmed; the strongest candidates:")
    for r in shown:
        rate = r.get("rate")
        rate_s = "n/a" if rate is None else (f"{rate:.2f} [{r['rate_lo']:.2f}, "
                                             f"{r['rate_hi']:.2f}]")
        lines.append(f"  {str(r['ngram'])[:27]:<28} [{r.get('source', 'ngram')}] fails "
                     f"{r['failures']}/{r['n']} = {rate_s}"
                     f" vs {r['base_rate']:.2f}  q={r['q_value']:.2g}")
    return lines


def cfg_focus(run_dir: Path) -> dict[str, Any]:
    """The focus section recorded in ``focus.jsonl.meta.json`` (empty when missing)."""
    import json

    try:
        meta = json.loads((run_dir / "focus.jsonl.meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta.get("focus") or {}


def focus_rule_text(focus: Mapping[str, Any]) -> str:
    """The focus failure rule in words."""
    rule = focus.get("failure", "disagreement")
    if rule == "confident":
        return f"reference's p(task model wrong) >= {focus.get('confidence', 0.6):g}"
    return "top labels differ" if rule == "disagreement" else "hard-subset rule"
