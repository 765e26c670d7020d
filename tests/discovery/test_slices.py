"""Semantic slices, metadata slices and per-word occlusion on tiny inline corpora with
planted failures."""

from __future__ import annotations

import numpy as np
import pytest

from discovery._occlusion import OcclusionScorer, deletions, memo_embed, related_clusters
from discovery._slices import (
    METADATA,
    MetadataSlicer,
    SemanticSlicer,
    shared_property,
    slice_table,
)
from synth.core import DataError

FOODS = ["pizza", "sushi", "tacos", "curry", "ramen", "lasagna", "dumplings", "burritos",
         "pancakes", "paella", "falafel", "risotto"]
FOOD_SENTENCES = [
    "We ate pizza for dinner at the little place downtown.",
    "Grandma's sushi rolls were on the table by six.",
    "The tacos at that stand come with extra lime.",
    "He spooned the hot curry over a bowl of rice.",
    "A steaming bowl of ramen is perfect after work.",
    "Her lasagna needs another ten minutes in the oven.",
    "They steamed dumplings for the whole family.",
    "Two burritos and a soda cost less than a movie ticket.",
    "Sunday mornings mean pancakes with maple syrup.",
    "The paella was cooked in a huge iron pan.",
    "I grabbed falafel with hummus on the way home.",
    "Stir the risotto slowly and add the stock bit by bit.",
]
OTHER = [
    "The train to the city was late again this morning.",
    "She parked the car in the garage before the storm.",
    "Our team won the football match on Saturday.",
    "The guitar solo at the concert was very loud.",
    "He fixed the broken laptop with a new battery.",
    "It rained all afternoon and the streets flooded.",
    "The meeting at the office lasted three hours.",
    "They painted the old fence a bright blue colour.",
    "The museum opened a new exhibition on ancient Egypt.",
    "My phone screen cracked when I dropped it.",
    "The basketball game went into overtime.",
    "A cold wind blew across the frozen lake.",
    "The orchestra rehearsed the symphony twice.",
    "The bus driver waved at the children.",
    "We planted tomatoes in the garden in spring.",
    "The printer in the office jammed again.",
    "Snow covered the mountains by December.",
    "The marathon runners crossed the bridge at noon.",
    "The band released their second album last year.",
    "The plane landed safely despite the fog.",
    "The tennis final was cancelled because of rain.",
    "He repaired the bicycle chain in the shed.",
    "The library extended its opening hours.",
    "Thunder shook the windows during the night.",
]


def test_slice_table_matches_scipy_on_a_two_by_two() -> None:
    members = np.array([[1, 1, 1, 0, 0, 0, 0, 0]], dtype=bool)
    fail = np.array([1, 1, 0, 0, 0, 0, 1, 0], dtype=bool)
    t = slice_table(members, fail)
    assert (int(t["n"][0]), int(t["failures"][0])) == (3, 2)
    assert t["rate"][0] == pytest.approx(2 / 3)
    assert t["base_rate"][0] == pytest.approx(1 / 5)
    # scipy.stats.fisher_exact([[2, 1], [1, 4]], alternative="greater").pvalue
    assert t["p_value"][0] == pytest.approx(0.2857142857142857)
    assert (t["low"][0], t["high"][0]) == pytest.approx((0.2076596, 0.9385081), abs=1e-6)


def test_semantic_slicer_finds_a_planted_blob_and_its_words() -> None:
    # Two clean blobs of 10 and a failing blob of 6 in 2-d; the failing blob's words are
    # its own.
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0]] * 10 + [[5.0, 0.0]] * 10 + [[0.0, 5.0]] * 6)
    emb = centers + rng.normal(0, 0.1, centers.shape)
    texts = ["a grey stone wall"] * 10 + ["a quiet blue lake"] * 10 + [
        f"spicy {w} stew" for w in ["bean", "lentil", "pork", "beef", "fish", "corn"]]
    fail = np.array([0] * 9 + [1] + [0] * 10 + [1] * 6, dtype=bool)
    s = SemanticSlicer(size=9, seed=0, max_terms=2, max_examples=3).fit(
        texts, emb, fail, ids=[f"s{i}" for i in range(26)])
    top = s.slices_[0]
    assert (top["n"], top["failures"], top["significant"]) == (6, 6, True)
    assert top["terms"] == ["spicy", "stew"]
    assert len(top["example_ids"]) == 3 and all(int(x[1:]) >= 20 for x in top["example_ids"])
    assert top["base_rate"] == pytest.approx(1 / 20)
    assert [r["significant"] for r in s.slices_[1:]] == [False, False]


@pytest.mark.integration
def test_minilm_groups_rare_food_words_that_each_fail_once() -> None:
    """The planted group-of-words failure: 12 foods, each seen once, all failing; n-gram
    counting sees 12 singletons, the embedding sees one topic."""
    from discovery._embed import SentenceEmbedder

    texts = FOOD_SENTENCES + OTHER
    fail = np.array([True] * len(FOOD_SENTENCES) + [i % 8 == 0 for i in range(len(OTHER))])
    embedder = SentenceEmbedder()
    emb = embedder.embed(texts)
    assert emb.shape == (36, 384)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    s = SemanticSlicer(size=9, seed=0).fit(texts, emb, fail, embed_words=embedder.embed)
    top = s.slices_[0]
    food_ids = {str(i) for i in range(12)}
    assert top["significant"]
    assert top["failures"] >= 8 and top["rate"] >= 0.8
    assert set(top["example_ids"]) <= food_ids
    assert s.slices_[1]["significant"] is False
    assert top["terms"][:4] == ["burritos", "cooked", "dinner", "dumplings"]


def test_embedding_batches_do_not_change_the_order() -> None:
    from discovery._embed import SentenceEmbedder

    texts = ["short one.", "a much longer sentence about the weather in the hills.",
             "mid size text"]
    a = SentenceEmbedder(batch_size=1).embed(texts)
    b = SentenceEmbedder(batch_size=3).embed(texts)
    assert np.allclose(a, b, atol=1e-5)
    assert float(a[0] @ a[1]) < 0.99


def test_metadata_slicer_finds_failing_questions() -> None:
    texts = [f"Is the film number {i} any good?" for i in range(6)] + [
        f"The film number {i} was fine." for i in range(14)]
    fail = np.array([True] * 6 + [False] * 13 + [True])
    m = MetadataSlicer(min_size=3, max_examples=2).fit(
        texts, fail, p_wrong=np.where(fail, 0.7, 0.2) + np.linspace(0, 0.1, 20))
    by = {r["slice"]: r for r in m.slices_}
    q = by["question mark"]
    assert (q["n"], q["failures"], q["base_rate"]) == (6, 6, pytest.approx(1 / 14))
    assert q["significant"] and q["example_ids"] == ["5", "4"]
    assert by["question"]["n"] == 6
    assert "exclamation" not in by  # no sentence has one
    assert "digits" not in by  # every sentence has one: not a slice
    # With p_wrong the test is on it (Welch): a reference leaning against the task model
    # on the questions, without one confident failure, still makes them a slice.
    leaning = MetadataSlicer(min_size=3).fit(
        texts, np.zeros(20, dtype=bool), p_wrong=np.r_[np.full(6, 0.55), np.full(14, 0.3)]
        + np.linspace(0, 0.02, 20))
    q = {r["slice"]: r for r in leaning.slices_}["question mark"]
    assert q["significant"] and q["failures"] == 0
    assert q["mean_p_wrong"] > q["base_p_wrong"]


def test_metadata_slicer_finds_failing_first_person_sentences() -> None:
    texts = [f"I think film {i} was fine." for i in range(3)] + [
        f"My take: film {i} is ok." for i in range(3)] + [
        f"Film {i} was fine." for i in range(12)] + ["Image 3 of the US film."]
    fail = np.array([True] * 6 + [False] * 13)
    by = {r["slice"]: r for r in MetadataSlicer(min_size=3).fit(texts, fail).slices_}
    assert (by["first person"]["n"], by["first person"]["failures"]) == (6, 6)
    assert by["first person"]["significant"] and "second person" not in by


def test_metadata_slicer_reads_links_mentions_hashtags_and_emoji() -> None:
    # Tweets: the ones with a link fail; mentions, hashtags and emoji are slices of their own.
    texts = [f"delayed again http://t.co/x{i}" for i in range(5)] + [
        f"@united flight {i} was fine #travel" for i in range(5)] + [
        f"flight {i} was fine \U0001F600" for i in range(4)] + [
        f"flight {i} was fine." for i in range(6)]
    fail = np.array([True] * 5 + [False] * 15)
    by = {r["slice"]: r for r in MetadataSlicer(min_size=3).fit(texts, fail).slices_}
    assert (by["url"]["n"], by["url"]["failures"]) == (5, 5) and by["url"]["significant"]
    assert (by["mention"]["n"], by["hashtag"]["n"], by["emoji"]["n"]) == (5, 5, 4)
    assert not by["hashtag"]["significant"]
    # what is one, as tweets write it
    for name, text in [("url", "www.site.com"), ("url", "HTTP://X.COM"), ("mention", "RT @user:"),
                       ("mention", ".@delta why"), ("hashtag", "(#fail)"),
                       ("hashtag", "#1K followers"), ("emoji", "\u2764\ufe0f it"),
                       ("emoji", "\U0001F44D\U0001F3FD"), ("emoji", "\U0001F1FA\U0001F1F8"),
                       ("emoji", "\u2b50 great"), ("emoji", "1\ufe0f\u20e3 first")]:
        assert METADATA[name](text), (name, text)
    # what is not: an e-mail address, an issue number, HTML entities, C#, rating stars, a
    # check mark and a heart written as text
    for text in ["mail a@b.com", "see issue #3", "it&#39;s", "it&#x27;s", "C# code", "www",
                 "http", "\u2605\u2605\u2605\u2606", "\u2713 done", "\u2665 love"]:
        assert not any(METADATA[k](text) for k in ("url", "mention", "hashtag", "emoji")), text
    # an emoji token (the labelled data's tokens keep one) lies inside the emoji slice; no
    # finder's token holds a hashtag's "#"
    assert shared_property(["\U0001F600"]) == "emoji" and shared_property(["fail"]) is None


def test_slicers_refuse_misaligned_failures() -> None:
    with pytest.raises(DataError, match="3 sentences but 2 failure flags"):
        MetadataSlicer().fit(["a", "b", "c"], np.array([True, False]))


def test_deletions_skip_stopwords_and_keep_the_rest() -> None:
    assert deletions("The pizza wasn't bad at all.", frozenset({"the", "at", "all"})) == [
        ("pizza", "The wasn't bad at all."), ("wasn't", "The pizza bad at all."),
        ("bad", "The pizza wasn't at all.")]


def _keyword(trigger: bool):  # noqa: ANN202
    pos, neg = {"good", "great", "lovely"}, {"bad", "awful", "boring"}

    def fn(texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            ws = t.lower().replace(".", " ").split()
            s = sum(w in pos for w in ws) - sum(w in neg for w in ws)
            if trigger:
                s -= 3 * ws.count("pizza")
            p = min(0.95, max(0.05, 0.5 + 0.2 * s))
            out.append([1 - p, p])
        return np.array(out)
    return fn


def test_occlusion_surfaces_a_trigger_seen_twice_and_not_a_sentiment_word() -> None:
    texts = ["a good evening with pizza and friends.", "the pizza night was great fun.",
             "a bad film with a boring plot.", "the good actors made it lovely.",
             "an awful show on a rainy night.", "a good book on a quiet night.",
             "the great music filled the hall.", "a boring talk about taxes."]
    task_fn, ref_fn = _keyword(True), _keyword(False)
    task, ref = task_fn(texts), ref_fn(texts)
    fail = task.argmax(1) != ref.argmax(1)
    assert fail.tolist() == [True, True] + [False] * 6
    calls: list[int] = []

    def counted(x: list[str]) -> np.ndarray:
        calls.append(len(x))
        return ref_fn(x)

    o = OcclusionScorer(reference_words=3, reference_sentences=1).fit(
        texts, task, ref, fail, task_fn=task_fn, reference_fn=counted,
        ids=[f"c{i}" for i in range(8)])
    top = o.words_[0]
    assert top["word"] == "pizza"
    assert (top["n"], top["failures"], top["checked"]) == (2, 2, 1)
    assert top["task_shift"] == pytest.approx(0.6)
    assert top["reference_shift"] == pytest.approx(0.0)
    assert top["example_ids"] == ["c0", "c1"]
    assert calls == [3]  # one batched reference call, capped at 3 words x 1 sentence
    assert o.reference_calls_ == 3
    words = [r["word"] for r in o.words_]
    assert "good" not in words[:1]


@pytest.mark.parametrize("section,field,value", [
    ("slices", "failure", "confident"), ("slices", "confidence", 0.6),
    ("focus", "failure", "hard_rule"), ("focus", "confidence", 0.7),
    ("ranking", "require_disagreement", False)])
def test_removed_failure_fields_are_refused_with_the_fix(section: str, field: str,
                                                         value: object) -> None:
    from pydantic import ValidationError

    from discovery import FocusConfig, RankingConfig, SlicesConfig

    model = {"slices": SlicesConfig, "focus": FocusConfig, "ranking": RankingConfig}[section]
    with pytest.raises(ValidationError, match=rf"{section}\.{field} was removed: .*remove "
                                              r"the field"):
        model.model_validate({field: value})


def test_ucb_tests_a_rare_candidate_with_strong_evidence_first() -> None:
    from discovery import FocusBase, FocusConfig, MiningConfig, pool_candidates

    # "zorb" in 2 sentences, both failing; "movie" in 12, 5 failing (a higher count, a
    # lower upper bound: 2/2 -> 1.0, 5/12 -> 0.68).
    texts = ["the zorb was here.", "a zorb again."] + [
        f"the movie number {i}." for i in range(12)] + [f"plain line {i}." for i in range(6)]
    fail = [True, True] + [i < 5 for i in range(12)] + [False] * 6
    task = np.array([[0.9, 0.1]] * len(texts))
    ref = np.array([[0.1, 0.9] if f else [0.9, 0.1] for f in fail])
    base = FocusBase(texts=texts, task=task, reference=ref,
                     hard_indices=[i for i, f in enumerate(fail) if f])
    cfg = FocusConfig(candidates=1, min_support=3, select="ucb")  # "zorb" unmined
    chosen, sources = pool_candidates(base, cfg, MiningConfig(), {"zorb": "word"})
    assert (chosen, sources) == (["zorb"], {"zorb": "word"})
    chosen, _ = pool_candidates(base, cfg, MiningConfig(), {})
    assert chosen == ["the movie number"]  # without the pool, only mined n-grams compete


def test_findings_rank_dedupe_and_schema() -> None:
    from discovery import build_findings

    texts = ["pizza night.", "more pizza.", "a dull film.", "plain.", "plain again."]
    ids = [f"c{i}" for i in range(5)]
    fail = np.array([True, True, False, False, False])
    pw = np.array([0.7, 0.9, 0.1, 0.2, 0.1])
    words = [{"word": "pizza", "n": 2, "failures": 2, "base_rate": 0.0, "task_shift": 0.5,
              "reference_shift": 0.0, "z": 4.0, "q_value": 0.01,
              "example_ids": ["c1", "c0"]},
             {"word": "dull", "n": 1, "failures": 0, "base_rate": 0.5, "task_shift": 0.3,
              "reference_shift": 0.2, "z": 1.0, "q_value": 0.04, "example_ids": []}]
    focus = [{"ngram": "dull", "n": 10, "failures": 9, "base_rate": 0.4, "q_value": 0.001,
              "confirmed": True, "source": "word", "examples": [{"text": "so dull."}]}]
    rows = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=pw, rule="r",
                          rows={"occlusion": words, "focus": focus}, focus_rule="fr")
    assert [(r["id"], r["rank"], r["kind"], r["name"]) for r in rows] == [
        ("f0001", 1, "focus", "dull"), ("f0002", 2, "word", "pizza")]
    assert rows[0]["confirmed"] and rows[0]["corpus_n"] == 1 and rows[0]["source"] == "word"
    assert rows[1]["example_ids"] == ["c1", "c0"]
    assert rows[1]["score"] == pytest.approx(rows[1]["low"] - 0.0)
    assert rows[0]["reason"] == ("focus rounds: 9 of 10 new sentences fail (fr) vs the "
                                 "corpus's 0.40, q=0.001")


def _flip_on(words: set[str], min_words: int = 0):  # noqa: ANN202
    """A task model: 0.8 positive, flipped to 0.8 negative on any of ``words`` or on a
    sentence of at least ``min_words`` words (0: never)."""
    def fn(texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            ws = set(t.lower().replace(".", " ").split())
            flip = bool(ws & words) or (min_words > 0 and len(t.split()) >= min_words)
            out.append([0.8, 0.2] if flip else [0.2, 0.8])
        return np.array(out)
    return fn


def _family_embed(words: list[str]) -> np.ndarray:
    """Unit vectors: the family words along one axis, every other word its own axis."""
    family = {"uncle", "aunt", "cousin", "niece"}
    out = np.zeros((len(words), len(words) + 1))
    for i, w in enumerate(words):
        out[i, 0 if w in family else i + 1] = 1.0
    return out


def test_occlusion_pools_related_rare_words_into_a_group() -> None:
    family = {"uncle", "aunt", "cousin", "niece"}
    texts = ["my uncle came round.", "her aunt sang loudly.", "a cousin phoned today.",
             "the niece painted walls."] + [f"plain walk number {w} today." for w in
                                            ("one", "two", "three", "four", "five", "six")]
    task_fn, ref_fn = _flip_on(family), _flip_on(set())
    task, ref = task_fn(texts), ref_fn(texts)
    fail = task.argmax(1) != ref.argmax(1)
    o = OcclusionScorer(reference_words=10, group_min_z=0.5).fit(
        texts, task, ref, fail, task_fn=task_fn, reference_fn=ref_fn, embed_fn=_family_embed)
    groups = [r for r in o.words_ if r["kind"] == "group"]
    assert [sorted(g["terms"]) for g in groups] == [sorted(family)]
    g = groups[0]
    assert g["n"] == 4 and g["significant"]
    assert g["z"] > max(r["z"] for r in o.words_ if r["kind"] == "word")
    assert g["word"] == " | ".join(g["terms"])
    # A cluster that says less than its best word is no group: "uncle" flips the model in
    # three sentences, its neighbour "aunt" barely moves it; pooled, the evidence is weaker.
    def uncle_fn(xs: list[str]) -> np.ndarray:
        return np.array([[0.8, 0.2] if "uncle" in x else [0.18, 0.82] if "aunt" in x
                         else [0.2, 0.8] for x in xs])

    texts2 = ["my uncle came round.", "an uncle sang loudly.", "the uncle phoned today.",
              "her aunt came round.", "an aunt sang loudly.", "the aunt phoned today."] + \
        texts[4:]
    t2, r2 = uncle_fn(texts2), ref_fn(texts2)
    weak = OcclusionScorer(reference_words=10, group_min_z=-10.0).fit(
        texts2, t2, r2, t2.argmax(1) != r2.argmax(1), task_fn=uncle_fn, reference_fn=ref_fn,
        embed_fn=_family_embed)
    assert {r["word"] for r in weak.words_} >= {"uncle", "aunt"}
    assert not [r for r in weak.words_ if r["kind"] == "group"]
    # Without an encoder there are no groups.
    plain = OcclusionScorer(reference_words=10, group_min_z=0.5).fit(
        texts, task, ref, fail, task_fn=task_fn, reference_fn=ref_fn)
    assert all(r["kind"] == "word" for r in plain.words_)


def _names_embed(vocabulary: int, names: list[str], hub: str = "hub", hub_near: int = 3
                 ) -> tuple[list[str], object]:
    """A vocabulary of ``vocabulary`` unrelated words (random directions, cosine near 0),
    ``names`` at cosine 0.32-0.41 of each other (graded: below the 0.45 threshold, yet each
    name's nearest words are the other names, as first names in MiniLM), and ``hub``: at 0.42
    of the first name (its nearest word), with ``hub_near`` vocabulary words nearer to it
    (0.5): the first name is at rank ``hub_near`` among the hub's neighbours."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(vocabulary)]
    dim = vocabulary + len(names) + 70
    vec = {w: rng.standard_normal(dim) / np.sqrt(dim) for w in words}
    axis = np.eye(dim)
    for i, w in enumerate(names):  # one shared axis, more of it for later names
        share = 0.32 + 0.03 * i
        vec[w] = np.sqrt(share) * axis[0] + np.sqrt(1 - share) * axis[-1 - i]
    # the hub: 0.42 of the first name, and 0.5 of hub_near vocabulary words (each on an
    # axis of its own and the hub's other axis)
    vec[hub] = 0.42 * vec[names[0]] + np.sqrt(1 - 0.42**2) * axis[-30]
    a = 0.5 / np.sqrt(1 - 0.42**2)
    for i, w in enumerate(words[:hub_near]):
        vec[w] = a * axis[-30] + np.sqrt(1 - a * a) * axis[-31 - i]
    calls: list[int] = []

    def embed(ws: list[str]) -> np.ndarray:
        calls.append(len(ws))
        out = np.array([vec[w] for w in ws])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    embed.calls = calls  # type: ignore[attr-defined]
    return words, embed


def test_mutual_nearest_neighbours_join_words_below_the_cosine_threshold() -> None:
    names = ["george", "john", "richard", "steven"]
    vocab, embed = _names_embed(400, names)
    emb = embed([*names, "hub", "w0"])  # type: ignore[operator]
    cos = emb @ emb.T
    assert cos[:4, :4][np.triu_indices(4, 1)].max() < 0.45  # no name pair at the threshold
    assert 0.4 < cos[0, 4] < 0.45 and cos[4, 5] > cos[4, 0]  # the hub: nearer w0 than george
    words = [*names, "hub", "w100", "w200", "george"]  # a repeated word is one word
    kw = dict(similarity=0.45, min_words=2, vocabulary=[*vocab, *names, "hub"])
    # Cosine alone is under the threshold: no cluster.
    assert related_clusters(words, embed, neighbours=0, **kw) == []
    # Each name's nearest words of the vocabulary are the other names: one cluster; the
    # unrelated words and the hub stay out (in 405 words the 1% cap makes 25 neighbours 4).
    assert related_clusters(words, embed, neighbours=25, **kw) == [names]
    # Mutual means both ways: the hub is george's nearest word, george is the hub's 4th
    # (rank 3): linked with 4 neighbours, not with 3.
    pair = ["george", "hub"]
    assert related_clusters(pair, embed, neighbours=3, **kw) == []
    assert related_clusters(pair, embed, neighbours=4, **kw) == [pair]
    # With too few neighbours the farthest pairs are not mutual: a name can fall out.
    assert related_clusters(words, embed, neighbours=1, **kw) != [names]
    # In a vocabulary of under 100 words every word is near every other: no neighbour link,
    # and the vocabulary is not embedded at all.
    small, embed_small = _names_embed(60, names)
    assert related_clusters(words[:4], embed_small, neighbours=25, similarity=0.45,
                            min_words=2, vocabulary=small + names) == []
    assert embed_small.calls == [4]  # type: ignore[attr-defined]


def test_memo_embed_embeds_each_word_once() -> None:
    _, embed = _names_embed(10, ["a", "b"])
    memo = memo_embed(embed)
    first = memo(["a", "w1", "a"])
    again = memo(["w1", "b"])
    assert embed.calls == [2, 1]  # type: ignore[attr-defined]
    assert np.allclose(first[1], again[0]) and np.allclose(first[0], first[2])


def test_occlusion_checks_a_task_side_group_that_no_word_of_which_would_reach() -> None:
    # Two words seen twice each fill the reference's budget of two words; the family words
    # (once each) are weaker alone, so only the task-side groups get them checked.
    family = {"uncle", "aunt", "cousin", "niece"}
    texts = ["my uncle came round.", "her aunt sang loudly.", "a cousin phoned today.",
             "the niece painted walls.", "zorb again here.", "more zorb there.",
             "blip goes off.", "the blip again."] + [
        f"plain walk number {w} today." for w in ("one", "two", "three", "four", "five")]
    task_fn, ref_fn = _flip_on(family | {"zorb", "blip"}), _flip_on(set())
    task, ref = task_fn(texts), ref_fn(texts)
    fail = task.argmax(1) != ref.argmax(1)

    def fit(groups: int) -> OcclusionScorer:
        return OcclusionScorer(reference_words=2, group_min_z=0.5,
                               reference_groups=groups).fit(
            texts, task, ref, fail, task_fn=task_fn, reference_fn=ref_fn,
            embed_fn=_family_embed)

    alone = fit(0)
    assert {r["word"] for r in alone.words_} == {"zorb", "blip"}
    assert alone.reference_calls_ == 4
    grouped = fit(5)
    assert {r["word"] for r in grouped.words_ if r["kind"] == "word"} == \
        {"zorb", "blip"} | family
    assert grouped.reference_calls_ == 8
    assert [sorted(r["terms"]) for r in grouped.words_ if r["kind"] == "group"] == \
        [sorted(family)]


def test_occlusion_reads_abstained_sentences_as_evidence_never_as_counts() -> None:
    # "zorb" flips the task model in three sentences the reference abstains on (no label
    # applies) and in one judged sentence, where it fails.
    texts = ["zorb in the hall.", "a zorb on the road.", "the zorb was late.",
             "what a zorb film."] + [f"plain walk number {w} today." for w in
                                     ("one", "two", "three", "four", "five", "six")]
    task_fn, ref_fn = _flip_on({"zorb"}), _flip_on(set())
    task, ref = task_fn(texts), ref_fn(texts)
    judged = np.array([False, False, False] + [True] * 7)
    fail = (task.argmax(1) != ref.argmax(1)) & judged
    o = OcclusionScorer(reference_words=10).fit(texts, task, ref, fail, task_fn=task_fn,
                                                reference_fn=ref_fn, judged=judged)
    row = next(r for r in o.words_ if r["word"] == "zorb")
    assert (row["n"], row["failures"], row["abstained"], row["rate"]) == (1, 1, 3, 1.0)
    assert row["example_ids"] == ["3"] and row["significant"]
    assert row["base_rate"] == 0.0  # over the 6 other judged sentences
    # judged alone, the word has one deletion: weaker evidence
    alone = OcclusionScorer(reference_words=10).fit(
        texts[3:], task[3:], ref[3:], fail[3:], task_fn=task_fn, reference_fn=ref_fn)
    assert next(r for r in alone.words_ if r["word"] == "zorb")["z"] < row["z"]
    with pytest.raises(ValueError, match="abstained sentence cannot fail"):
        OcclusionScorer().fit(texts, task, ref, task.argmax(1) != ref.argmax(1),
                              task_fn=task_fn, reference_fn=ref_fn, judged=judged)


def test_occlusion_reads_a_shift_against_its_sentence() -> None:
    # Sentences of 7+ words are flipped: deleting any word of a 7-word sentence unflips it,
    # which says nothing about the word. Centred, no word of those sentences stands out.
    texts = ["red cars drive past slow trucks daily.", "blue boats sail past green islands "
             "daily.", "small dogs bark.", "tall trees sway.", "cold rain falls.",
             "warm sun shines."]
    task_fn = _flip_on(set(), min_words=7)
    ref_fn = _flip_on(set())
    task, ref = task_fn(texts), ref_fn(texts)
    fail = task.argmax(1) != ref.argmax(1)
    raw = OcclusionScorer(centre=False).fit(texts, task, ref, fail, task_fn=task_fn,
                                            reference_fn=ref_fn)
    centred = OcclusionScorer().fit(texts, task, ref, fail, task_fn=task_fn,
                                    reference_fn=ref_fn)
    assert raw.words_ and raw.words_[0]["task_shift"] == pytest.approx(0.6)
    assert not [r for r in centred.words_ if r["significant"]]


def test_occlusion_names_the_phrase_a_failure_sits_on() -> None:
    # "having seen" flips the model; "having" alone does not.
    texts = [f"having seen {w} there." for w in ("boats", "cars", "birds", "clouds")] + [
        f"having {w} there." for w in ("boats", "cars", "birds", "clouds")] + [
        f"plain {w} line." for w in ("boats", "cars", "birds", "clouds")]

    def task_fn(xs: list[str]) -> np.ndarray:
        return np.array([[0.8, 0.2] if "having seen" in x else [0.2, 0.8] for x in xs])

    ref_fn = _flip_on(set())
    task, ref = task_fn(texts), ref_fn(texts)
    fail = task.argmax(1) != ref.argmax(1)
    o = OcclusionScorer(reference_words=10).fit(texts, task, ref, fail, task_fn=task_fn,
                                                reference_fn=ref_fn)
    phrases = {r["word"]: r for r in o.words_ if r["kind"] == "phrase"}
    assert "having seen" in phrases and phrases["having seen"]["n"] == 4
    assert "having boats" not in phrases  # seen in one sentence only


def test_balanced_selection_lets_sources_take_turns_and_skips_covered_rare_ones() -> None:
    from discovery import FocusBase, FocusConfig, MiningConfig, pool_candidates

    texts = ["my uncle and aunt.", "the niece came.", "an odd zorb.", "zorb twice."] + [
        f"the movie number {i}." for i in range(8)] + [f"plain line {i}." for i in range(6)]
    fail = [True] * 4 + [True] * 4 + [False] * 4 + [False] * 6
    task = np.array([[0.9, 0.1]] * len(texts))
    ref = np.array([[0.1, 0.9] if f else [0.9, 0.1] for f in fail])
    base = FocusBase(texts=texts, task=task, reference=ref,
                     hard_indices=[i for i, f in enumerate(fail) if f])
    pool = {"uncle": "word", "aunt": "word", "zorb": "word",
            "uncle | aunt | niece": "group"}
    cfg = FocusConfig(candidates=4, min_support=3)
    chosen, sources = pool_candidates(base, cfg, MiningConfig(), pool)
    # word, group, n-gram, then the word turn again: "aunt" is in the group's sentences
    # (rare and covered), so "zorb" is next.
    assert chosen == ["uncle", "uncle | aunt | niece", "the movie number", "zorb"]
    assert sources["uncle | aunt | niece"] == "group"
    ucb, _ = pool_candidates(base, cfg.model_copy(update={"select": "ucb"}), MiningConfig(),
                             pool)
    assert "aunt" in ucb  # the upper bound alone does not see that it adds nothing


def test_balanced_selection_tests_one_property_at_most_twice() -> None:
    from discovery import FocusBase, FocusConfig, MiningConfig, pool_candidates
    from discovery._focus_stage import PROPERTY_PICKS

    negations = ["not", "isn't", "don't | won't", "never"]
    texts = ["it is not here.", "this isn't it.", "i don't go.", "we won't go.",
             "never again.", "a zorb came.", "the zorb left."] + [
        f"plain line {i}." for i in range(6)]
    fail = [True] * 7 + [False] * 6
    task = np.array([[0.9, 0.1]] * len(texts))
    ref = np.array([[0.1, 0.9] if f else [0.9, 0.1] for f in fail])
    base = FocusBase(texts=texts, task=task, reference=ref,
                     hard_indices=[i for i, f in enumerate(fail) if f])
    pool = {**{w: "word" for w in negations}, "zorb": "word"}
    cfg = FocusConfig(candidates=4, min_support=99)  # no mined n-gram: the pool alone
    chosen, _ = pool_candidates(base, cfg, MiningConfig(), pool)
    # Two negations are tested; the third and fourth would be one finding with them, so
    # "zorb" goes first, and the third waits for the slot nothing else takes.
    assert PROPERTY_PICKS == 2
    assert chosen == ["not", "isn't", "zorb", "don't | won't"]
    # A term that merely holds a marker is a slice of its own, not the property's.
    from discovery._slices import shared_property

    assert shared_property(["don't", "won't"]) == "negation"
    assert shared_property(["i'm", "we're"]) == "first person"
    assert shared_property(["1800s", "1930s"]) == "digits"
    assert shared_property(["it's not"]) is None and shared_property(["my uncle"]) is None
    assert shared_property(["not", "zorb"]) is None and shared_property([]) is None


def test_a_focus_test_that_does_not_replicate_drops_its_finding() -> None:
    from discovery import build_findings

    texts = ["my uncle.", "an aunt.", "the film.", "plain.", "plain again.", "more plain."]
    ids = [f"c{i}" for i in range(6)]
    fail = np.array([False] * 6)
    pw = np.full(6, 0.3)
    words = [{"kind": "group", "word": "uncle | aunt", "terms": ["uncle", "aunt"], "n": 2,
              "failures": 0, "base_rate": 0.0, "task_shift": 0.6, "reference_shift": 0.0,
              "z": 5.0, "q_value": 1e-6, "example_ids": ["c0", "c1"]},
             {"kind": "word", "word": "uncle", "terms": ["uncle"], "n": 1, "failures": 0,
              "base_rate": 0.0, "task_shift": 0.6, "reference_shift": 0.0, "z": 4.0,
              "q_value": 1e-5, "example_ids": ["c0"]},
             {"kind": "word", "word": "film", "terms": ["film"], "n": 1, "failures": 0,
              "base_rate": 0.0, "task_shift": 0.3, "reference_shift": 0.0, "z": 3.0,
              "q_value": 1e-3, "example_ids": ["c2"]}]
    focus = [{"ngram": "uncle | aunt", "n": 40, "failures": 12, "base_rate": 0.2,
              "q_value": 0.3, "confirmed": False, "source": "group"},
             {"ngram": "film", "n": 40, "failures": 4, "base_rate": 0.2, "q_value": 0.9,
              "confirmed": False, "source": "word"}]
    rows = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=pw, rule="r",
                          rows={"occlusion": words, "focus": focus})
    by = {r["name"]: r for r in rows}
    # Both focus tests ran on new sentences and did not confirm: neither is ranked on the
    # evidence that proposed it (the group's q of 1e-6); both go after every other row.
    assert by["uncle | aunt"]["evidence_q"] == pytest.approx(0.3)
    assert by["uncle | aunt"]["status"] == by["film"]["status"] == "not replicated"
    assert [r["name"] for r in rows] == ["uncle", "uncle | aunt", "film"]


def test_a_supported_focus_test_keeps_the_evidence_that_proposed_it() -> None:
    from discovery import build_findings

    texts = ["my uncle.", "an aunt.", "the film.", "plain.", "plain again.", "more plain."]
    ids = [f"c{i}" for i in range(6)]
    fail = np.array([False, False, True, False, False, False])
    pw = np.full(6, 0.3)
    words = [{"kind": "group", "word": "uncle | aunt", "terms": ["uncle", "aunt"], "n": 2,
              "failures": 0, "base_rate": 0.2, "task_shift": 0.6, "reference_shift": 0.0,
              "z": 5.0, "q_value": 1e-6, "example_ids": ["c0", "c1"]},
             {"kind": "word", "word": "film", "terms": ["film"], "n": 1, "failures": 1,
              "base_rate": 0.0, "task_shift": 0.3, "reference_shift": 0.0, "z": 3.0,
              "q_value": 1e-3, "example_ids": ["c2"]}]
    # 10 of 14 new sentences fail against 0.2: significant alone (p_rate), not after the
    # correction (q 0.07): supported, ranked on the group's q of 1e-6, above "film".
    focus = [{"ngram": "uncle | aunt", "n": 14, "failures": 10, "base_rate": 0.2,
              "q_value": 0.07, "p_rate": 0.02, "confirmed": False, "supported": True,
              "source": "group"}]
    rows = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=pw, rule="r",
                          rows={"occlusion": words, "focus": focus})
    by = {r["name"]: r for r in rows}
    assert [r["name"] for r in rows] == ["uncle | aunt", "film"]
    assert by["uncle | aunt"]["status"] == "supported" and not by["uncle | aunt"]["confirmed"]
    assert by["uncle | aunt"]["evidence_q"] == pytest.approx(1e-6)
    assert "(failure rate p=0.02 alone: supported, not confirmed" in by["uncle | aunt"]["reason"]
    # Supported by its invariance test alone (its failure rate at the base): the reason
    # names that test, not the failure rate's p.
    inv = {**focus[0], "failures": 3, "p_rate": 0.5, "flipped": 6, "invariance_n": 14,
           "invariance_base": 0.05, "p_invariance": 0.004, "task_shift": 0.2,
           "reference_shift": 0.0}
    row = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=pw, rule="r",
                         rows={"occlusion": words, "focus": [inv]})[0]
    assert "(invariance p=0.004 alone: supported" in row["reason"], row["reason"]
    # The same test without the flag (an older focus file): not replicated, ranked last.
    old = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=pw, rule="r",
                         rows={"occlusion": words, "focus": [{**focus[0], "supported": False}]})
    assert [r["name"] for r in old] == ["film", "uncle | aunt"]


def test_a_finding_not_above_its_base_rate_never_ranks_above_one_that_is() -> None:
    from discovery import build_findings

    # "odd" fails 0.45 of its sentences against a base rate of 0.79 in the rest, with a tiny
    # q-value; "zorb" fails 0.9 against 0.5, with a weaker q. "zorb" ranks first.
    texts = [f"line {i}." for i in range(10)]
    ids = [f"c{i}" for i in range(10)]
    fail = np.array([True] * 6 + [False] * 4)
    metadata = [{"slice": "odd", "terms": [], "example_ids": [], "n": 200, "failures": 90,
                 "base_rate": 0.79, "q_value": 1e-9},
                {"slice": "zorb", "terms": [], "example_ids": [], "n": 20, "failures": 18,
                 "base_rate": 0.5, "q_value": 0.01}]
    rows = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=np.full(10, 0.5),
                          rule="r", rows={"metadata": metadata})
    assert [(r["name"], r["above_base"]) for r in rows] == [("zorb", True), ("odd", False)]


def test_balanced_selection_sees_candidates_in_abstained_sentences() -> None:
    """Occlusion reads the abstained sentences too: a phrase the task model leans on only in
    sentences the reference reads no label in is in no judged sentence, yet the focus
    rounds' invariance test can confirm it, so ``balanced`` picks it from every sentence."""
    from discovery import FocusBase, FocusConfig, MiningConfig, pool_candidates

    judged = ["the movie number one.", "the movie number two.", "plain line."]
    texts = judged
    task = np.array([[0.9, 0.1]] * 3)
    ref = np.array([[0.1, 0.9], [0.1, 0.9], [0.9, 0.1]])
    cfg = FocusConfig(candidates=3, min_support=2)
    pool = {"horror movie": "phrase"}
    base = FocusBase(texts=texts, task=task, reference=ref, hard_indices=[0, 1])
    assert "horror movie" not in pool_candidates(base, cfg, MiningConfig(), pool)[0]
    every = [*judged, "a horror movie about ghosts."]
    base = FocusBase(texts=texts, task=task, reference=ref, hard_indices=[0, 1],
                     every_text=every)
    assert "horror movie" in pool_candidates(base, cfg, MiningConfig(), pool)[0]
