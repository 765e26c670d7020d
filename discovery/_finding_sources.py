"""Finding sources: every stage whose rows become findings, one registry entry each.

A :class:`FindingSource` declares the file its stage writes (an :class:`~synth.core.Artifact`),
the kinds of finding it yields with the words the summary and the report use for each, how a
row becomes a finding (``findings``), which candidates it hands to focus rounds (``pool``) and
with what evidence (``proposes``). ``findings.jsonl``, the CLI summary, the report,
``synthcheck slices`` and the focus candidate pool iterate over :data:`FINDING_SOURCES`, so a
new source is its algorithm, its entry and its test. A source that reads the scored corpus
alone gives ``compute`` (``(ScoredCorpus, SlicesConfig) -> rows``); the app then runs it as a
stage of its own, on when ``slices.sources`` names it.

The entries are in pipeline order: where two sources propose the same candidate, the later
one's evidence counts (an occlusion word's over a mined n-gram's); in the focus pool the one
with the lower ``pool_order`` names its kind.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._artifacts import FOCUS, LABELLED, METADATA_SLICES, NGRAMS, SLICES, WORDS
from discovery._focus_rounds import candidate_terms, ngram_pattern
from discovery._stats import wilson_interval
from synth.core import Artifact, ConfigError, did_you_mean

if TYPE_CHECKING:
    from discovery._config import SlicesConfig

Row = Mapping[str, Any]


@dataclass(frozen=True)
class FindingKind:
    """One kind of finding (the ``kind`` field of a ``findings.jsonl`` row).

    Attributes:
        name: the kind (``ngram``, ``word``, ...).
        words: what the report calls it ("n-gram", "word (occlusion)").
        order: its place among kinds when two findings tie on every other key.
        turn: its turn with ``focus.select: balanced`` (None: after every kind with one).
    """

    name: str
    words: str
    order: int
    turn: int | None = None


@dataclass(frozen=True)
class ScoredCorpus:
    """What a finding adapter (and a corpus-only source's ``compute``) reads: the corpus,
    both models' probabilities, the failure flags under the slices' rule and the reference's
    probability that the task model is wrong."""

    ids: Sequence[str]
    texts: Sequence[str]
    fail: np.ndarray
    p_wrong: np.ndarray
    task: np.ndarray | None = None
    reference: np.ndarray | None = None
    task_fn: Callable[[list[str]], np.ndarray] | None = None
    """Scores new text with the ranked task model (probabilities in label order): given to
    a source that ``edits`` sentences, None otherwise."""

    @property
    def base_rate(self) -> float:
        return float(self.fail.mean()) if len(self.fail) else 0.0


@dataclass(frozen=True)
class FindingContext:
    """What a source's ``findings`` adapter reads besides its own rows.

    Attributes:
        corpus: the scored corpus.
        max_per_kind: how many rows of each kind enter.
        tested: the candidates focus rounds tested (their focus row stands for them).
        proposed: candidate -> the q-value of the source that proposed it.
        focus_rule: the focus failure rule in words.
        replicable: the slices, by name, that the sources' ``replicable`` name: read again
            on the focus rounds' new sentences (:func:`replications`).
        alpha: the significance level of that reading (``focus.alpha``).
    """

    corpus: ScoredCorpus
    max_per_kind: int = 20
    tested: frozenset[str] = frozenset()
    proposed: Mapping[str, float] = field(default_factory=dict)
    focus_rule: str = ""
    replicable: tuple[str, ...] = ()
    alpha: float = 0.05


@dataclass(frozen=True)
class FindingSource:
    """One stage whose rows become findings.

    Attributes:
        stage: the stage writing the rows (its name in the manifest).
        artifact: the file it writes.
        kinds: the kinds of finding it yields, with their words.
        findings: ``(rows, context) -> findings`` (see :func:`finding`).
        significant_only: only its rows with ``significant`` true enter.
        proposes: ``rows -> {candidate: q-value}``: the focus candidates it proposes and its
            evidence for each (kept for a focus test that is inconclusive).
        pool: ``rows -> [(candidate, kind)]`` in evidence order: what it adds to the focus
            candidate pool (None: nothing).
        pool_order: its place among the pool's sources (a candidate two sources propose
            keeps the kind of the one with the lower number).
        tests: ``rows -> candidates`` the source tested on new sentences (focus rounds);
            their rows stand for every other source's row of the same name.
        summary: what the CLI summary calls its significant rows (None: not listed).
        compute: ``(ScoredCorpus, SlicesConfig) -> rows`` for a source reading the scored
            corpus alone: the app runs it as a stage, on when ``slices.sources`` names it.
        edits: its ``compute`` edits sentences and scores the edits with the task model: it
            reads every sentence (abstained ones too; ``fail`` still says which judged
            sentence fails) and gets ``task_fn``.
        replicable: ``(rows, max_per_kind) -> names`` of its slices (of those its
            ``findings`` keeps) that fail above their base rate and are
            defined by a property of a sentence's text
            (:func:`discovery._slices.property_predicate`: a length band, a question), which
            the focus rounds' new sentences are read against (:func:`replications`).
        doc: one line on what it finds.
    """

    stage: str
    artifact: Artifact
    kinds: tuple[FindingKind, ...]
    findings: Callable[[Sequence[Row], FindingContext], list[dict[str, Any]]]
    significant_only: bool = True
    proposes: Callable[[Sequence[Row]], dict[str, float]] | None = None
    pool: Callable[[Sequence[Row]], list[tuple[str, str]]] | None = None
    pool_order: int = 9
    tests: Callable[[Sequence[Row]], set[str]] | None = None
    summary: str | None = None
    compute: Callable[[ScoredCorpus, SlicesConfig], list[dict[str, Any]]] | None = None
    edits: bool = False
    replicable: Callable[[Sequence[Row], int], list[str]] | None = None
    doc: str = ""

    def entered(self, rows: Sequence[Row]) -> list[Row]:
        """The rows that may become findings (the significant ones, if it says so)."""
        return [r for r in rows if r.get("significant")] if self.significant_only \
            else list(rows)


# --- helpers every adapter shares ---------------------------------------------------------

def group_name(terms: Sequence[str], size: int = 4) -> str:
    """The focus candidate of a semantic slice: its first ``size`` terms as a group."""
    return " | ".join(terms[:size])


def corpus_counts(texts: Sequence[str], candidate: str, fail: np.ndarray,
                  p_wrong: np.ndarray, ids: Sequence[str], max_examples: int = 20
                  ) -> dict[str, Any]:
    """Corpus sentences holding ``candidate`` (any of a group's terms): ``n``, ``failures``,
    and the failing ones' ids, most likely wrong first."""
    pattern = ngram_pattern(candidate)
    hits = [i for i, t in enumerate(texts) if pattern.search(t)]
    failing = sorted((i for i in hits if fail[i]), key=lambda i: (-p_wrong[i], i))
    return {"n": len(hits), "failures": len(failing),
            "example_ids": [ids[i] for i in failing[:max_examples]]}


def _interval(k: int, n: int) -> tuple[float, float]:
    lo, hi = wilson_interval(np.array([k]), np.array([n]))
    return float(lo[0]), float(hi[0])


def finding(kind: str, name: str, terms: Sequence[str], example_ids: Sequence[str], n: int,
            failures: int, base_rate: float, reason: str, *, confirmed: bool = False,
            **extra: Any) -> dict[str, Any]:
    """One finding (a ``findings.jsonl`` row before its rank): the rate's 95% Wilson
    interval and ``score = low - base_rate`` computed from ``failures`` of ``n``."""
    low, high = _interval(failures, n) if n else (0.0, 1.0)
    return {"kind": kind, "name": name, "terms": list(terms),
            "example_ids": list(example_ids)[:20], "n": int(n), "failures": int(failures),
            "rate": failures / n if n else 0.0, "low": low, "high": high,
            "base_rate": float(base_rate), "score": (low - float(base_rate)) if n else 0.0,
            "confirmed": bool(confirmed), "reason": reason, **extra}


# --- the built-in sources -------------------------------------------------------------------

def _ngram_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    c = ctx.corpus
    out = []
    for r in list(rows)[:ctx.max_per_kind]:
        name = str(r["ngram"])
        if name in ctx.tested:
            continue
        counts = corpus_counts(c.texts, name, c.fail, c.p_wrong, c.ids)
        out.append(finding(
            "ngram", name, [name], counts["example_ids"], counts["n"], counts["failures"],
            c.base_rate, f"in {r['hard_count']} hard sentences of {r['corpus_count']} in the "
            f"corpus (z={float(r['z']):.2f}, q={float(r['q_value']):.2g})",
            q_value=float(r["q_value"])))
    return out


def _semantic_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    out = []
    for r in list(rows)[:ctx.max_per_kind]:
        name = group_name(r["terms"]) if r["terms"] else str(r["slice"])
        if name in ctx.tested:
            continue
        out.append(finding(
            "semantic", name, r["terms"], r["example_ids"], r["n"], r["failures"],
            r["base_rate"], f"{r['slice']}: {r['failures']} of {r['n']} semantically close "
            f"sentences fail vs {r['base_rate']:.2f} elsewhere, q={r['q_value']:.2g}",
            q_value=r["q_value"]))
    return out


def _metadata_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    return [finding(
        "metadata", r["slice"], r["terms"], r["example_ids"], r["n"], r["failures"],
        r["base_rate"], f"{r['failures']} of {r['n']} sentences fail vs "
        f"{r['base_rate']:.2f} without it" + (
            f"; the reference's mean p(task model wrong) {r['mean_p_wrong']:.2f} vs "
            f"{r['base_p_wrong']:.2f}" if "mean_p_wrong" in r else "")
        + f", q={r['q_value']:.2g}", q_value=r["q_value"])
        for r in list(rows)[:ctx.max_per_kind]]


def _word_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    out = []
    for kind in ("group", "phrase", "word"):
        for r in [r for r in rows if r.get("kind", "word") == kind][:ctx.max_per_kind]:
            if r["word"] in ctx.tested:
                continue
            ref = r.get("reference_shift")
            ref_s = "unchecked" if ref is None else f"{ref:+.2f}"
            what = ("deleting it moves" if kind != "group" else
                    f"deleting any of these {len(r['terms'])} related words moves")
            out.append(finding(
                kind, r["word"], r.get("terms") or [r["word"]], r["example_ids"], r["n"],
                r["failures"], r["base_rate"], f"{what} the task model's top label by "
                f"{r['task_shift']:+.2f} on average over {r['n']} sentence(s), the "
                f"reference's by {ref_s}; z={r['z']:.1f}, q={r['q_value']:.2g}",
                q_value=r["q_value"], task_shift=r["task_shift"], reference_shift=ref))
    return out


FOCUS_FIELDS = ("flipped", "task_shift", "reference_shift", "p_rate", "p_paired",
                "confirmed_by", "invariance_applies", "invariance_n", "invariance_rate",
                "invariance_base",
                "p_invariance", "q_invariance", "control_n", "control_flipped", "term_counts")
"""The focus row's fields a focus finding carries."""
INVARIANCE_RULE = ("invariance: deleting it changes the task model's top label while the "
                   "reference's stays")
"""The failure rule of a focus finding confirmed by its invariance test."""


def _supported_by(r: Row, base: float, alpha: float) -> str:
    """The test a supported focus row passed before the correction across candidates, by
    :func:`discovery._focus_rounds.confirm_candidates`'s rule (the row's own ``rate`` and
    ``base_rate``; ``base`` where it has none): ``"failure rate p=0.012"`` or
    ``"invariance p=0.042"`` (the first where both did)."""
    rate = r.get("rate")
    if rate is None:
        rate = int(r["failures"]) / int(r["n"]) if r.get("n") else 0.0
    if float(r.get("p_rate", 1.0)) < alpha and float(rate) > float(r.get("base_rate", base)):
        return f"failure rate p={r['p_rate']:.2g}"
    return f"invariance p={float(r.get('p_invariance', 1.0)):.2g}"


def _focus_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    c = ctx.corpus
    base = c.base_rate
    out = []
    for r in rows:
        name = str(r["ngram"])
        counts = corpus_counts(c.texts, name, c.fail, c.p_wrong, c.ids)
        q = r.get("q_value")
        source_q = ctx.proposed.get(name)
        evidence = 1.0 if q is None else float(q)
        status = "confirmed" if r.get("confirmed") else "supported" if r.get("supported") \
            else "not replicated" if r["n"] else "untested"
        if status == "supported" and source_q is not None:
            evidence = float(source_q)  # ranked on what proposed it, which the test agrees with
        inv = r.get("confirmed_by") == "invariance"
        fails = (f"{r['failures']} of {r['n']} new sentences fail ({ctx.focus_rule}) vs "
                 f"the corpus's {base:.2f}")
        rate_s = f"focus rounds: {fails}"
        if inv:  # confirmed by its invariance failures: the row's rate is theirs
            n, failures, row_base = int(r["invariance_n"]), int(r["flipped"]), \
                float(r["invariance_base"])
            reason = (f"invariance (CheckList INV) on new sentences: deleting it changes the "
                      f"task model's top label while the reference's stays on {failures} of "
                      f"{n}, vs {row_base:.2f} when as many other words are deleted, "
                      f"q={q:.2g}; by the failure rate, {fails}")
        else:
            n, failures, row_base = int(r["n"]), int(r["failures"]), base
            reason = ((rate_s
                       + (f"; deleting it moves the task model by {r['task_shift']:+.2f} and "
                          f"the reference by {r['reference_shift']:+.2f}, flipping the task "
                          f"model alone on {r['flipped']}"
                          + (f" (deleting other words: {r['invariance_base']:.2f})"
                             if r.get("invariance_base") is not None else "")
                          + ("; the reference moves too, so the word carries the label: no "
                             "invariance test" if r.get("invariance_applies") is False else "")
                          if r.get("flipped") is not None else "")
                       + f", q={q:.2g}"
                       + (f" ({_supported_by(r, base, ctx.alpha)} alone: supported, not "
                          f"confirmed; ranked by the evidence that proposed it, "
                          f"q={source_q:.2g})"
                          if status == "supported" and source_q is not None else ""))
                      if q is not None else "focus rounds: no new sentence kept")
        out.append(finding(
            "focus", name, candidate_terms(name), counts["example_ids"], n, failures,
            row_base, reason, confirmed=bool(r.get("confirmed")), status=status,
            source=str(r.get("source", "ngram")),
            corpus_n=counts["n"], corpus_failures=counts["failures"], q_value=q,
            evidence_q=evidence, source_q=source_q,
            **({"rule": INVARIANCE_RULE, "error_failures": int(r["failures"]),
                "error_n": int(r["n"]), "error_base_rate": base} if inv else {}),
            **{k: r[k] for k in FOCUS_FIELDS if r.get(k) is not None},
            examples=[x.get("text") for x in r.get("examples") or [] if isinstance(x, dict)]))
    return out + replications(rows, ctx)


MIN_REPLICATION = 5
"""New sentences with a property a slice must have before they are read for it."""
REPLICATION_RULE = ("a replicated slice's base rate is the rate its new sentences would "
                    "have were the property unrelated to failure within each candidate's "
                    "new sentences (Cochran-Mantel-Haenszel)")


def replications(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    """The slices of ``ctx.replicable`` that fail again on the focus rounds' new sentences,
    as confirmed ``metadata`` rows of that name (they merge with the slice's own rows).

    The new sentences were generated around candidates, not for the slice, so they are a
    fresh sample of it only within each candidate's sentences: every candidate's judged new
    sentences (``sentences`` of its ``focus.jsonl`` row) are one stratum, and the exact
    Cochran-Mantel-Haenszel test (:func:`discovery._stats.stratified_excess`) asks whether
    the sentences with the property fail more than the others of their stratum. Only a
    stratum with sentences with and without the property, failing and not, says anything
    (:func:`discovery._stats.informative`): the row's counts, expected count and examples
    are over those strata alone (a "never" candidate's sentences, every one a negation,
    are the evidence of its own row, not of ``negation``'s). A slice with fewer than
    :data:`MIN_REPLICATION` such sentences is not read; the slices read
    share one Benjamini-Hochberg correction at ``ctx.alpha``; only those significant, with
    more failures than expected, are returned (a slice not read again, or not significant
    on a sample it was not generated for, keeps its corpus row as it was)."""
    from discovery._slices import property_predicate
    from discovery._stats import benjamini_hochberg, informative, stratified_excess

    strata = [[(str(x["text"]), bool(x["failure"])) for x in r.get("sentences") or []]
              for r in rows]
    failing = [sum(f for _, f in s) for s in strata]
    tested = []
    for name in ctx.replicable:
        pred = property_predicate(name)
        if pred is None:
            continue
        cells, members = [], []
        for s, fails in zip(strata, failing, strict=True):
            hit = [(t, f) for t, f in s if pred(t)]
            if informative(len(s), fails, len(hit)):  # the others say nothing: not counted
                cells.append((len(s), fails, len(hit), sum(f for _, f in hit)))
                members += hit
        if len(members) < MIN_REPLICATION:
            continue
        observed, expected, p = stratified_excess(cells)
        tested.append((name, members, observed, expected, p))
    if not tested:
        return []
    q = benjamini_hochberg(np.array([t[4] for t in tested]))
    out = []
    for (name, members, observed, expected, p), qv in zip(tested, q, strict=True):
        if not (qv < ctx.alpha and observed > expected):
            continue
        n = len(members)
        out.append(finding(
            "metadata", name, [], [], n, observed, expected / n,
            f"focus rounds: {observed} of {n} new sentences in this slice fail "
            f"({ctx.focus_rule or 'the run rule'}) where {expected:.1f} would were it "
            f"unrelated to failure within each candidate's new sentences (exact "
            f"Cochran-Mantel-Haenszel test over the candidates holding sentences with and "
            f"without it), q={float(qv):.2g}",
            confirmed=True, status="confirmed", source="focus",
            confirmed_by="replication", q_value=float(qv), evidence_q=float(qv),
            p_value=p, expected=expected, base_rule=REPLICATION_RULE,
            examples=[t for t, f in members if f][:20]))
    return out


def _above_base(r: Row) -> bool:
    return bool(r["n"]) and int(r["failures"]) / int(r["n"]) > float(r["base_rate"])


def _metadata_replicable(rows: Sequence[Row], max_per_kind: int) -> list[str]:
    # the rows _metadata_findings makes findings of
    return [str(r["slice"]) for r in list(rows)[:max_per_kind] if _above_base(r)]


def _labelled_replicable(rows: Sequence[Row], max_per_kind: int) -> list[str]:
    # the metadata rows labelled_findings makes findings of (significant, per-kind cap)
    meta = [r for r in rows if r.get("kind") == "metadata" and r.get("significant")]
    return [str(r["name"]) for r in meta[:max_per_kind] if _above_base(r)]


LABELLED_WHAT = {"ngram": "rows holding it", "metadata": "rows in this slice",
                 "semantic": "semantically close rows", "word": "rows holding it",
                 "group": "rows holding any of these words"}


def labelled_candidate(row: Mapping[str, Any]) -> str:
    """The focus candidate of a labelled finding: its terms as a group (one term: itself);
    "" for one without terms (a length band, a rating band)."""
    terms = [str(t) for t in row.get("terms") or [] if str(t).strip()]
    return group_name(terms) if terms else ""


def labelled_findings(rows: Sequence[Mapping[str, Any]], max_per_kind: int = 20
                      ) -> list[dict[str, Any]]:
    """Findings rows (``data: labelled``) from ``labelled.jsonl``'s significant rows, the
    first ``max_per_kind`` of each kind."""
    out: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for r in rows:
        kind = str(r["kind"])
        if not r.get("significant") or taken.get(kind, 0) >= max_per_kind:
            continue
        taken[kind] = taken.get(kind, 0) + 1
        shift = (f"; deleting it moves the task model towards the gold label by "
                 f"{r['gold_shift']:+.2f} on average, fixing {r['fixed']} error(s)"
                 if "gold_shift" in r else "")
        # the labelled rows' one base rate (a row's own base_rate is the rest's)
        base = float(r.get("data_base_rate", r["base_rate"]))
        out.append(finding(
            kind, str(r["name"]), r.get("terms") or [], r.get("example_ids") or [],
            int(r["n"]), int(r["failures"]), base,
            f"labelled data: the task model is wrong on {r['failures']} of {r['n']} "
            f"{LABELLED_WHAT.get(kind, 'rows')} vs {base:.2f} of all labelled rows"
            f"{shift}, q={float(r['q_value']):.2g}",
            q_value=float(r["q_value"]), data="labelled",
            examples=[e.get("text") for e in r.get("examples") or [] if isinstance(e, dict)]))
    return out


def _labelled_findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    return labelled_findings(rows, ctx.max_per_kind)


def _labelled_pool(rows: Sequence[Row]) -> list[tuple[str, str]]:
    # smallest q-value first: new sentences around what the labelled data shows
    ordered = sorted(rows, key=lambda r: float(r["q_value"]))
    return [(labelled_candidate(r), "labelled") for r in ordered if labelled_candidate(r)]


def _word_pool(rows: Sequence[Row]) -> list[tuple[str, str]]:
    # words, phrases and groups, each kind its own share, surest large effect first (a
    # focus test's power is in the effect, not the corpus n)
    ordered = sorted(rows, key=lambda r: -float(r.get("excess_low", r["z"])))
    return [(str(r["word"]), str(r.get("kind", "word"))) for r in ordered]


def _semantic_pool(rows: Sequence[Row]) -> list[tuple[str, str]]:
    return [(group_name(r["terms"]), "semantic") for r in rows if r.get("terms")]


BUILTIN: tuple[FindingSource, ...] = (
    FindingSource("mine", NGRAMS, (FindingKind("ngram", "n-gram", 5, turn=4),),
                  _ngram_findings, significant_only=False,
                  proposes=lambda rows: {str(r["ngram"]): float(r["q_value"]) for r in rows},
                  doc="n-grams over-represented in the hard subset"),
    FindingSource("semantic", SLICES, (FindingKind("semantic", "semantic slice", 1, turn=5),),
                  _semantic_findings,
                  proposes=lambda rows: {group_name(r["terms"]): float(r["q_value"])
                                         for r in rows if r.get("terms")},
                  pool=_semantic_pool, pool_order=1, summary="semantic slices",
                  doc="clusters of semantically close sentences that fail more often"),
    FindingSource("metadata", METADATA_SLICES, (FindingKind("metadata", "metadata slice", 6),),
                  _metadata_findings, summary="metadata slices",
                  replicable=_metadata_replicable,
                  doc="sentences sharing a surface property (length, '!', negation, ...)"),
    FindingSource("occlusion", WORDS,
                  (FindingKind("group", "group of related words (occlusion)", 2, turn=2),
                   FindingKind("phrase", "phrase (occlusion)", 3, turn=3),
                   FindingKind("word", "word (occlusion)", 4, turn=0)),
                  _word_findings,
                  proposes=lambda rows: {str(r["word"]): float(r["q_value"]) for r in rows},
                  pool=_word_pool, pool_order=0, summary="occlusion words, phrases and groups",
                  doc="words whose deletion moves the task model and not the reference"),
    # its findings are of the kinds above (data: labelled); "labelled" names its focus
    # candidates' source
    FindingSource("labelled", LABELLED,
                  (FindingKind("labelled", "labelled data (gold labels)", 7, turn=1),),
                  _labelled_findings,
                  proposes=lambda rows: {labelled_candidate(r): float(r["q_value"])
                                         for r in rows if labelled_candidate(r)},
                  pool=_labelled_pool, pool_order=2, replicable=_labelled_replicable,
                  doc="n-grams, slices and words where the task model errs on the user's "
                      "labelled rows"),
    FindingSource("focus", FOCUS, (FindingKind("focus", "focus rounds (new sentences)", 0),),
                  _focus_findings, significant_only=False,
                  tests=lambda rows: {str(r["ngram"]) for r in rows},
                  doc="candidates tested on new sentences, and slices read again on them "
                      "(the only confirmed findings)"),
)

PLUGINS: tuple[str, ...] = ("discovery._enrichment", "discovery._perturbation")
"""Modules that register further sources when imported (``discovery.<module>``); a new
source's module is one line here."""

FINDING_SOURCES: dict[str, FindingSource] = {s.stage: s for s in BUILTIN}
"""Every finding source by stage name, in pipeline order (see :func:`finding_sources`)."""

_loaded = False


def register_finding_source(source: FindingSource, *, before: str = "focus") -> None:
    """Add (or replace) ``source``, placed before the stage ``before`` (default: before the
    focus rounds, which test what the others propose)."""
    items = [(k, v) for k, v in FINDING_SOURCES.items() if k != source.stage]
    at = next((i for i, (k, _) in enumerate(items) if k == before), len(items))
    items.insert(at, (source.stage, source))
    FINDING_SOURCES.clear()
    FINDING_SOURCES.update(items)


def finding_sources() -> dict[str, FindingSource]:
    """Every registered source (the built-in ones and those of :data:`PLUGINS`), in pipeline
    order."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in PLUGINS:
            importlib.import_module(module)
    return FINDING_SOURCES


def finding_kinds() -> dict[str, FindingKind]:
    """Every kind of finding, by name, in tie-break order."""
    kinds = [k for s in finding_sources().values() for k in s.kinds]
    return {k.name: k for k in sorted(kinds, key=lambda k: k.order)}


def kind_words() -> dict[str, str]:
    """Kind -> the words the report uses for it."""
    return {k.name: k.words for k in finding_kinds().values()}


def balanced_turns() -> tuple[str, ...]:
    """The kinds in their turns with ``focus.select: balanced``."""
    kinds = [k for k in finding_kinds().values() if k.turn is not None]
    return tuple(k.name for k in sorted(kinds, key=lambda k: k.turn or 0))


def pool_stages() -> tuple[str, ...]:
    """The stages whose rows join the focus candidate pool (those with a ``pool``)."""
    return tuple(s.stage for s in finding_sources().values() if s.pool is not None)


def source_hashes(upstream: Mapping[str, str | None], stages: Sequence[str]
                  ) -> dict[str, str | None]:
    """``stage -> hash`` of ``stages`` for a hash that covers them: a built-in source's
    always (None when off), a plug-in source's only when it has one, so that a source a
    config leaves off does not change the hashes of runs that never knew it."""
    builtin = {s.stage for s in BUILTIN}
    return {k: upstream.get(k) for k in stages
            if k in builtin or upstream.get(k) is not None}


def is_plugin_stage(stage: str) -> bool:
    """Whether ``stage`` is a plug-in finding source's (not a built-in one's)."""
    return stage in finding_sources() and stage not in {s.stage for s in BUILTIN}


def corpus_sources() -> dict[str, FindingSource]:
    """The sources that read the scored corpus alone (``compute``): each runs as a stage,
    on when ``slices.sources`` names it."""
    return {k: s for k, s in finding_sources().items() if s.compute is not None}


def check_source_names(names: Sequence[str], where: str = "slices.sources") -> None:
    """Every name is a registered corpus-only source (else "did you mean").

    Raises:
        ConfigError: an unknown name.
    """
    known = sorted(corpus_sources())
    for name in names:
        if name not in known:
            raise ConfigError(f"unknown finding source {name!r}", where=where,
                              fix=did_you_mean(name, known) if known else
                              "no corpus-only finding source is registered")
