"""Adaptive focus rounds: a planted failure word is confirmed, a neutral word is not."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from discovery import FocusBase, FocusModels, run_focus_rounds
from discovery._config import FocusConfig
from discovery._focus_rounds import (
    confirm_candidates,
    contains_ngram,
    focus_queries,
    select_candidates,
)
from synth import GeneratorConfig
from synth.core import DataError, LabelSpace, derive_seed
from synth.engines import Generation

LABELS = LabelSpace.of(["negative", "positive"])
GOOD = ("great", "lovely", "fun", "superb")
BAD = ("awful", "dull", "boring", "poor")
FILLER = ("the", "film", "plot", "was", "a", "day", "cast", "music", "scene", "story")
PLANTED = "zorb"


def _score(text: str) -> int:
    words = text.lower().replace(".", " ").split()
    return sum(w in GOOD for w in words) - sum(w in BAD for w in words)


def _probs(texts, *, planted_flip: bool) -> np.ndarray:
    out = []
    for t in texts:
        p = 1 / (1 + np.exp(-2 * _score(t)))
        if planted_flip and contains_ngram(t, PLANTED):
            p = 1 - p  # the task model's planted failure
        out.append([1 - p, p])
    return np.array(out)


class WordBackend:
    """Continuations of random sentiment and filler words, a pure function of each seed."""

    name = "words"

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.seeds: list[int] = []
        self.calls: list[int] = []

    def render_chat(self, user, system=None):
        return user

    def generate(self, prompts, params, seeds):
        self.prompts += list(prompts)
        self.seeds += list(seeds)
        self.calls.append(len(prompts))
        out = []
        for s in seeds:
            rng = random.Random(s)
            words = [rng.choice(GOOD + BAD + FILLER * 2) for _ in range(rng.randint(4, 9))]
            out.append(Generation(" " + " ".join(words) + ". More text", len(words)))
        return out


def _base(n: int = 400, seed: int = 0):
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        words = [rng.choice(GOOD + BAD + FILLER * 3) for _ in range(rng.randint(6, 10))]
        if i % 100 == 7:  # 4 base sentences carry the planted word
            words.insert(2, PLANTED)
        texts.append(" ".join(words) + f" number {i}.")
    task = _probs(texts, planted_flip=True)
    ref = _probs(texts, planted_flip=False)
    div = np.abs(task[np.arange(n), task.argmax(1)] - ref[np.arange(n), task.argmax(1)])
    hard = list(np.argsort(-div, kind="stable")[: n // 10])
    return texts, task, ref, hard


DOCS = [f"we went to see the {PLANTED} and it was a long day at the cinema",
        "the film had a plot and a cast and music all day long",
        f"nobody knew what a {PLANTED} was. the film said nothing"]


def _run(tmp_path, cfg=None, **kw):
    texts, task, ref, hard = _base()
    backend = WordBackend()
    models = FocusModels(backend=backend, task=lambda t: _probs(t, planted_flip=True),
                         reference=lambda t: _probs(t, planted_flip=False), key="toy")
    base = FocusBase(texts=texts, task=task, reference=ref, hard_indices=hard, upstream="u")
    cfg = cfg or FocusConfig(budget=40, candidates=3)
    gen = GeneratorConfig(segment={"min_words": 4, "max_words": 40})
    out = run_focus_rounds(tmp_path, cfg, LABELS, generator=gen, seed_docs=DOCS, base=base,
                    models=models, progress=False, **kw)
    return out, backend


def test_planted_word_is_confirmed_and_neutral_word_is_not(tmp_path):
    out, backend = _run(tmp_path, candidates=[PLANTED, "film"])
    assert out["confirmed"] == [PLANTED]
    rows = [json.loads(line) for line in (tmp_path / "focus.jsonl").read_text().splitlines()]
    by = {r["ngram"]: r for r in rows}
    assert [r["ngram"] for r in rows] == [PLANTED, "film"] and rows[0]["rank"] == 1
    z, f = by[PLANTED], by["film"]
    assert z["q_value"] < 0.05 and z["confirmed"]
    assert f["q_value"] > 0.05 and not f["confirmed"]
    assert z["n"] >= 20 and z["rate"] > 0.5 and z["rate_lo"] > z["base_rate"]
    assert z["base_n"] == 400 and z["corpus_count"] == 4
    assert z["rate_ratio"] == pytest.approx(z["rate"] / z["base_rate"])
    # Every kept sentence contains its candidate; examples are failing sentences.
    assert all(contains_ngram(x["text"], PLANTED) for x in z["examples"]) and z["examples"]
    ex = z["examples"][0]
    assert ex["task_probs"]["negative"] + ex["task_probs"]["positive"] == pytest.approx(1.0)
    assert np.argmax(list(ex["task_probs"].values())) != \
        np.argmax(list(ex["reference_probs"].values()))  # a failure: top labels differ
    assert z["rate_diff"] == pytest.approx(z["rate"] - z["base_rate"])
    # The paired test: deleting the planted word flips the task model alone; "film" not.
    assert z["flipped"] >= 0.5 * z["n"] and z["p_paired"] < 1e-4
    assert z["task_shift"] > 0.3 and abs(z["reference_shift"]) < 0.05
    assert f["flipped"] == 0 and (f["p_paired"] is None or f["p_paired"] > 0.5)
    assert PLANTED not in ex["counterfactual"] and ex["counterfactual_failure"] is False
    # Seeds are derived per (round, candidate, prompt).
    assert backend.seeds[0] == derive_seed(0, "focus", 1, PLANTED, 0)
    assert backend.seeds[40] == derive_seed(0, "focus", 1, "film", 0)
    # Both candidates' prompts in one generate call (at least 2 x batch_size = 64 a call).
    assert backend.calls == [80] and out["prompts"] == 80
    meta = json.loads((tmp_path / "focus.jsonl.meta.json").read_text())
    assert meta["config_hash"] == out["stage_hash"] and meta["candidates"] == 2
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["stages"]["focus"]["stage_hash"] == out["stage_hash"]


def test_rerun_is_skipped_resume_reuses_parts_and_output_is_byte_identical(tmp_path):
    out, _ = _run(tmp_path, candidates=[PLANTED, "film"])
    first = (tmp_path / "focus.jsonl").read_bytes()
    again, backend = _run(tmp_path, candidates=[PLANTED, "film"])
    assert again["skipped"] and backend.prompts == []
    # A killed run: the manifest forgot the stage and one candidate's part is lost.
    parts = sorted((tmp_path / "focus" / ".parts").glob("round1-*.jsonl"))
    assert len(parts) == 2
    parts[0].unlink()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["stages"].pop("focus")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "focus.jsonl").unlink()
    resumed, backend = _run(tmp_path, candidates=[PLANTED, "film"])
    assert not resumed["skipped"] and len(backend.prompts) == 40  # one candidate redone
    assert (tmp_path / "focus.jsonl").read_bytes() == first
    fresh = tmp_path / "fresh"
    _run(fresh, candidates=[PLANTED, "film"])
    assert (fresh / "focus.jsonl").read_bytes() == first


def test_candidates_are_mined_below_min_support_and_rounds_adapt(tmp_path):
    texts, _, _, hard = _base()
    cands = select_candidates(texts, hard, n=3, min_support=2, extra=["film"])
    assert cands[0] == PLANTED and cands[-1] == "film"
    cfg = FocusConfig(budget=20, candidates=3, rounds=2, ngrams=["film"])
    out, backend = _run(tmp_path, cfg)
    rows = [json.loads(line) for line in (tmp_path / "focus.jsonl").read_text().splitlines()]
    assert PLANTED in out["confirmed"]
    # Round 2 spends budget only on unconfirmed candidates above the base rate.
    assert len(backend.prompts) < 2 * 20 * len(rows)
    assert {r["ngram"] for r in rows} >= {PLANTED, "film"}


def test_queries_carry_the_candidate():
    cfg = FocusConfig(budget=5, context_words=2)
    qs = focus_queries(PLANTED, DOCS, cfg, seed=3, round_=1)
    assert all(q.source == "seed" and q.text.endswith(PLANTED) for q in qs)
    assert {q.text for q in qs} <= {f"see the {PLANTED}", f"what a {PLANTED}"}
    qs = focus_queries("spaceship", DOCS, cfg, seed=3, round_=1)
    assert all(q.source == "prompt" and q.text.endswith("spaceship") for q in qs)
    assert focus_queries("spaceship", DOCS, cfg.model_copy(update={"queries": "seed"}),
                         seed=3, round_=1) == []


def test_query_window_and_sampling_seed_are_separate_streams():
    """The window is drawn from derive_rng(seed, "focus-query", r, c, i); the LLM samples with
    derive_seed(seed, "focus", r, c, i): one value no longer does both."""
    docs = ["the film was superb and the ending was superb too. a superb cast.",
            "nothing superb here. but the score is superb, they said.",
            "a dull story with one superb scene"]
    qs = focus_queries("superb", docs, FocusConfig(budget=4, context_words=3), seed=3, round_=1)
    assert [q.text for q in qs] == ["nothing superb", "the score is superb",
                                    "story with one superb", "story with one superb"]
    assert [q.seed for q in qs] == [derive_seed(3, "focus", 1, "superb", i) for i in range(4)]


def test_confirm_candidates_bh_and_zero_counts():
    rows = confirm_candidates([{"ngram": "a", "n": 20, "failures": 15},
                               {"ngram": "b", "n": 20, "failures": 1},
                               {"ngram": "c", "n": 0, "failures": 0}], 10, 1000, 0.05)
    assert [r["ngram"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["confirmed"] and rows[0]["q_value"] < 1e-10
    assert not rows[2]["confirmed"] and rows[2]["rate"] is None and rows[2]["q_value"] == 1.0
    assert rows[1]["q_value"] >= rows[1]["p_value"]


def test_a_candidate_significant_alone_but_not_after_correction_is_supported():
    # Base rate 0.4. "a" fails 10 of 14 new sentences (p ~ 0.02 alone); with four tests, its
    # q-value is above 0.05: supported, not confirmed. "b" fails at the base rate: neither.
    rows = confirm_candidates([{"ngram": "a", "n": 14, "failures": 10},
                               {"ngram": "b", "n": 20, "failures": 8},
                               {"ngram": "c", "n": 20, "failures": 8},
                               {"ngram": "d", "n": 20, "failures": 7}], 400, 1000, 0.05)
    by = {r["ngram"]: r for r in rows}
    assert by["a"]["p_value"] < 0.05 <= by["a"]["q_value"]
    assert by["a"]["supported"] and not by["a"]["confirmed"]
    assert not any(by[k]["supported"] or by[k]["confirmed"] for k in "bcd")
    strong = confirm_candidates([{"ngram": "a", "n": 40, "failures": 35}], 400, 1000, 0.05)
    assert strong[0]["confirmed"] and not strong[0]["supported"]


def test_paired_test_is_evidence_never_a_confirmation_alone():
    from discovery._focus_rounds import paired_test

    # 8 of 40 new sentences fail, the corpus's rate (200 of 1000): the rate test sees
    # nothing; deleting the word moves the task model by 0.4 and the reference by 0 (the
    # paired test is strong), yet the word is not confirmed: its new sentences fail no
    # more often than any others.
    task, ref = [0.4] * 40, [0.0] * 40
    p = paired_test(task, ref, 0.05)
    assert p is not None and p < 1e-6
    assert paired_test(task, ref, 0.5) > 0.5  # not by more than min_shift
    assert paired_test([0.1] * 5, [0.05] * 5, 0.05) is None  # every difference is the margin
    row = {"ngram": "x", "n": 40, "failures": 8}
    plain, paired = confirm_candidates([dict(row)], 200, 1000, 0.05)[0], \
        confirm_candidates([{**row, "p_paired": p}], 200, 1000, 0.05)[0]
    assert not plain["confirmed"] and plain["p_paired"] is None
    assert not paired["confirmed"] and paired["p_paired"] == pytest.approx(p)
    assert paired["p_value"] == paired["p_rate"] == plain["p_value"]
    # a rate significantly above the base rate confirms, with or without the paired test
    strong = confirm_candidates([{"ngram": "y", "n": 40, "failures": 20, "p_paired": 0.9}],
                                200, 1000, 0.05)[0]
    assert strong["confirmed"] and strong["p_value"] < 1e-4


def test_delete_candidate_removes_every_term():
    from discovery._focus_rounds import delete_candidate

    assert delete_candidate("My Uncle met my aunt and my uncle.", "uncle | aunt") == \
        "My met my and my ."
    assert delete_candidate("having seen it, having fun", "having seen") == "it, having fun"


def test_unscored_base_is_refused(tmp_path):
    base = FocusBase(texts=["a b c"], task=np.zeros((0, 2)), reference=np.zeros((0, 2)),
                     hard_indices=[])
    models = FocusModels(backend=WordBackend(), task=lambda t: t, reference=lambda t: t,
                         key="k")
    with pytest.raises(DataError, match="must be scored by both models"):
        run_focus_rounds(tmp_path, FocusConfig(), LABELS, generator=GeneratorConfig(),
                  seed_docs=DOCS, base=base, models=models, progress=False)
    assert not (tmp_path / "manifest.json").exists()


def test_label_conditioned_prompts_fill_their_label_in_focus_rounds():
    """A generator whose template asks for a {label} gets one per focus query (drawn from the
    query's own seed), never the bare placeholder; a chat answer loses its quotes."""
    from discovery._focus_rounds import generate_raw, keep_sentences

    class Chat:
        def __init__(self):
            self.prompts = []

        def render_chat(self, user, system=None):
            return f"<user>{user}</user>"

        def generate(self, prompts, params, seeds):
            self.prompts += list(prompts)
            return [Generation(f'"A superb film, {i}."', 6) for i in range(len(prompts))]

    gen = GeneratorConfig.model_validate({"prompt": {
        "style": "chat", "template": "Write one {label} sentence using: {query}",
        "labels": ["negative", "positive"]}, "segment": {"min_words": 2}})
    qs = focus_queries("superb", DOCS, FocusConfig(budget=12, context_words=2), seed=3,
                       round_=1)
    backend = Chat()
    raw = generate_raw(qs, backend, gen)
    asked = [p.split("Write one ")[1].split(" ")[0] for p in backend.prompts]
    assert set(asked) == {"negative", "positive"} and "{label}" not in "".join(backend.prompts)
    assert generate_raw(qs, Chat(), gen) == raw  # the label is a function of the query's seed
    kept = keep_sentences("superb", qs, raw, gen, set())
    assert kept and all(not k["text"].startswith('"') for k in kept)


def test_control_deletion_deletes_as_many_other_words():
    from discovery._focus_rounds import control_deletion

    text = "so having seen it I loved it a lot"
    got = control_deletion(text, "having seen", 0)
    assert got is not None and "having seen" in got
    assert len(got.split()) == len(text.split()) - 2  # two other words, as many as deleted
    assert control_deletion(text, "having seen", 0) == got  # seeded: the same every time
    assert {control_deletion(text, "having seen", s) for s in range(20)} != {got}
    assert control_deletion("having seen", "having seen", 0) is None  # nothing else to cut
    # met twice, no free run of four words: any four other words
    two = control_deletion("great good movie and good fun is it", "great | good", 3)
    assert two is not None and two.split()[:2] == ["great", "good"] and len(two.split()) == 5


def _inv_row(ngram: str, flipped: int, ctrl: int, *, n: int = 40, failures: int = 20
             ) -> dict:
    return {"ngram": ngram, "n": n, "failures": failures, "flipped": flipped,
            "invariance_n": n, "control_n": n, "control_flipped": ctrl}


def test_invariance_confirms_a_flip_the_failure_rate_cannot_see():
    # A task model at chance (base rate 0.5): a word that flips it fails half its new
    # sentences, the base rate, so the rate test sees nothing. Deleting it changes the task
    # model's label (the reference's staying) on 30 of 40, deleting other words on 2 of 40:
    # confirmed by invariance. "y" flips no more than other words do: not confirmed.
    rows = confirm_candidates([_inv_row("x", 30, 2), _inv_row("y", 2, 2)], 500, 1000, 0.05)
    by = {r["ngram"]: r for r in rows}
    x, y = by["x"], by["y"]
    assert x["confirmed"] and x["confirmed_by"] == "invariance" and rows[0] is x
    assert x["p_rate"] > 0.4 and x["q_invariance"] < 1e-6 and x["q_value"] == x["q_invariance"]
    assert x["invariance_base"] == pytest.approx(4 / 80) and x["invariance_rate"] == 0.75
    assert not y["confirmed"] and y["confirmed_by"] is None and not y["supported"]
    # Without controls there is no base for the flips: nothing is confirmed by them.
    bare = [{k: v for k, v in r.items() if k not in ("control_n", "control_flipped")}
            for r in (_inv_row("x", 30, 2), _inv_row("y", 2, 2))]
    assert not any(r["confirmed"] for r in confirm_candidates(bare, 500, 1000, 0.05))
    # A rate above the base rate confirms by the failure rate first.
    rate = confirm_candidates([_inv_row("z", 30, 2, failures=36)], 500, 1000, 0.05)[0]
    assert rate["confirmed_by"] == "failure rate" and rate["q_value"] == rate["q_rate"]


def test_focus_rows_carry_the_invariance_test_and_its_controls(tmp_path):
    _run(tmp_path, candidates=[PLANTED, "film"])
    rows = {r["ngram"]: r for r in map(json.loads,
                                       (tmp_path / "focus.jsonl").read_text().splitlines())}
    z, f = rows[PLANTED], rows["film"]
    assert z["control_n"] == z["invariance_n"] == z["n"] and f["control_n"] > 0
    assert z["invariance_rate"] > 0.5 > 0.2 > z["invariance_base"] > 0.0
    assert z["p_invariance"] < 1e-6 and f["invariance_rate"] <= z["invariance_base"]
    # The controls are kept in the parts: a stage redone from them scores no sentence again.
    parts = sorted((tmp_path / "focus" / ".parts").glob("round1-*.jsonl"))
    recs = [json.loads(x) for p in parts for x in p.read_text().splitlines()]
    assert recs and all("control_flipped" in x and "control_scheme" in x for x in recs)
    assert all(x["control"] is None or PLANTED not in x["text"] or PLANTED in x["control"]
               for x in recs)
    first = (tmp_path / "focus.jsonl").read_bytes()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["stages"].pop("focus")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "focus.jsonl").unlink()
    called = []
    texts, task, ref, hard = _base()
    models = FocusModels(backend=WordBackend(), task=lambda t: called.append(t) or t,
                         reference=lambda t: called.append(t) or t, key="toy")
    base = FocusBase(texts=texts, task=task, reference=ref, hard_indices=hard, upstream="u")
    run_focus_rounds(tmp_path, FocusConfig(budget=40, candidates=3), LABELS,
                     generator=GeneratorConfig(segment={"min_words": 4, "max_words": 40}),
                     seed_docs=DOCS, base=base, models=models, progress=False,
                     candidates=[PLANTED, "film"])
    assert called == [] and (tmp_path / "focus.jsonl").read_bytes() == first


def test_invariance_applies_only_where_the_reference_says_the_word_carries_no_label():
    # Deleting "best" moves the reference's probability of the task model's label by 0.10
    # on average (it carries the label, the reference just keeps its label more often than
    # the task model): its flips are no failures. "x" moves the reference by 0.01: tested.
    rows = confirm_candidates([{**_inv_row("best", 30, 2), "reference_shift": 0.10},
                               {**_inv_row("x", 30, 2), "reference_shift": 0.01}],
                              500, 1000, 0.05, 0.05)
    by = {r["ngram"]: r for r in rows}
    assert not by["best"]["confirmed"] and by["best"]["invariance_applies"] is False
    assert "p_invariance" not in by["best"] and not by["best"]["supported"]
    assert by["x"]["confirmed_by"] == "invariance" and by["x"]["invariance_applies"]


def test_a_group_s_queries_carry_each_of_its_words_in_turn():
    """A group is a hypothesis about each of its words: the seed documents hold "galli" often
    and "milani" never, yet the queries carry galli, milani, thati in turn (seed windows
    where a document holds the word, the prompt form where none does)."""
    docs = ["crash his wife (Ida Galli) to the other side.", "Ida Galli stars.",
            "A thati cast.", "plain text here."]
    qs = focus_queries("galli | milani | thati", docs, FocusConfig(budget=6, context_words=1),
                       seed=3, round_=1)
    words = [q.text.split()[-1].lower() for q in qs]
    assert words == ["galli", "milani", "thati"] * 2
    assert [q.source for q in qs] == ["seed", "prompt", "seed"] * 2
    # queries: seed never writes the prompt form: a word no document holds takes the group's
    seed = focus_queries("galli | milani", docs, FocusConfig(budget=4, queries="seed"),
                         seed=3, round_=1)
    assert [q.source for q in seed] == ["seed"] * 4
    assert all("galli" in q.text.lower() for q in seed)
    # ... any of its words' windows, not one word's
    mixed = focus_queries("zzz | thati | galli", docs,
                          FocusConfig(budget=9, queries="seed", context_words=0),
                          seed=3, round_=1)
    words = [q.text.lower() for q in mixed]
    assert words[1::3] == ["thati"] * 3 and words[2::3] == ["galli"] * 3
    assert set(words[0::3]) <= {"thati", "galli"}
    # one word: the queries are what they were before groups took turns (pinned)
    assert [(q.text, q.source) for q in focus_queries("galli", docs, FocusConfig(budget=3),
                                                      seed=3, round_=1)] == \
        [("crash his wife (Ida Galli", "seed"), ("crash his wife (Ida Galli", "seed"),
         ("Ida Galli", "seed")]
    assert [(q.text, q.source) for q in focus_queries(
        "galli", docs, FocusConfig(budget=3, queries="prompt"), seed=3, round_=1)] == \
        [("crash his wife (Ida galli", "prompt"), ("Ida Galli stars. galli", "prompt"),
         ("plain text here. galli", "prompt")]


def test_a_group_row_counts_each_of_its_words():
    from discovery._focus_stage import _row

    probs = {"task_probs": {}, "reference_probs": {}}
    recs = [{"text": "Ida Galli was there.", "failure": True, **probs},
            {"text": "Milani was there.", "failure": True, **probs},
            {"text": "Milani again.", "failure": False, **probs},
            {"text": "A thati cast.", "failure": False, "abstained": True, **probs},
            # holds two of its words: in neither word's cell (the cells are disjoint)
            {"text": "Galli and Milani.", "failure": True, **probs}]
    row = _row("galli | milani | thati", recs, ["plain."], np.array([False]), 3)
    assert row["n"] == 4 and row["failures"] == 3
    assert row["term_counts"] == {"galli": {"n": 1, "failures": 1},
                                  "milani": {"n": 2, "failures": 1},
                                  "thati": {"n": 0, "failures": 0}}
    assert "term_counts" not in _row("galli", recs[:1], ["plain."], np.array([False]), 3)


def test_a_group_names_each_term_once():
    from discovery._focus_rounds import candidate_terms

    assert candidate_terms("Galli | galli | milani") == ["Galli", "milani"]
    assert candidate_terms("a | b | a |") == ["a", "b"]
    assert candidate_terms("just") == ["just"]
    qs = focus_queries("Galli | galli | milani", ["Ida Galli stars."],
                       FocusConfig(budget=4, context_words=0), seed=3, round_=1)
    assert [q.text.lower() for q in qs] == ["galli", "milani"] * 2
