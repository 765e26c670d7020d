"""The report's sections about the discovery run: provenance, overview, how far to trust the
hard subset, divergence, the task-model/reference scatter, n-grams, the hard subset and the
review decisions."""

from __future__ import annotations

import math
from typing import Any

from discovery import METRICS, SORT_KEYS, describe_rule
from synth.core import git_commit, package_version
from synthcheck.report import _figures as figs
from synthcheck.report._blocks import Figure, Heading, Para, ReportSection, Table, num
from synthcheck.report._data import RunData


def provenance(run: RunData) -> ReportSection:
    """Where the run came from: the manifest's hashes and stages, else each suite's."""
    m = run.manifest
    rows: list[tuple[str, Any]] = [("run", run.name)]
    if run.has_manifest:
        rows += [("config hash", m.get("config_hash", "unknown")),
                 ("synthcheck version", m.get("version", "unknown")),
                 ("git commit", m.get("git_commit", "unknown")),
                 ("created", m.get("created", "unknown"))]
        rows += [(f"stage {name}", (info or {}).get("status", "?"))
                 for name, info in (m.get("stages") or {}).items()]
    else:
        rows.append(("manifest", "none (a run directory made by `verify` alone)"))
    for v in run.verify_outputs():
        s = v.summary
        rows.append((f"suite {v.suite}", f"config hash {s.get('config_hash', '?')}, "
                                         f"synthcheck {s.get('version', '?')}, "
                                         f"git {s.get('git_commit', '?')}"))
    rows.append(("report written by", f"synthcheck {package_version()} ({git_commit()})"))
    return ReportSection("provenance", "Provenance", [Table.of(["field", "value"], rows)])


def overview(run: RunData) -> ReportSection:
    """The key numbers of the run, and the held-out evaluation when there is one."""
    import numpy as np

    sec = ReportSection("overview", "Overview")
    rows: list[tuple[str, Any]] = []
    size = run.corpus_size()
    if size is not None:
        rows.append(("corpus sentences", size))
    scores = run.scores()
    if scores is not None and len(scores.ids):
        agree = float(np.mean(np.nanargmax(scores.task, 1) == np.nanargmax(scores.reference, 1)))
        rows.append(("scored sentences", f"{len(scores.ids):,} (task model "
                                         f"{scores.task_name!r} and the reference)"))
        rows.append(("top-label agreement, task model vs reference", f"{100 * agree:.1f}%"))
    hard = run.hard()
    if hard is not None:
        div = [float(r["divergence"]) for r in hard if "divergence" in r]
        flips = sum(1 for r in hard if r.get("task_label") != r.get("reference_label"))
        rows.append(("hard subset", f"{len(hard):,} sentences"
                     + (f", divergence >= {min(div):.3f}" if div else "")
                     + f"; labels differ on {flips:,}"))
    ngrams = run.ngrams()
    if ngrams is not None:
        rows.append(("n-grams mined", len(ngrams)))
        if ngrams:
            rows.append(("top n-grams", ", ".join(str(r.get("ngram")) for r in ngrams[:5])))
    for v in run.verify_outputs():
        n: dict[str, int] = {}
        fails: dict[str, int] = {}
        for r in v.summary.get("summary") or []:
            if r.get("level") == "test" and r.get("n"):
                n[r["model"]] = n.get(r["model"], 0) + int(r["n"])
                fails[r["model"]] = fails.get(r["model"], 0) + int(r.get("failures") or 0)
        for model, total in n.items():
            rows.append((f"suite {v.suite}: fail rate of {model}",
                         f"{100 * fails[model] / total:.1f}% ({fails[model]:,}/{total:,} "
                         f"cases failed)"))
    reports = run.evaluation()
    if not rows and not reports:
        sec.skipped = "no corpus, scores, hard subset, n-grams, evaluation or verify outputs"
        return sec
    if rows:
        sec.blocks.append(Table.of(["quantity", "value"], rows))
    if reports:
        erows = [[name, num(rep.get("accuracy")), num(rep.get("macro_f1")), rep.get("n")]
                 for name, rep in reports.items() if isinstance(rep, dict)]
        sec.blocks += [Heading("Held-out evaluation"),
                       Table.of(["model", "accuracy", "macro-F1", "n"], erows, shade=(1, 2))]
    return sec


def trust(run: RunData) -> ReportSection:
    """How far to trust the hard subset: the precision of the hard-subset rule measured on
    labeled held-out data (``eval.json``), per ranking metric, the accuracies behind it and
    the warnings."""
    sec = ReportSection("trust", "How far to trust the hard subset")
    data = run.eval_json()
    if data is None:
        sec.skipped = "no eval.json (run `synthcheck evaluate --run DIR`, or `discover`)"
        return sec
    p = data.get("hard_subset_precision")
    if not isinstance(p, dict):
        sec.skipped = ("eval.json holds no hard-subset precision: the reference was not "
                       "evaluated (evaluation.include_reference) or the run predates it; "
                       "rerun `discover`")
        return sec
    from discovery import trust_decision
    from synthcheck._summary import run_audit

    decision = trust_decision(data, run_audit(run.path))
    verdict = {"trusted": "Findings are trusted", "untrusted": "Findings are NOT trusted",
               "unmeasured": "Findings are unmeasured"}[decision["decision"]]
    sec.blocks.append(Para(f"{verdict}: the decision rests on the hard subset's precision "
                           f"against the task model's own error rate, not on accuracy "
                           f"alone. " + " ".join(f"{r[:1].upper()}{r[1:]}."
                                                 for r in decision["reasons"])
                           + f" Next: {decision['next']}."))
    ranked = data.get("ranked_task_model", "the task model")
    rule = data.get("hard_subset_rule") or {"metric": p.get("metric", "?")}
    if data.get("warnings"):
        sec.blocks.append(Para("The warnings at the top of the report come from these "
                               "numbers.", note=True))
    reports = data.get("reports") or {}
    task_acc = num((reports.get(ranked) or {}).get("accuracy"))
    if p.get("n"):
        base = ("" if math.isnan(task_acc) else
                f" For comparison, {ranked!r} is wrong on {1 - task_acc:.1%} of all held-out "
                f"examples.")
        text = (f"Hard-subset precision ({describe_rule(rule)}): {p['estimate']:.2f}, 95% "
                f"Wilson interval [{p['low']:.2f}, {p['high']:.2f}], on {p['n']} held-out "
                f"examples. The rule was applied to labeled held-out examples scored by "
                f"{ranked!r} and the reference; of those it selects, this share is a real "
                f"error of {ranked!r}, and on the rest {ranked!r} is right (the divergence "
                f"is the reference's). Read the hard subset and its n-grams with that in "
                f"mind.{base}")
    else:
        text = (f"The hard-subset rule ({describe_rule(rule)}) selects no held-out example: "
                f"its precision is unknown.")
    sec.blocks.append(Para(text))
    sec.blocks.append(Para(_audit_text(run)))
    by = data.get("hard_subset_precision_by_metric") or {}
    rows = [[m + (" (configured)" if m == p.get("metric") else ""), q.get("estimate"),
             q.get("low"), q.get("high"), q.get("n")]
            for m, q in sorted(by.items(), key=lambda kv: METRICS.index(kv[0])
                               if kv[0] in METRICS else len(METRICS))]
    if rows:
        sec.blocks += [Heading("Precision by ranking metric (same cut-off)"),
                       Table.of(["metric", "precision", "95% low", "95% high", "n"], rows,
                                shade=(1,))]
    acc = [(f"task model {ranked}", task_acc),
           ("reference", num((reports.get("reference") or {}).get("accuracy"))),
           ("majority-class baseline", num(data.get("majority_baseline_accuracy")))]
    sec.blocks += [Heading("Held-out accuracy"),
                   Table.of(["model", "accuracy"], acc, shade=(1,))]
    return sec


def _audit_text(run: RunData) -> str:
    """The blind audit's figure beside the held-out one, each saying what it was measured
    on; without an audit, what the held-out figure cannot see."""
    from discovery import NO_AUDIT_NOTE, audited_precision

    info = audited_precision(run.path)
    if info is None:
        return "Not measured on this corpus: " + NO_AUDIT_NOTE + "."
    h, c = info["hard"], info["control"]
    if not h["n"]:
        return "The blind audit has no labelled hard-subset sentence yet."
    text = (f"Hard-subset precision on this corpus (blind audit): {h['estimate']:.2f}, 95% "
            f"Wilson interval [{h['low']:.2f}, {h['high']:.2f}], on {h['n']} of the hard "
            f"subset's sentences, measured on {info['measured_on']}: {h['count']} are a real "
            f"task-model error, {h['no_label']} carry no label that applies.")
    if c["n"]:
        text += (f" Of {c['n']} random other corpus sentences, {c['estimate']:.2f} "
                 f"[{c['low']:.2f}, {c['high']:.2f}] carry the task's signal.")
    return text


def _metric(run: RunData) -> str:
    return str(run.section("ranking").get("metric") or "abs_top")


def divergence(run: RunData) -> ReportSection:
    """The histogram of per-sentence divergence with the hard subset's cut-off."""
    sec = ReportSection("divergence", "Divergence")
    scores, hard = run.scores(), run.hard()
    metric = _metric(run)
    hard_div = [float(r["divergence"]) for r in hard or [] if "divergence" in r]
    threshold = min(hard_div) if hard_div else None
    if scores is not None and len(scores.ids):
        from discovery import divergence as divergence_of

        values = divergence_of(scores.task, scores.reference, metric)
        png = figs.divergence_histogram(values, threshold, metric=metric)
        cap = (f"Divergence ({metric}) of {len(values):,} sentences"
               + (f"; the hard subset ({len(hard_div):,}) lies right of {threshold:.3f}."
                  if threshold is not None else "."))
    elif hard_div:
        png = figs.divergence_histogram(hard_div, None, metric=metric, hard_only=True)
        cap = (f"Divergence ({metric}) of the {len(hard_div):,} hard-subset sentences only (no "
               f"scores in scores/, so the rest of the corpus is not shown).")
    else:
        sec.skipped = "no scores (scores/task-*.jsonl, scores/reference.jsonl) and no hard.jsonl"
        return sec
    sec.blocks.append(Figure("fig-divergence", png, "divergence histogram", cap))
    return sec


def scatter(run: RunData) -> ReportSection:
    """Task-model against reference probability, the hard subset highlighted."""
    import numpy as np

    sec = ReportSection("scatter", "Task model vs reference")
    scores = run.scores()
    if scores is None or not len(scores.ids) or not scores.labels:
        sec.skipped = "no task-model and reference scores in scores/ (or no corpus to align them)"
        return sec
    hard_ids = {str(r["id"]) for r in run.hard() or []}
    mask = np.array([i in hard_ids for i in scores.ids], dtype=bool)
    if len(scores.labels) == 2:
        col, label = len(scores.labels) - 1, scores.labels[-1]
        x, y = scores.task[:, col], scores.reference[:, col]
    else:  # each sentence's task-model top label
        top = np.nanargmax(scores.task, axis=1)
        rows = np.arange(len(top))
        x, y, label = scores.task[rows, top], scores.reference[rows, top], "task's top label"
    png = figs.probability_scatter(x, y, mask, label=label, task_name=scores.task_name)
    agree = float(np.mean(np.nanargmax(scores.task, 1) == np.nanargmax(scores.reference, 1)))
    shown = ("hard subset in red" if mask.any() else
             "no hard subset highlighted (no hard.jsonl)" if run.hard() is None else
             "no hard-subset sentence among them")
    cap = (f"p({label}) from task model {scores.task_name!r} against the reference, "
           f"{len(scores.ids):,} sentences; {shown}. Top labels agree on {100 * agree:.1f}%.")
    sec.blocks.append(Figure("fig-scatter", png, "task vs reference probability scatter", cap))
    return sec


def ngrams(run: RunData, top: int) -> ReportSection:
    """The top n-grams by the mining statistic: a bar chart and a table."""
    sec = ReportSection("ngrams", "N-gram enrichment")
    rows = run.ngrams()
    if rows is None:
        sec.skipped = "no ngrams.jsonl (run `synthcheck mine`)"
        return sec
    if not rows:
        sec.skipped = "ngrams.jsonl is empty: no n-gram reached mining.min_support"
        return sec
    stat = str(run.section("mining").get("statistic") or "z")
    column, smaller = SORT_KEYS.get(stat, ("z", False))
    if column not in rows[0]:
        column, smaller, stat = "z", False, "z"
    head = rows[:top]
    vals = [float(r.get(column, math.nan)) for r in head]
    if smaller:  # q-values: plot -log10 q so that longer bars are stronger
        vals = [-math.log10(max(v, 1e-300)) for v in vals]
    label = f"-log10 {column}" if smaller else column
    png = figs.ngram_enrichment([str(r["ngram"]) for r in head], vals, statistic=label,
                                counts=[int(r.get("hard_count", 0)) for r in head])
    cap = f"Top {len(head)} of {len(rows):,} n-grams by {stat}."
    cols = list(dict.fromkeys(c for c in ("ngram", "hard_count", "corpus_count", column,
                                          "q_value", "disagreement_rate", "mean_divergence")
                              if c in rows[0]))
    sec.blocks += [Figure("fig-ngrams", png, "n-gram enrichment chart", cap),
                   Table.of(cols, [[r.get(c) for c in cols] for r in head])]
    return sec


def hard_subset(run: RunData, top: int) -> ReportSection:
    """The top of the hard subset, with both models' labels."""
    sec = ReportSection("hard", "Hard subset")
    hard = run.hard()
    if hard is None:
        sec.skipped = "no hard.jsonl (run `synthcheck rank`)"
        return sec
    cols = ["rank", "id", "text", "divergence", "task_label", "reference_label"]
    rows = [[r.get(c) for c in cols] for r in hard[:top]]
    sec.blocks.append(Para(f"{len(hard):,} sentences, each a failure by the run's one rule; "
                           f"the first {len(rows)} by rank."))
    judged = _judged_text(run)
    if judged:
        sec.blocks.append(Para(judged))
    sec.blocks.append(Table.of(cols, rows))
    return sec


def _judged_text(run: RunData) -> str:
    """What the rank stage recorded about the judging rule (``hard.jsonl.meta.json``): how
    many sentences abstained, by reason, the rule and the run's base rate (empty when it
    recorded none)."""
    import json

    from discovery import abstain_warning, format_abstained

    try:
        meta = json.loads((run.path / "hard.jsonl.meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    info = meta.get("abstained") if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return ""
    text = (f"Judged: {meta.get('judged', '?')} sentences, {format_abstained(info)}; rule: "
            f"{info.get('rule', '?')}; {meta.get('failures', '?')} fail, base rate "
            f"{float(meta.get('base_rate', 0.0)):.2f}, every stage's.")
    warning = abstain_warning(info)
    return text + (f" Warning: {warning}." if warning else "")


def review(run: RunData) -> ReportSection:
    """The annotators' decisions: counts per tag and the hypotheses."""
    from formalize import REVIEW_TAGS, ReviewLog

    sec = ReportSection("review", "Review decisions")
    log = ReviewLog(run.path)
    if not log.path.is_file():
        sec.skipped = "no review/decisions.jsonl (tag sentences in notebooks/review.ipynb)"
        return sec
    decisions = log.load()
    counts = [[t, sum(1 for d in decisions.values() if d["tag"] == t)] for t in REVIEW_TAGS]
    hyps = [[h, len(ids), ", ".join(ids[:5])] for h, ids in log.hypotheses().items()]
    sec.blocks += [Para(w, note=True) for w in log.warnings]
    sec.blocks.append(Table.of(["tag", "sentences"], counts))
    if hyps:
        sec.blocks.append(Table.of(["hypothesis", "sentences", "ids"], hyps))
    return sec
