"""One slice is one finding: rows naming the same terms (or, without terms, the same name)
from several finders or data fold into the best-ranked of them."""

from __future__ import annotations

from discovery._findings import merge_same_slice, slice_key


def row(name: str, kind: str, data: str = "corpus", terms: list[str] | None = None,
        **kw: object) -> dict[str, object]:
    return {"name": name, "kind": kind, "data": data, "terms": terms if terms is not None
            else [name], "n": 10, "failures": 6, "rate": 0.6, "base_rate": 0.2,
            "q_value": 0.01, **kw}


def test_same_terms_fold_into_the_first_with_every_data_named() -> None:
    rows = [row("just", "focus"), row("Just", "word", "labelled"),
            row("just", "ngram", "labelled", n=27), row("too", "word"),
            row("quotation", "metadata", terms=[]), row("quotation", "metadata", "labelled",
                                                        terms=[])]
    out = merge_same_slice(rows)
    assert [r["name"] for r in out] == ["just", "too", "quotation"]
    assert out[0]["kind"] == "focus" and out[0]["data_all"] == ["corpus", "labelled"]
    assert [(a["kind"], a["data"], a["n"]) for a in out[0]["also"]] == \
        [("word", "labelled", 10), ("ngram", "labelled", 27)]
    assert "also" not in out[1] and out[1]["data_all"] == ["corpus"]
    assert out[2]["data_all"] == ["corpus", "labelled"] and len(out[2]["also"]) == 1


def test_different_terms_stay_apart() -> None:
    assert slice_key(row("a b", "ngram", terms=["a", "b"])) == \
        slice_key(row("b | a", "group", terms=["B", "a"]))
    assert slice_key(row("a", "word")) != slice_key(row("a b", "ngram", terms=["a", "b"]))
    assert slice_key(row("x", "metadata", terms=[])) != slice_key(row("x", "word"))
    rows = [row("a", "word"), row("b", "word"), row("a b", "ngram", terms=["a", "b"])]
    assert merge_same_slice(rows) == [{**r, "data_all": ["corpus"]} for r in rows]
