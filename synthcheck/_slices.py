"""The slice stages of a run config: ``semantic``, ``metadata`` and ``occlusion`` after
mining, ``findings`` after the focus rounds (see ``discovery._slice_stages``).

Each takes ``cfg.slices`` and the sections that say which task model is ranked; the
occlusion stage scores new text with the models `focus` uses (lazy: loaded only when the
stage is not current; the reference calibrated with the score stage's recorded bias). A
stage turned off (``slices.<stage>.enabled: false``) is forgotten in the manifest, so
``findings`` and the report ignore its old file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from synth.core import RunDir
from synthcheck._config import RunConfig

SLICE_STAGES = ("semantic", "metadata", "occlusion")


def _common(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    from synthcheck._pipeline import _score_hash_if_corpus, check_corpus_config

    check_corpus_config(cfg, run_dir)
    return dict(labels=cfg.task.label_space, slices=cfg.slices, ranking=cfg.ranking,
                task_models=cfg.task_models, score_hash=_score_hash_if_corpus(cfg, run_dir),
                config_dump=cfg.model_dump(mode="json"))


def _off(run_dir: str | Path, stage: str) -> dict[str, Any]:
    run = RunDir(run_dir)
    if run.stage_status(stage) is not None:
        run.reset_stage(stage)
    return {"skipped": True, "disabled": True}


def semantic(cfg: RunConfig, run_dir: str | Path, *, progress: bool = True) -> dict[str, Any]:
    """discovery's ``semantic_run`` with ``cfg``'s sections (off: forgotten, nothing runs)."""
    from discovery import semantic_run

    if not cfg.slices.semantic.enabled:
        return _off(run_dir, "semantic")
    return semantic_run(run_dir, progress=progress, **_common(cfg, run_dir))


def metadata(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """discovery's ``metadata_run`` with ``cfg``'s sections (off: forgotten)."""
    from discovery import metadata_run

    if not cfg.slices.metadata.enabled:
        return _off(run_dir, "metadata")
    return metadata_run(run_dir, **_common(cfg, run_dir))


def occlusion(cfg: RunConfig, run_dir: str | Path, *,
              task_scorers: Callable[[], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """discovery's ``occlusion_run`` with ``cfg``'s sections and the focus stage's lazy
    models (off: forgotten)."""
    from discovery import occlusion_run
    from synthcheck._focus import focus_models

    if not cfg.slices.occlusion.enabled:
        return _off(run_dir, "occlusion")
    common = _common(cfg, run_dir)
    models = focus_models(cfg, Path(run_dir), task_scorers)
    return occlusion_run(run_dir, task_fn=models.task, reference_fn=models.reference,
                         models_key=models.key, **common)


def findings(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """discovery's ``findings_run`` with ``cfg``'s sections: every complete discovery
    stage's rows unified into ``findings.jsonl``."""
    from discovery import findings_run
    from synthcheck._focus import focus_rule_text

    rule = focus_rule_text(cfg.focus.model_dump(mode="json")) if cfg.focus.enabled else ""
    return findings_run(run_dir, focus_rule=rule, **_common(cfg, run_dir))


def findings_lines(run_dir: Path, *, top: int = 10) -> list[str]:
    """The summary's findings block: what each slice stage found and took, then the top
    ``top`` findings of ``findings.jsonl`` (one line each)."""
    from synth.core import iter_jsonl

    run = RunDir(run_dir)
    lines = []
    parts = []
    for stage, what in [("semantic", "semantic slices"), ("metadata", "metadata slices"),
                        ("occlusion", "occlusion words")]:
        e = run.stage_status(stage) or {}
        if e.get("status") == "complete":
            parts.append(f"{e.get('significant', 0)} significant {what} "
                         f"({float(e.get('seconds', 0.0)):.1f}s)")
    path = run_dir / "findings.jsonl"
    entry = run.stage_status("findings") or {}
    if not path.is_file() or entry.get("status") != "complete":
        return lines
    rows = list(iter_jsonl(path))
    head = (f"findings: {len(rows)} ({entry.get('confirmed', 0)} confirmed on new sentences); "
            f"corpus failure: {entry.get('rule', '?')}, base rate "
            f"{float(entry.get('base_rate', 0.0)):.2f}")
    lines.append(head + (f"; {', '.join(parts)}" if parts else "") + ":")
    for r in rows[:top]:
        lines.append(f"  {r['id']} {r['kind']:<8} {str(r['name'])[:34]:<35} "
                     f"{r['failures']}/{r['n']} = {r['rate']:.2f} [{r['low']:.2f}, "
                     f"{r['high']:.2f}] vs {r['base_rate']:.2f}"
                     f"{'  confirmed' if r['confirmed'] else ''}")
    return lines
