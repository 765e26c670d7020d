"""The report's findings block: the failure patterns that focus rounds confirmed, first.

Each confirmed pattern shows its failure rate on new sentences against the base corpus's,
with a 95% Wilson interval and the Benjamini-Hochberg q-value, and a few failing sentences
with both models' probabilities. Without focus rounds (``focus.enabled: false``, or a run
made before them) the block falls back to the top mined n-grams, and says that those rest
on hard-subset counts alone.
"""

from __future__ import annotations

from typing import Any

from synth.core import RunDir, iter_jsonl
from synthcheck._summary import also_text, labelled_line
from synthcheck.report._blocks import (
    Heading,
    Para,
    ReportSection,
    Table,
    WarningBox,
    cut_note,
)
from synthcheck.report._data import RunData


def unified(run: RunData, *, top: int = 15, examples: int = 2) -> ReportSection:
    """``findings.jsonl``: every kind of finding (n-grams, focus rounds, semantic and
    metadata slices, occlusion words, phrases and groups) in one ranked table, then the
    top findings' example sentences."""
    from discovery import FINDINGS, kind_words

    sec = ReportSection("all-findings", "Findings: every kind, ranked")
    words = kind_words()
    path = FINDINGS.path(run.path)
    entry = ((run.manifest.get("stages") or {}).get("findings") or {}) \
        if run.has_manifest else {}
    if not path.is_file() or entry.get("status") != "complete":
        sec.skipped = "no findings.jsonl (run `synthcheck slices`, or `discover`)"
        return sec
    rows = list(iter_jsonl(path))
    if not rows:
        sec.skipped = "findings.jsonl is empty: no stage found a slice above the base rate"
        return sec
    kinds = sorted({r["kind"] for r in rows})
    why = distrust(run)
    if why:
        sec.blocks.append(Para(
            f"None is confirmed: {'; and '.join(why)}. A focus row that passes its test on "
            f"new sentences is marked 'unconfirmed (passes)'.", note=True))
    sec.blocks.append(Para(
        f"{len(rows)} findings of {len(kinds)} kind(s) ({', '.join(kinds)}), ranked: "
        f"confirmed on new sentences first, then the rows whose failure rate is above "
        f"their base rate, each group by the q-value of the test that found the row, then "
        f"by score = the failure rate's 95% low bound minus the base rate. A corpus "
        f"sentence fails when the {entry.get('rule', 'rule')} (base rate "
        f"{float(entry.get('base_rate', 0.0)):.2f}); focus rows count new sentences under "
        f"the focus rule, or, confirmed by invariance, the new sentences whose top label "
        f"changes when the candidate is deleted (base rate: other words deleted); a "
        f"metadata slice confirmed by replication counts the focus rounds' new sentences "
        f"with its property (base rate: what they would fail at were it unrelated to "
        f"failure within their candidates)"
        + ("; punctuation invariance rows count corpus sentences, abstained ones too, whose "
           "top label changes when only their punctuation changes (base rate: one other word "
           "deleted)" if "perturbation" in kinds else "") + "."))
    lab = labelled_line(RunDir(run.path)) if run.has_manifest else ""
    if lab:
        sec.blocks.append(Para(lab[0].upper() + lab[1:] + ". A labelled row fails when the "
                               "task model's top label is not its gold label."))
    sec.blocks.append(Table.of(
        ["id", "data", "kind", "name", "failures", "n", "rate [95% CI]", "base rate",
         "score", "confirmed", "reason"],
        [[r["id"], " + ".join(r.get("data_all") or [r.get("data", "corpus")]),
          words.get(r["kind"], r["kind"]), r["name"],
          r["failures"], r["n"], f"{r['rate']:.2f} [{r['low']:.2f}, {r['high']:.2f}]",
          r["base_rate"], r["score"], ("unconfirmed (passes)" if why else "yes")
          if r["confirmed"] else "supported" if r.get("status") == "supported" else "no",
          r["reason"] + also_text(r)]
         for r in rows[:top]]))
    sec.blocks += cut_note(len(rows), top, "findings")
    texts = run.corpus_texts()
    for r in rows[:min(5, top)]:
        if r.get("data") == "labelled" or r.get("confirmed_by") == "replication":
            shown = [str(t) for t in r.get("examples") or []][:examples]  # not corpus ones
            what = "labelled rows the task model gets wrong" if r.get("data") == "labelled" \
                else "failing new sentences (focus rounds)"
        else:
            shown = [texts[i] for i in r.get("example_ids") or [] if i in texts][:examples]
            what = "failing corpus sentences"
        if shown:
            sec.blocks.append(Heading(f"{r['id']} {r['name']}: {what}"))
            sec.blocks.append(Table.of(["sentence"], [[t] for t in shown]))
    return sec


def focus_rows(run: RunData) -> list[dict[str, Any]] | None:
    """``focus.jsonl``'s rows (ranked, confirmed first), or None when the run has none or
    its manifest does not record a complete focus stage (an old file of a run whose focus
    rounds were since turned off)."""
    from discovery import FOCUS

    path = FOCUS.path(run.path)
    if not path.is_file():
        return None
    if run.has_manifest:
        entry = (run.manifest.get("stages") or {}).get("focus") or {}
        if entry.get("status") != "complete":
            return None
    return list(iter_jsonl(path))


def _probs(p: Any) -> str:
    if not isinstance(p, dict):
        return ""
    return " ".join(f"{k}={float(v):.2f}" for k, v in p.items())


def _rate(r: dict[str, Any]) -> str:
    if r.get("rate") is None:
        return "no sentences"
    return f"{r['rate']:.2f} [{r['rate_lo']:.2f}, {r['rate_hi']:.2f}]"


def distrust(run: RunData) -> list[str]:
    """Why the run's findings cannot be confirmed (``eval.json`` and the run's blind audit,
    if any; see :func:`discovery.reference_distrust`)."""
    from discovery import reference_distrust
    from synthcheck._summary import run_audit

    return reference_distrust(run.eval_json(), run_audit(run.path))


def warnings(run: RunData) -> ReportSection:
    """The run's warnings, first in the report: the held-out reliability warnings of
    ``eval.json`` and, when the reference cannot be trusted, that no finding is confirmed
    and what to do."""
    from discovery import UNTRUSTED_FIX

    sec = ReportSection("warnings", "Warnings")
    data = run.eval_json() or {}
    sec.blocks += [WarningBox(str(w)) for w in data.get("warnings") or []]
    why = distrust(run)
    if why:
        sec.blocks.append(WarningBox(f"no finding in this report is confirmed, since "
                                     f"{'; and '.join(why)}. What to do: {UNTRUSTED_FIX}"))
    if not sec.blocks:
        sec.skipped = "none"
    return sec


def findings(run: RunData, *, top: int = 10, examples: int = 3) -> ReportSection:
    """The findings block: every kind ranked (``findings.jsonl``, when the run has one),
    then the focus rounds' confirmed patterns (or the top mined n-grams)."""
    focus = _focus_findings(run, top=top, examples=examples)
    every = unified(run)
    if every.skipped:
        return focus
    every.key = "findings"
    if focus.title.startswith("Findings: confirmed"):
        title = "Focus rounds: confirmed failure patterns"
    elif focus.title.startswith("Findings: top mined"):  # no focus rounds in this run
        title = focus.title.removeprefix("Findings: ")
    else:
        title = focus.title.replace("Findings: ", "Focus rounds: ")
    every.blocks.append(Heading(title[0].upper() + title[1:]))
    every.blocks += focus.blocks if not focus.skipped else [Para(focus.skipped, note=True)]
    return every


def _focus_findings(run: RunData, *, top: int = 10, examples: int = 3) -> ReportSection:
    """Confirmed failure patterns (``focus.jsonl``), else the top mined n-grams. When the
    reference cannot be trusted (:func:`distrust`), none is called confirmed."""
    rows = focus_rows(run)
    if rows is None:
        return _fallback(run, top)
    why = distrust(run)
    sec = ReportSection("findings", "Findings: unconfirmed failure patterns (the reference "
                        "cannot be trusted)" if why else "Findings: confirmed failure patterns")
    if not rows:
        sec.skipped = "focus.jsonl is empty: mining found no candidate to test"
        return sec
    focus = run.section("focus")
    alpha = focus.get("alpha", 0.05)
    failure = focus.get("failure", "disagreement")
    confirmed = [r for r in rows if r.get("confirmed")]
    if why:
        sec.blocks.append(Para(
            f"Unconfirmed: {'; and '.join(why)}. A candidate's failures are disagreements "
            f"with the reference, so {len(confirmed)} candidate(s) that pass the test below "
            f"may be the reference's errors, not the task model's.", note=True))
    new = sum(int(r.get("n", 0)) for r in rows)
    sec.blocks.append(Para(
        f"Focus rounds generated {new:,} new sentences containing {len(rows)} candidate "
        f"n-grams and scored them with both models; {len(confirmed)} "
        f"{'pass the test (unconfirmed, as said above)' if why else 'are confirmed'}: they "
        f"fail significantly more often than the corpus (failure: {failure}; base rate "
        f"{rows[0]['base_rate']:.2f} over {rows[0]['base_n']:,} sentences), or deleting them "
        f"changes the task model's top label while the reference's stays (CheckList's "
        f"invariance test) significantly more often than deleting as many other words does "
        f"(one-sided Fisher exact tests, Benjamini-Hochberg q < {alpha} over both)."))
    if not confirmed:
        sec.blocks.append(Para("No candidate is confirmed: the mined n-grams below may be "
                               "anecdotes; raise focus.budget or focus.rounds to test them "
                               "with more sentences.", note=True))
    cols = ["rank", "ngram", "confirmed", "failures", "sentences", "failure rate [95% CI]",
            "base rate", "rate ratio", "label changes when deleted", "other words deleted",
            "q", "corpus count"]
    sec.blocks.append(Table.of(cols, [
        [r["rank"], r["ngram"],
         (("unconfirmed" if why else "yes") + f" ({r.get('confirmed_by') or 'failure rate'})")
         if r.get("confirmed") else "no", r["failures"], r["n"],
         _rate(r), r["base_rate"], r.get("rate_ratio"),
         f"{r['flipped']}/{r['invariance_n']}" if r.get("invariance_n") else None,
         r.get("invariance_base"), r["q_value"], r["corpus_count"]]
        for r in rows[:top]]))
    sec.blocks += cut_note(len(rows), top, "focus candidates")
    for r in confirmed[:top]:
        shown = [x for x in r.get("examples") or [] if isinstance(x, dict)][:examples]
        if not shown:
            continue
        sec.blocks.append(Heading(f"\u201c{r['ngram']}\u201d: fails {r['failures']} of "
                                  f"{r['n']} new sentences ({_rate(r)}), q = "
                                  f"{r['q_value']:.2g}"))
        sec.blocks.append(Table.of(["sentence", "task model", "reference"], [
            [x.get("text"), _probs(x.get("task_probs")), _probs(x.get("reference_probs"))]
            for x in shown]))
    return sec


def _fallback(run: RunData, top: int) -> ReportSection:
    sec = ReportSection("findings", "Findings: top mined n-grams (not confirmed)")
    ngrams = run.ngrams()
    if not ngrams:
        sec.skipped = "no focus.jsonl and no mined n-grams (run `synthcheck mine`, then " \
                      "`synthcheck focus`)"
        return sec
    sec.blocks.append(Para(
        "This run has no focus rounds (focus.enabled: false, or `synthcheck focus` was not "
        "run): these n-grams rest on their hard-subset counts alone and may be anecdotes.",
        note=True))
    texts = run.corpus_texts()
    cols = ["ngram", "hard_count", "corpus_count", "q_value", "example"]
    sec.blocks.append(Table.of(cols, [
        [r.get("ngram"), r.get("hard_count"), r.get("corpus_count"), r.get("q_value"),
         texts.get(str((r.get("examples") or [""])[0]), "")]
        for r in ngrams[:top]]))
    sec.blocks += cut_note(len(ngrams), top, "n-grams")
    return sec
