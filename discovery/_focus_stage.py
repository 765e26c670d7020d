"""The focus stage on a run directory: generate, score and test each candidate, resumably.

:func:`run_focus_rounds` runs ``focus.rounds`` rounds. A round's candidates are generated together:
their queries go to the backend in groups of at least two generator batches (one
``generate`` call per group, so the backend's batches are full whatever the per-candidate
budget), the kept sentences of a group are scored in one call per model, and each
candidate's scored sentences are written atomically under ``focus/.parts/`` with the stage
hash, so a killed run redoes only the candidates whose parts are missing. The models are
reached only when some part is missing (a current or fully resumed stage loads nothing).

:func:`focus_run` is the stage as `discover` runs it: it reads the run's scores, hard subset
and mining stage, and records its hash (the focus section, the generator, the seed
documents, the models and the mining stage's hash) in the manifest like the other stages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._artifacts import FOCUS, FOCUS_PARTS, HARD
from discovery._config import FocusConfig, MiningConfig, RankingConfig, TaskModelConfig
from discovery._finding_sources import balanced_turns, finding_sources
from discovery._focus_rounds import (
    CONTROL_SCHEME,
    FOCUS_SEED_SCHEME,
    GROUP_QUERY_SCHEME,
    INVARIANCE_SCHEME,
    candidate_terms,
    confirm_candidates,
    control_deletion,
    delete_candidate,
    focus_queries,
    generate_raw,
    keep_sentences,
    ngram_pattern,
    paired_test,
    select_candidates,
)
from discovery._judge import Judgement, JudgeRule, judge
from discovery._runner import StageJob
from discovery._slice_stages import JUDGE_SCHEME
from discovery._stage_state import check_upstream
from synth.core import (
    DataError,
    LabelSpace,
    RunDir,
    config_hash,
    iter_jsonl,
    output_dump,
    write_jsonl,
)

if TYPE_CHECKING:
    from synth import GeneratorConfig
    from synth.engines import Backend

STAGE = "focus"


@dataclass(frozen=True)
class FocusBase:
    """The base corpus the candidates are tested against (already scored).

    Attributes:
        texts: every corpus sentence.
        task, reference: n x labels probabilities (reference calibrated).
        hard_indices: the hard subset, as indices into ``texts``.
        upstream: the hash of the stage the candidates come from (e.g. mine's).
        abstain: the reference's abstain answer's probability per sentence (None: none).
        rule: the run's judging rule (:func:`discovery.judge`): the base corpus and every
            new sentence are judged by it, so focus shares the slices' base rate.
    """

    texts: Sequence[str]
    task: np.ndarray
    reference: np.ndarray
    hard_indices: Sequence[int]
    upstream: str = ""
    abstain: np.ndarray | None = None
    rule: JudgeRule = field(default_factory=JudgeRule)
    every_text: Sequence[str] | None = None
    """Every corpus sentence, the abstained ones too (None: :attr:`texts`): where a pooled
    candidate occurs when ``balanced`` picks (a word whose sentences the reference reads no
    label in is still evidence: deleting it moves the task model alone)."""

    def judgement(self) -> Judgement:
        """The base corpus judged by :attr:`rule`."""
        return judge(self.task, self.reference, abstain=self.abstain, rule=self.rule)


@dataclass(frozen=True)
class FocusModels:
    """What focus rounds generate and score with (each is used only if some part is missing,
    so an app may pass lazy wrappers that load on first use).

    Attributes:
        backend: the stage-1 generator backend (``synth.engines.Backend``).
        task: texts -> n x labels probabilities of the ranked task model.
        reference: texts -> n x labels calibrated reference probabilities (calibrated
            like the base corpus, e.g. with the score stage's fitted bias), plus a last
            column, the abstain answer's probability, when the reference has one.
        key: a hash of what changes the two models' scores (their stage hashes).
    """

    backend: Backend
    task: Callable[[list[str]], np.ndarray]
    reference: Callable[[list[str]], np.ndarray]
    key: str


def focus_stage_hash(cfg: FocusConfig, labels: LabelSpace, generator: GeneratorConfig,
                     docs: Sequence[str], base: FocusBase, models: FocusModels, *,
                     parts: bool = False) -> str:
    """:func:`focus_hash` of a loaded stage: ``base``'s upstream and rule, ``models``' key."""
    return focus_hash(cfg, labels, generator, docs, upstream=base.upstream,
                      models_key=models.key, min_margin=base.rule.min_margin, parts=parts)


def focus_hash(cfg: FocusConfig, labels: LabelSpace, generator: GeneratorConfig,
               docs: Sequence[str], *, upstream: str, models_key: str,
               min_margin: float, parts: bool = False) -> str:
    """Hash of what changes ``focus.jsonl``: the focus and generator configs, the labels,
    the seed documents, the upstream stage's hash, the models' key (the reference's covers
    its abstain threshold), the judging rule's margin and, with ``paired``, how the
    invariance test's controls are drawn. With ``parts``, the hash of what changes the new
    sentences and their scores (the per-candidate parts): everything but the controls, so a
    new control scheme rescores only the controls."""
    h = hashlib.sha256()
    for d in docs:
        h.update(d.encode("utf-8") + b"\n")
    phash = config_hash({"focus": output_dump(cfg), "generator": output_dump(generator),
                        "labels": list(labels), "seed_docs": h.hexdigest()[:16],
                        "upstream": upstream, "models": models_key,
                        # the margin only when set: hashes without it are as before
                        "rule": [JUDGE_SCHEME, min_margin],
                        "seeds": FOCUS_SEED_SCHEME})
    if parts:
        return phash
    return config_hash({"parts": phash, "rows": ROWS_SCHEME,
                        **({"invariance": INVARIANCE_SCHEME} if cfg.paired else {})})


PROPERTY_PICKS = 2
"""``balanced`` picks at most this many candidates whose every word is a marker of one
property before the other candidates are spent (:func:`_balanced`)."""
ROWS_SCHEME = ("balanced picks see abstained sentences; a group row's term_counts count the "
               "sentences holding one of its words only; balanced picks at most "
               f"{PROPERTY_PICKS} candidates whose words are all markers of one property "
               "before the other candidates are spent; a row lists its judged new sentences")
"""What the rows hold beyond the parts; part of the stage hash (not the parts'), so rows
written before are rewritten from the parts already generated."""


def _part_path(run: RunDir, shash: str, round_: int, candidate: str) -> Path:
    key = candidate if len(candidate_terms(candidate)) == 1 \
        else f"{candidate}\n{GROUP_QUERY_SCHEME}"
    tag = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return FOCUS_PARTS.path(run.path) / f"round{round_}-{tag}-{shash}.jsonl"


def _generated_path(run: RunDir, shash: str, round_: int, candidate: str) -> Path:
    """Where a candidate's kept sentences wait, unscored, between generation and scoring:
    a kill during the (paired) rescoring of its group keeps what was generated."""
    part = _part_path(run, shash, round_, candidate)
    return part.with_name(part.stem + ".generated.jsonl")


def _groups(names: Sequence[str], budget: int, target: int) -> list[list[str]]:
    """``names`` in order, cut into groups of at least ``target`` prompts (the last may be
    smaller)."""
    per = max(1, -(-target // budget))
    return [list(names[i:i + per]) for i in range(0, len(names), per)]


def run_focus_rounds(run_dir: str | Path, cfg: FocusConfig, labels: LabelSpace, *,
                     generator: GeneratorConfig, seed_docs: Sequence[str], base: FocusBase,
                     models: FocusModels, candidates: Sequence[str] | None = None,
                     config_dump: dict[str, Any] | None = None,
                     progress: bool = True, mining: MiningConfig | None = None,
                     sources: Mapping[str, str] | None = None,
                     stage_hash: str | None = None) -> dict[str, Any]:
    """Run ``cfg.rounds`` focus rounds into ``run_dir`` and write ``focus.jsonl``.

    Args:
        run_dir: the run directory (``focus.jsonl``, ``focus.jsonl.meta.json`` and the
            per-candidate parts under ``focus/.parts/`` are written there).
        cfg: the focus section.
        labels: the task's labels (column order of every probability array).
        generator: the stage-1 ``GeneratorConfig`` (prompt, sampling, the run seed, segment,
            batch size).
        seed_docs: the seed corpus texts queries are drawn from.
        base: the scored base corpus and its hard subset.
        models: the generator backend and the two scorers.
        candidates: the n-grams to test (default: :func:`select_candidates` on the base
            corpus with ``cfg``'s settings and ``mining``'s n-gram range, stopwords and
            prior, plus ``cfg.ngrams``).
        config_dump: the resolved run config to record in the manifest.
        progress: a progress bar over each round's prompts (rate, ETA).
        mining: the mining section candidates are mined with (default: its defaults).
        sources: candidate -> the kind that proposed it (``ngram``, ``semantic``, ``word``,
            ``user``), recorded as each row's ``source`` (default: ``ngram``).
        stage_hash: the stage hash the caller's stage declaration computed (default:
            :func:`focus_stage_hash` of these arguments).

    Returns:
        ``{"skipped", "stage_hash", "candidates", "confirmed", "sentences", "prompts",
        "seconds"}`` (only the first two when skipped as current).

    Raises:
        DataError: the base corpus is empty, or its scores do not match its texts.
    """
    n_base = len(base.texts)
    if n_base == 0 or base.task.shape != (n_base, len(labels)) \
            or base.reference.shape != base.task.shape:
        raise DataError(f"the base corpus must be scored by both models ({n_base} texts, task "
                        f"{base.task.shape}, reference {base.reference.shape})",
                        where=str(run_dir), fix="run `synthcheck score` first")
    run = RunDir(run_dir)
    shash = stage_hash or focus_stage_hash(cfg, labels, generator, seed_docs, base, models)
    phash = focus_stage_hash(cfg, labels, generator, seed_docs, base, models, parts=True)
    out = FOCUS.path(run.path)
    job = StageJob(run, stage=STAGE, stage_hash=shash, outputs=[out])
    if job.current():
        return job.skipped()
    if candidates is None:
        m = mining or MiningConfig()
        candidates = select_candidates(base.texts, base.hard_indices, n=cfg.candidates,
                                       min_support=cfg.min_support,
                                       ngram_range=(m.ngram_min, m.ngram_max),
                                       stopwords=m.stopwords, prior_strength=m.prior_strength,
                                       extra=cfg.ngrams)
    candidates = list(dict.fromkeys(candidates))
    base_judgement = base.judgement()
    with job.open(config_dump or {"focus": cfg.model_dump(mode="json")}):
        rows, sentences, prompts = _rounds(run, phash, cfg, labels, generator=generator,
                                           seed_docs=seed_docs, base=base,
                                           base_judgement=base_judgement, models=models,
                                           candidates=candidates, sources=sources,
                                           progress=progress)
        write_jsonl(out, rows)
        total = sum(len(v) for v in sentences.values())
        abstained = sum(1 for v in sentences.values() for x in v if x.get("abstained"))
        job.write_meta(out, focus=cfg.model_dump(mode="json"), candidates=len(rows),
                       sentences=total, abstained=abstained, base_sentences=n_base,
                       base_judged=int(base_judgement.judged.sum()),
                       base_rate=base_judgement.base_rate, rule=base.rule.describe(),
                       stage=STAGE)
    seconds = job.seconds()
    confirmed = [row["ngram"] for row in rows if row["confirmed"]]
    job.complete(candidates=len(rows), sentences=total, abstained=abstained,
                 base_rate=base_judgement.base_rate, confirmed=len(confirmed), prompts=prompts,
                 seconds=round(seconds, 2))
    return {"skipped": False, "stage_hash": shash, "candidates": len(rows),
            "confirmed": confirmed, "sentences": total, "prompts": prompts, "seconds": seconds}


def _rounds(run: RunDir, shash: str, cfg: FocusConfig, labels: LabelSpace, *,
            generator: GeneratorConfig, seed_docs: Sequence[str], base: FocusBase,
            base_judgement: Judgement, models: FocusModels, candidates: Sequence[str],
            sources: Mapping[str, str] | None, progress: bool
            ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], int]:
    """The rounds themselves (see :func:`run_focus_rounds`): the rows, every candidate's
    scored sentences, and the prompts generated."""
    from synth.core import progress_bar

    base_fail = base_judgement.fails
    base_judged = base_judgement.judged
    seen = set(base.texts)
    sentences: dict[str, list[dict[str, Any]]] = {c: [] for c in candidates}
    rows: list[dict[str, Any]] = []
    prompts = 0
    target = 2 * generator.batch_size
    for r in range(1, cfg.rounds + 1):
        todo = candidates if r == 1 else [
            row["ngram"] for row in rows if not row["confirmed"] and row["n"]
            and (row["rate"] or 0.0) > row["base_rate"]]
        pending = [c for c in todo if not _part_path(run, shash, r, c).is_file()]
        prompts += cfg.prompts(len(pending))
        group_of = {c: i for i, g in enumerate(_groups(pending, cfg.budget, target)) for c in g}
        bar = progress_bar(cfg.prompts(len(pending)), f"focus round {r}", "prompt",
                           enabled=progress)
        raw: dict[str, tuple[list[Any], list[str]]] = {}
        kept: dict[str, list[dict[str, Any]]] = {}
        for c in todo:
            part = _part_path(run, shash, r, c)
            if c not in group_of:  # resumed: this candidate's part is on disk
                kept[c] = list(iter_jsonl(part))
                seen.update(x["text"] for x in kept[c])
                sentences[c].extend(kept[c])
                continue
            g = group_of[c]
            generated = _generated_path(run, shash, r, c)
            if c not in raw and c not in kept and all(
                    _generated_path(run, shash, r, x).is_file()
                    for x in pending if group_of[x] == g):
                # resumed after a kill while the group was scored: its sentences are kept
                kept[c] = list(iter_jsonl(generated))
                seen.update(x["text"] for x in kept[c])
            elif c not in raw:  # the first candidate of its group: generate the whole group
                group = [x for x in pending if group_of[x] == g]
                queries = {x: focus_queries(x, seed_docs, cfg, seed=generator.seed,
                                            round_=r, start=(r - 1) * cfg.budget)
                           for x in group}
                flat = [q for x in group for q in queries[x]]
                texts = generate_raw(flat, models.backend, generator)
                at = 0
                for x in group:
                    raw[x] = (queries[x], texts[at:at + len(queries[x])])
                    at += len(queries[x])
                bar.update(cfg.prompts(len(group)))
            if c not in kept:
                kept[c] = keep_sentences(c, *raw[c], generator, seen)
                write_jsonl(generated, kept[c])
            if all(x in kept for x in pending if group_of[x] == g):  # the group's last one
                group = [x for x in pending if group_of[x] == g]
                _score_group(group, kept, models, labels, cfg, base.rule)
                for x in group:
                    write_jsonl(_part_path(run, shash, r, x), kept[x])
                    _generated_path(run, shash, r, x).unlink(missing_ok=True)
            sentences[c].extend(kept[c])
        bar.close()
        if cfg.paired:
            _add_controls(run, shash, r, kept, models, labels, generator.seed)
        rows = confirm_candidates([_row(c, sentences[c], base.texts, base_fail, cfg.max_examples,
                                        cfg.min_shift, judged=base_judged)
                                   for c in candidates], int(base_fail.sum()),
                                  int(base_judged.sum()), cfg.alpha,
                                  cfg.min_shift if cfg.paired else None)
        for row in rows:
            row["source"] = (sources or {}).get(row["ngram"], "ngram")
    return rows, sentences, prompts


def _score_group(group: Sequence[str], kept: Mapping[str, list[dict[str, Any]]],
                 models: FocusModels, labels: LabelSpace, cfg: FocusConfig,
                 rule: JudgeRule) -> None:
    """Score every kept sentence of ``group`` with one call per model; add the probabilities,
    the failure indicator and why it abstained (``""``: judged) to each record."""
    recs = [(c, x) for c in group for x in kept[c]]
    texts = [x["text"] for _, x in recs]
    # With ``paired``, each sentence's counterfactual (the candidate deleted) is scored in
    # the same call; the record keeps whether it fails too.
    cf = [delete_candidate(x["text"], c) or x["text"] for c, x in recs] if cfg.paired else []
    every = texts + cf
    task, ref, abstain = _score_both(models, every, len(labels))
    verdict = judge(task, ref, abstain=abstain, rule=rule)
    fail = verdict.fails
    n = len(texts)
    for i, ((_, x), t, p, f) in enumerate(zip(recs, task[:n], ref[:n], fail[:n], strict=True)):
        x.update(task_probs=dict(zip(labels, map(float, t), strict=True)),
                 reference_probs=dict(zip(labels, map(float, p), strict=True)),
                 failure=bool(f), abstained=str(verdict.reason[i]))
        if cfg.paired:  # how far deleting it moves each model's p(the task's top label)
            y = int(np.argmax(t))
            x.update(counterfactual=cf[i], counterfactual_failure=bool(fail[n + i]),
                     task_shift=float(t[y] - task[n + i][y]),
                     reference_shift=float(p[y] - ref[n + i][y]),
                     flipped=bool(int(np.argmax(task[n + i])) != y
                                  and int(np.argmax(ref[n + i])) == int(np.argmax(p))))


def _score_both(models: FocusModels, texts: list[str], k: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Both models' n x ``k`` probabilities for ``texts`` (one call each), and the
    reference's abstain answer (its last column, where it has one; else None)."""
    empty = np.zeros((0, k))
    task = np.asarray(models.task(texts), dtype=np.float64) if texts else empty
    ref = np.asarray(models.reference(texts), dtype=np.float64) if texts else empty
    abstain = None
    if ref.ndim == 2 and ref.shape[1] == k + 1:  # the abstain answer, last
        abstain, ref = ref[:, -1], ref[:, :-1]
    if task.shape != (len(texts), k) or ref.shape != task.shape:
        raise DataError(f"a focus scorer returned {task.shape} / {ref.shape} probabilities for "
                        f"{len(texts)} sentences and {k} labels",
                        where="focus", fix="check the task model and the reference")
    return task, ref, abstain


def _add_controls(run: RunDir, shash: str, round_: int,
                  kept: Mapping[str, list[dict[str, Any]]], models: FocusModels,
                  labels: LabelSpace, seed: int) -> None:
    """The invariance test's controls for one round's scored sentences that lack them (see
    :func:`discovery._focus_rounds.control_deletion`): each sentence with as many other
    words deleted, both models scored in one call each, ``control_flipped`` when the task
    model's top label changes and the reference's does not (as ``flipped``). The parts are
    rewritten with them, so a resumed stage scores no control twice."""
    todo = [(c, x) for c, recs in kept.items() for x in recs if "counterfactual" in x
            and x.get("control_scheme") != CONTROL_SCHEME]
    if not todo:
        return
    ctrl = [control_deletion(x["text"], c, seed) for c, x in todo]
    texts = [t for t in ctrl if t is not None]
    task, ref, _ = _score_both(models, texts, len(labels))
    at = 0
    for (_, x), t in zip(todo, ctrl, strict=True):
        x.update(control=t, control_flipped=None, control_scheme=CONTROL_SCHEME)
        if t is None:
            continue
        y = int(np.argmax([x["task_probs"][lab] for lab in labels]))
        z = int(np.argmax([x["reference_probs"][lab] for lab in labels]))
        x["control_flipped"] = bool(int(np.argmax(task[at])) != y
                                    and int(np.argmax(ref[at])) == z)
        at += 1
    for c in dict.fromkeys(c for c, _ in todo):
        write_jsonl(_part_path(run, shash, round_, c), kept[c])


def _row(candidate: str, recs: list[dict[str, Any]], base_texts: Sequence[str],
         base_fail: np.ndarray, max_examples: int, min_shift: float = 0.0, *,
         judged: np.ndarray | None = None) -> dict[str, Any]:
    """One candidate's counts over its judged new sentences (abstained ones are counted
    apart, ``abstained``) and its judged corpus sentences; a group's also per term
    (``term_counts``: term -> ``n``, ``failures``, and where the invariance test ran
    ``invariance_n``, ``flipped``, over the new sentences holding that term and no other
    of the group's, so the cells are disjoint and deleting the group deleted just that
    term), so that a reader (and :func:`discovery.build_findings`) sees whether its terms
    fail alike; ``sentences`` lists the judged new sentences (``text``, ``failure``)."""
    pattern = ngram_pattern(candidate)
    in_base = np.array([pattern.search(t) is not None for t in base_texts], dtype=bool)
    if judged is not None:
        in_base &= judged
    abstained = sum(1 for x in recs if x.get("abstained"))
    recs = [x for x in recs if not x.get("abstained")]
    paired = [x for x in recs if "task_shift" in x]
    counts: dict[str, Any] = {}
    if paired and len(paired) == len(recs):
        ts = [x["task_shift"] for x in paired]
        rs = [x["reference_shift"] for x in paired]
        controls = [x for x in paired if x.get("control_flipped") is not None]
        counts = {"fixed": sum(x["failure"] and not x["counterfactual_failure"] for x in paired),
                  "broken": sum(x["counterfactual_failure"] and not x["failure"]
                                for x in paired),
                  "flipped": sum(x["flipped"] for x in paired),
                  "invariance_n": len(paired),
                  "control_n": len(controls),
                  "control_flipped": sum(bool(x["control_flipped"]) for x in controls),
                  "task_shift": float(np.mean(ts)), "reference_shift": float(np.mean(rs)),
                  "p_paired": paired_test(ts, rs, min_shift)}
    terms = candidate_terms(candidate)
    if len(terms) > 1:
        each = [ngram_pattern(t) for t in terms]
        holds = [[bool(p.search(x["text"])) for p in each] for x in recs]
        counts["term_counts"] = {t: _term_counts(
            [x for x, h in zip(recs, holds, strict=True) if h[j] and sum(h) == 1],
            invariance=bool(paired) and len(paired) == len(recs)) for j, t in enumerate(terms)}
    return {
        "ngram": candidate,
        "n": len(recs),
        "failures": int(sum(x["failure"] for x in recs)),
        "abstained": abstained,
        **counts,
        "corpus_count": int(in_base.sum()),
        "corpus_failures": int((in_base & base_fail).sum()),
        "examples": [{"text": x["text"], "task_probs": x["task_probs"],
                      "reference_probs": x["reference_probs"],
                      **({"counterfactual": x["counterfactual"],
                          "counterfactual_failure": x["counterfactual_failure"]}
                         if "counterfactual" in x else {})}
                     for x in recs if x["failure"]][:max_examples],
        # every judged new sentence, so a slice defined by a property of the text (a length
        # band, a question) can be read again on them (discovery._finding_sources.replications)
        "sentences": [{"text": x["text"], "failure": bool(x["failure"])} for x in recs],
    }


def _term_counts(recs: Sequence[Mapping[str, Any]], *, invariance: bool) -> dict[str, int]:
    out = {"n": len(recs), "failures": int(sum(bool(x["failure"]) for x in recs))}
    if invariance:
        out.update(invariance_n=len(recs), flipped=int(sum(bool(x["flipped"]) for x in recs)))
    return out


def focus_run(run_dir: str | Path, *, labels: LabelSpace, focus: FocusConfig,
              ranking: RankingConfig, mining: MiningConfig,
              task_models: Sequence[TaskModelConfig], generator: GeneratorConfig,
              seed_docs: Sequence[str], models: FocusModels,
              config_dump: Mapping[str, Any] | None = None, mine_hash: str | None = None,
              progress: bool = True, pool: Mapping[str, str] | None = None,
              slices_upstream: Mapping[str, str | None] | None = None,
              stage_hash: str | None = None) -> dict[str, Any]:
    """The focus stage on a run directory with a current mining stage: with ``focus.select:
    mined`` the candidates are the ``focus.candidates`` n-grams most enriched in the hard
    subset (down to ``focus.min_support``) plus ``focus.ngrams``; with ``balanced`` (the
    default) or ``ucb`` they are chosen by :func:`pool_candidates` from those n-grams and ``pool``
    (e.g. occlusion words and semantic slices' term groups: candidate -> kind, part of the
    stage hash through ``slices_upstream``, the hashes of the stages it came from: see
    :func:`focus_upstream`); see :func:`run_focus_rounds`.

    Args:
        models: the generator backend and the two scorers; ``models.key`` must cover both
            models (e.g. the ranked task model's and the reference's hashes).
        mine_hash: the mine stage hash the caller's config gives; n-grams mined with another
            one are refused.
        stage_hash: the focus stage hash the caller's stage declaration computed (it must
            be :func:`focus_hash` of these arguments): a current stage is then skipped before
            the scores are read (default: computed from them).

    Raises:
        DataError: the scores, hard subset or n-grams are missing or were changed.
        RunDirError: they were made with another config than ``mine_hash``'s.
    """
    from discovery._rank_mine import load_judged
    from discovery._task_models import ranked_task_name

    run = RunDir(run_dir)
    upstream = check_upstream(run, "mine", mine_hash, what="n-grams", command="mine")
    check_upstream(run, "rank", None, what="hard subset", command="rank")
    if stage_hash is not None:
        job = StageJob(run, stage=STAGE, stage_hash=stage_hash, outputs=[FOCUS.path(run.path)])
        if job.current():
            return job.skipped()
    # The base corpus is the judged sentences: the base rate is the slices' one.
    every = load_judged(run.path, labels=labels,
                        task_name=ranked_task_name(ranking, task_models), ranking=ranking)
    c = every.judged()
    index = {cid: i for i, cid in enumerate(c.ids)}
    hard = [index[str(r["id"])] for r in iter_jsonl(HARD.path(run.path))
            if str(r["id"]) in index]
    extra = dict(pool or {})
    upstream = focus_upstream(focus, upstream, slices_upstream or {})
    base = FocusBase(texts=c.texts, task=c.task, reference=c.reference, hard_indices=hard,
                     upstream=upstream, abstain=c.abstain, rule=c.rule,
                     every_text=every.texts)
    candidates, sources = None, None
    if focus.select != "mined":
        candidates, sources = pool_candidates(base, focus, mining, extra)
    return run_focus_rounds(run.path, focus, labels, generator=generator, seed_docs=seed_docs,
                     base=base, models=models, mining=mining, progress=progress,
                     config_dump=dict(config_dump) if config_dump is not None else None,
                     candidates=candidates, sources=sources, stage_hash=stage_hash)


def focus_upstream(focus: FocusConfig, mine_hash: str,
                   slices_upstream: Mapping[str, str | None]) -> str:
    """The upstream hash focus rounds record: the mine stage's, plus (unless ``select: mined``)
    the hashes of the stages whose rows join the candidate pool (``semantic``,
    ``occlusion``, ``labelled``; None where off)."""
    if focus.select == "mined" or not any(slices_upstream.values()):
        return mine_hash
    # A labelled stage that is off leaves the hash as it was before that stage existed.
    return config_hash({"mine": mine_hash, **{k: v for k, v in slices_upstream.items()
                                              if v is not None or k != "labelled"}})


def candidate_pool(run_dir: str | Path, focus: FocusConfig,
                   upstream: Mapping[str, str | None]) -> dict[str, str]:
    """Focus candidates from the finding sources with a pool adapter whose stages are current
    under ``upstream`` (stage -> the hash the caller's config gives it): candidate -> kind,
    each source's significant rows in its evidence order, ``2 * focus.candidates`` of each
    kind at most, the sources in their ``pool_order`` (a name two sources propose keeps the
    first one's kind; none with ``select: mined``)."""
    pool: dict[str, str] = {}
    if focus.select == "mined":
        return pool
    run = RunDir(run_dir)
    for stage, source in sorted(finding_sources().items(), key=lambda kv: kv[1].pool_order):
        expected = upstream.get(stage)
        path = source.artifact.path(run.path)
        if source.pool is None or expected is None or not run.is_current(stage, expected) \
                or not path.is_file():
            continue
        found = source.pool(source.entered(list(iter_jsonl(path))))
        for k in dict.fromkeys(x[1] for x in found):
            for name in [n for n, kk in found if kk == k][:2 * focus.candidates]:
                pool.setdefault(name, k)
    return pool


RARE = 3
"""A candidate in at most this many corpus sentences is skipped by ``balanced`` when earlier
picks cover all of them."""


def pool_candidates(base: FocusBase, cfg: FocusConfig, mining: MiningConfig,
                    pool: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The ``cfg.candidates`` candidates ``cfg.select`` (``balanced`` or ``ucb``, see
    :class:`FocusConfig`) picks from the top mined n-grams (``2 * cfg.candidates`` of them,
    as :func:`select_candidates` mines them) and ``pool`` (candidate -> the kind that
    proposed it, each kind in its own evidence order), then ``cfg.ngrams``. ``balanced``
    reads a candidate's corpus sentences in ``base.every_text`` (the abstained ones too: a
    word the task model leans on in sentences the reference reads no label in is
    occlusion's evidence, and the focus rounds' invariance test can confirm it), ``ucb``
    in ``base.texts`` (its bound is on the judged failure rate). Returns (candidates,
    candidate -> source)."""
    from discovery._stats import wilson_interval

    mined = select_candidates(base.texts, base.hard_indices, n=2 * cfg.candidates,
                              min_support=cfg.min_support,
                              ngram_range=(mining.ngram_min, mining.ngram_max),
                              stopwords=mining.stopwords, prior_strength=mining.prior_strength)
    sources = {c: "ngram" for c in mined}
    for c, kind in pool.items():
        sources.setdefault(c, kind)
    names = list(sources)
    patterns = [ngram_pattern(c) for c in names]

    def hits_in(texts: Sequence[str]) -> list[np.ndarray]:
        return [np.array([p.search(t) is not None for t in texts], dtype=bool)
                for p in patterns]

    if cfg.select == "balanced":
        picked = _balanced(names, sources, hits_in(
            base.texts if base.every_text is None else base.every_text), cfg.candidates)
    else:
        hits = hits_in(base.texts)
        n = np.array([int(h.sum()) for h in hits])
        fail = base.judgement().fails
        k = np.array([int((h & fail).sum()) for h in hits])
        _, high = wilson_interval(k, n)
        order = sorted(range(len(names)), key=lambda i: (-float(high[i]) if n[i] else 0.0, i))
        picked = [i for i in order if n[i]][:cfg.candidates]
    chosen = [names[i] for i in picked]
    for g in cfg.ngrams:
        if g not in chosen:
            chosen.append(g)
            sources.setdefault(g, "user")
    return chosen, {c: sources[c] for c in chosen}


def _balanced(names: Sequence[str], sources: Mapping[str, str], hits: Sequence[np.ndarray],
              limit: int) -> list[int]:
    """Indices of ``names`` picked by the sources in turn (each finding kind's ``turn``,
    :func:`discovery.balanced_turns`, then any other kind), each source's candidates in
    their order (``hits``: each candidate's corpus sentences, as :func:`pool_candidates`
    reads them); a candidate in no sentence, or a rare one (at most :data:`RARE`
    sentences) whose sentences are already covered, or one whose sentences are exactly an
    earlier pick's, is skipped, except that a ``labelled`` candidate in no corpus sentence
    is kept: the labelled data showed it, and generating around it is how the corpus gets
    its sentences. A candidate whose every word is a marker of a property
    (:func:`discovery._slices.shared_property`: "isn't", "don't | won't" are negations)
    that :data:`PROPERTY_PICKS` earlier picks share waits until every queue is spent: the
    findings name such rows as one (:func:`discovery._findings.fold_explained`), and a
    third test of one property is budget the other candidates lack."""
    from discovery._slices import shared_property

    turns = balanced_turns()
    kinds = [*turns, *dict.fromkeys(k for k in sources.values() if k not in turns)]
    queues = {k: [i for i, c in enumerate(names) if sources[c] == k] for k in kinds}
    covered = np.zeros(len(hits[0]) if hits else 0, dtype=bool)
    picked: list[int] = []
    seen: set[bytes] = set()
    props = [shared_property(candidate_terms(c)) for c in names]
    per_prop: dict[str, int] = {}
    waiting: list[int] = []
    while len(picked) < limit and any(queues.values()):
        for k in kinds:
            while queues[k] and len(picked) < limit:
                i = queues[k].pop(0)
                h = hits[i]
                size = int(h.sum())
                key = np.packbits(h).tobytes()
                if not size:
                    if sources[names[i]] != "labelled":
                        continue
                elif key in seen or (size <= RARE and not (h & ~covered).any()):
                    continue
                prop = props[i]
                if prop is not None:
                    if per_prop.get(prop, 0) >= PROPERTY_PICKS:
                        waiting.append(i)
                        continue
                    per_prop[prop] = per_prop.get(prop, 0) + 1
                picked.append(i)
                seen.add(key)
                covered |= h
                break
    return picked + waiting[:limit - len(picked)]
