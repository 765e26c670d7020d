"""The ipywidgets review UI (stock widgets only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from formalize.review._log import TAGS

if TYPE_CHECKING:
    from formalize.review._session import ReviewSession


class ReviewWidget:
    """The ipywidgets UI: a sortable hard-subset table, an n-gram picker showing its sentences
    with both models' probabilities, a tag menu per sentence (saved on change) and a
    hypothesis box. Works in JupyterLab, Notebook 7 and classic notebooks (stock widgets only).

    ``tag_widgets`` maps the shown sentence ids to their tag menus (for scripting and tests).
    """

    def __init__(self, session: ReviewSession, *, top_ngrams: int = 50, rows: int = 50) -> None:
        import ipywidgets as w

        self.session, self.rows = session, rows
        cols = list(session.hard_table().columns) if session._hard else ["rank"]
        self.sort = w.Dropdown(options=cols, value="rank" if "rank" in cols else cols[0],
                               description="sort by")
        self.ascending = w.Checkbox(value=True, description="ascending")
        self.hard_out = w.Output()
        grams = session.ngram_table(top_ngrams)
        options = [(f"{r['ngram']}  ({r.get('hard_count', '?')} hard)", r["ngram"])
                   for r in grams.to_dict(orient="records")] if len(grams) else []
        self.ngram = w.Dropdown(options=[("(choose an n-gram)", "")] + options,
                                description="n-gram")
        self.hypothesis = w.Combobox(options=list(session.log.hypotheses()),
                                     placeholder="what the task model gets wrong",
                                     description="hypothesis", layout=w.Layout(width="80%"))
        self.status = w.HTML()
        self.sentence_box = w.VBox()
        self.tag_widgets: dict[str, Any] = {}
        self.sort.observe(lambda _: self.show_hard(), names="value")
        self.ascending.observe(lambda _: self.show_hard(), names="value")
        self.ngram.observe(lambda change: self.show_ngram(change["new"]), names="value")
        self.box = w.VBox([w.HTML("<b>Hard subset</b>"), w.HBox([self.sort, self.ascending]),
                           self.hard_out, w.HTML("<b>N-grams</b>"), self.ngram, self.hypothesis,
                           self.sentence_box, self.status])
        self.show_hard()
        self._update_status()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)

    def show_hard(self) -> None:
        """Redraw the hard-subset table with the chosen sort."""
        from IPython.display import display

        self.hard_out.clear_output()
        with self.hard_out:
            if self.session._hard:
                display(self.session.hard_table(self.sort.value, self.ascending.value)
                        .head(self.rows))

    def show_ngram(self, ngram: str) -> None:
        """Show the sentences of ``ngram``, each with a tag menu restored from the log."""
        import ipywidgets as w

        self.tag_widgets = {}
        if not ngram:
            self.sentence_box.children = ()
            return
        df = self.session.sentences(ngram)
        lab = self.session.shown_label
        hyps = [h for h in df["hypothesis"] if h]
        if hyps and not self.hypothesis.value:
            self.hypothesis.value = hyps[-1]
        children = []
        for r in df.to_dict(orient="records"):
            menu = w.Dropdown(options=[("(untagged)", "")] + [(t, t) for t in TAGS],
                              value=r["tag"] or "", layout=w.Layout(width="180px"))
            menu.observe(lambda change, sid=r["id"]: self._on_tag(sid, change["new"]),
                         names="value")
            self.tag_widgets[r["id"]] = menu
            info = (f"<b>{r['id']}</b> {_escape(str(r['text']))}<br><small>task "
                    f"p({lab})={_fmt(r[f'task p({lab})'])}, reference p({lab})="
                    f"{_fmt(r[f'reference p({lab})'])}, divergence {_fmt(r['divergence'])}"
                    f"</small>")
            children.append(w.HBox([menu, w.HTML(info, layout=w.Layout(width="85%"))]))
        self.sentence_box.children = tuple(children)

    def _on_tag(self, sid: str, tag: str) -> None:
        if not tag:
            return
        self.session.tag(sid, tag, hypothesis=self.hypothesis.value or None)
        known = list(self.session.log.hypotheses())
        if list(self.hypothesis.options) != known:
            self.hypothesis.options = known
        self._update_status(f"saved: {sid} = {tag}")
        self.show_hard()

    def _update_status(self, last: str = "") -> None:
        counts: dict[str, int] = {}
        for d in self.session.log.load().values():
            counts[d["tag"]] = counts.get(d["tag"], 0) + 1
        summary = ", ".join(f"{t}: {counts.get(t, 0)}" for t in TAGS)
        self.status.value = f"<small>{_escape(last)} &nbsp; decisions: {summary}</small>"


def _fmt(x: Any) -> str:
    try:
        return f"{float(x):.3f}"
    except (TypeError, ValueError):
        return "-"


def _escape(text: str) -> str:
    import html

    return html.escape(text)
