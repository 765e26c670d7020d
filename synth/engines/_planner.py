"""One plan for label scoring, shared by every engine: which token ids to run, what to read.

Every backend scores ``prefix + text + suffix + label`` the same way, so the tokenisation and
the assembly of results live here, once (the transformers and vLLM paths only run the rows):

- The prefix is tokenized alone, *with* the tokenizer's special tokens, exactly as the
  model's own tokenizer encodes the start of a prompt: ``tokenizer(prefix)["input_ids"]``,
  also when the prefix is empty (a tokenizer whose post-processor adds BOS gives ``[BOS]``
  for ``""``; one that adds none gives ``[]``).
- Each ``text + suffix + label`` is tokenized alone, without special tokens, and appended.
  Within one text, each label's tokens are what follows the longest common token prefix of
  all labels' encodings, so every label is scored against the same context even when the
  tokenizer merges across the suffix/label boundary.
- Labels whose continuation is one token after that context share one row; a multi-token
  label gets its own row (context + all its tokens but the last).

Optionally the prefix is *aligned* (``PrefixAlignment``): padded to a multiple of some number
of tokens, so that an engine whose cache reuses whole blocks (vLLM's automatic prefix
caching) reuses all of it. The pads lengthen the few-shot separators (see
``align_prefix_ids``). The padding changes the prompt, so every engine scores the same
padded ids; ``align=None`` (the default) leaves the prefix as the tokenizer wrote it.

A row's ``reads`` name positions *in the row's own ids* (0 = the first token after the
prefix); position ``-1`` is the prefix's last token (a text whose context is empty reads the
first label token from the prefix's own next-token distribution). In a full prompt
(``prefix_ids + row.ids``) a read at position ``p`` is the distribution at index
``len(prefix_ids) + p`` that predicts the token at index ``len(prefix_ids) + p + 1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth.core._errors import ConfigError

# (label, ((position in the row whose next-token distribution is read, target token id), ...))
LabelReads = tuple[str, tuple[tuple[int, int], ...]]


@dataclass(frozen=True)
class ScoringRow:
    """One forward row: the ids after the prefix and the label tokens read from it.

    Attributes:
        text_index: which input text the row belongs to.
        ids: token ids after the prefix (text + suffix, plus a multi-token label's leading
            tokens).
        reads: per label, the (position, target id) pairs whose log-probabilities sum to
            the label's score.
    """

    text_index: int
    ids: tuple[int, ...]
    reads: tuple[LabelReads, ...]

    @property
    def single_token(self) -> bool:
        """True when every label read from this row is one token."""
        return all(len(reads) == 1 for _, reads in self.reads)


@dataclass(frozen=True)
class ScoringPlan:
    """The rows that score every label of every text after one shared prefix.

    Attributes:
        prefix_ids: the prefix's token ids (with the tokenizer's special tokens, and the
            alignment padding when one was asked for).
        labels: label names, in the order results are returned.
        n_texts: how many texts were planned.
        rows: the rows to run (see ``ScoringRow``).
    """

    prefix_ids: tuple[int, ...]
    labels: tuple[str, ...]
    n_texts: int
    rows: tuple[ScoringRow, ...]
    padding: int = 0
    """How many pad tokens ``align_prefix_ids`` put into the prefix."""

    def prompt_ids(self, row: ScoringRow) -> list[int]:
        """The row's whole prompt: prefix ids followed by the row's ids."""
        return list(self.prefix_ids) + list(row.ids)

    def rows_by_text(self) -> list[list[ScoringRow]]:
        """The rows grouped per text, in text order."""
        grouped: list[list[ScoringRow]] = [[] for _ in range(self.n_texts)]
        for row in self.rows:
            grouped[row.text_index].append(row)
        return grouped

    def new_scores(self) -> LabelScores:
        """An empty result table for this plan."""
        return LabelScores(self.labels, self.n_texts)


class LabelScores:
    """Collects label log-probabilities per text and returns them in the plan's label order."""

    def __init__(self, labels: Sequence[str], n_texts: int) -> None:
        self.labels = tuple(labels)
        self._rows: list[dict[str, float]] = [{} for _ in range(n_texts)]

    def set(self, text_index: int, label: str, value: float) -> None:
        """Record one label's log-probability for one text."""
        self._rows[text_index][label] = float(value)

    def result(self) -> list[dict[str, float]]:
        """One ``{label: log-probability}`` dict per text, labels in the plan's order.

        Raises:
            RuntimeError: an engine left a label unscored (a bug in the engine, not input).
        """
        out = []
        for i, row in enumerate(self._rows):
            missing = [lab for lab in self.labels if lab not in row]
            if missing:
                raise RuntimeError(f"text {i}: labels {missing} were not scored")
            out.append({lab: row[lab] for lab in self.labels})
        return out


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix shared by all ``seqs`` (at least one)."""
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for i in range(n):
        tok = first[i]
        if any(s[i] != tok for s in seqs[1:]):
            return i
    return n


def check_label_words(tokenizer: Any, label_continuations: Mapping[str, str]) -> None:
    """Refuse label continuations that tokenize to nothing.

    Raises:
        ConfigError: a label's continuation encodes to zero tokens.
    """
    for label, word in label_continuations.items():
        if not tokenizer(word, add_special_tokens=False)["input_ids"]:
            raise ConfigError(
                f"label word {word!r} of label '{label}' tokenizes to nothing",
                where="reference.label_words",
                fix="use a non-empty continuation such as ' positive'",
            )


def prefix_token_ids(tokenizer: Any, prefix: str) -> list[int]:
    """The prefix as the model's tokenizer starts a prompt: with its special tokens (e.g. BOS).

    An empty prefix is tokenized too, so a tokenizer that adds BOS still gives ``[BOS]``.
    """
    return [int(t) for t in tokenizer(prefix)["input_ids"]]


@dataclass(frozen=True)
class PrefixAlignment:
    """How to pad a shared prefix to a whole number of cache blocks.

    Attributes:
        multiple: pad the tokenized prefix to a multiple of this many tokens (> 1).
        separator: the text between few-shot demonstrations (``reference.shot_separator``):
            the pad tokens are spread over the token boundaries where its occurrences in
            the prefix end, each pad the token of the separator's last character (a
            newline for the default ``"\n\n"``), so the separators grow a little
            longer. Without one (empty, not found on a token boundary, or a last character
            that is not one token), the pads are end-of-text tokens in front of the prefix.
    """

    multiple: int
    separator: str = ""


ALIGN_SCHEME = "pads spread over the separators' ends (the separator's last character), " \
    "extra pads to the first; else end-of-text tokens after BOS"
"""How ``align_prefix_ids`` places its pads: part of the reference hash when it pads, so
scores made under another placement are never mixed with these."""


def alignment_pad_id(tokenizer: Any) -> int:
    """The end-of-text token that pads a prefix with no separator to lengthen.

    ``<|endoftext|>`` (GPT-2 style vocabularies, SmolLM2's id 0) if the vocabulary has it,
    else the EOS token, else the pad token.
    """
    vocab = tokenizer.get_vocab()
    if "<|endoftext|>" in vocab:
        return int(vocab["<|endoftext|>"])
    for special in (tokenizer.eos_token_id, tokenizer.pad_token_id):
        if special is not None:
            return int(special)
    raise ConfigError("the tokenizer has no end-of-text, EOS or pad token to pad the prefix with",
                      where="reference.align_prefix", fix="set reference.align_prefix: 0")


def separator_ends(tokenizer: Any, prefix: str, prefix_ids: Sequence[int], separator: str
                   ) -> list[int]:
    """Token indices in ``prefix_ids`` right after each occurrence of ``separator`` in
    ``prefix`` (only where a token ends exactly at the separator's end; none for a
    tokenizer without offsets)."""
    if not separator or not getattr(tokenizer, "is_fast", False):
        return []
    enc = tokenizer(prefix, return_offsets_mapping=True)
    if [int(t) for t in enc["input_ids"]] != list(prefix_ids):
        return []
    ends, at = set(), prefix.find(separator)
    while at >= 0:
        ends.add(at + len(separator))
        at = prefix.find(separator, at + len(separator))
    return [j + 1 for j, (start, end) in enumerate(enc["offset_mapping"])
            if end > start and end in ends]


def align_prefix_ids(tokenizer: Any, prefix: str, prefix_ids: Sequence[int],
                     align: PrefixAlignment | None) -> tuple[list[int], int]:
    """Pad ``prefix_ids`` (``prefix`` tokenized) to a multiple of ``align.multiple`` tokens;
    return (ids, pad tokens added).

    The pads lengthen the few-shot separators (see ``PrefixAlignment``): ``n`` pads over
    ``m`` separator ends put ``n // m`` at each, one more at the first ``n % m``. With no
    separator end to pad, end-of-text tokens (``alignment_pad_id``) go after the
    tokenizer's own leading special tokens (what it adds to an empty string, e.g.
    ``[BOS]``). No alignment, a multiple of 0 or 1, or a prefix already of a multiple
    returns the ids unchanged.
    """
    ids = [int(t) for t in prefix_ids]
    if align is None or align.multiple <= 1 or len(ids) % align.multiple == 0:
        return ids, 0
    n_pad = -len(ids) % align.multiple
    points = separator_ends(tokenizer, prefix, ids, align.separator)
    pad = tokenizer(align.separator[-1:], add_special_tokens=False)["input_ids"] \
        if points else []
    if len(pad) == 1:
        out, prev = [], 0
        for j, point in enumerate(points):
            out += ids[prev:point] + [int(pad[0])] * (n_pad // len(points)
                                                      + (j < n_pad % len(points)))
            prev = point
        return out + ids[prev:], n_pad
    leading = prefix_token_ids(tokenizer, "")
    lead = len(leading) if ids[:len(leading)] == leading else 0
    return ids[:lead] + [alignment_pad_id(tokenizer)] * n_pad + ids[lead:], n_pad


def build_rows(
    tokenizer: Any,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
) -> list[ScoringRow]:
    """Tokenize each ``text + suffix + label`` and plan the rows that score every label.

    Raises:
        ConfigError: a label's continuation tokenizes to nothing, or adds no tokens after the
            shared context (it is a prefix of another label's word).
    """
    labels = list(label_continuations)
    check_label_words(tokenizer, label_continuations)
    strings = [t + suffix + label_continuations[lab] for t in texts for lab in labels]
    encoded = tokenizer(strings, add_special_tokens=False)["input_ids"] if strings else []
    rows: list[ScoringRow] = []
    n_lab = len(labels)
    for i in range(len(texts)):
        fulls = encoded[i * n_lab:(i + 1) * n_lab]
        ctx_len = common_prefix_len(fulls)
        ctx = tuple(int(t) for t in fulls[0][:ctx_len])
        single: list[LabelReads] = []
        for lab, full in zip(labels, fulls, strict=True):
            targets = [int(t) for t in full[ctx_len:]]
            if not targets:
                raise ConfigError(
                    f"label word {label_continuations[lab]!r} of label '{lab}' adds no tokens "
                    f"after the text (it is a prefix of another label's word)",
                    where="reference.label_words",
                    fix="choose label words that are not prefixes of each other",
                )
            reads = tuple((ctx_len - 1 + j, tok) for j, tok in enumerate(targets))
            if len(targets) == 1:
                single.append((lab, reads))
            else:
                rows.append(ScoringRow(i, ctx + tuple(targets[:-1]), ((lab, reads),)))
        if single:
            rows.append(ScoringRow(i, ctx, tuple(single)))
    return rows


def plan_label_scoring(
    tokenizer: Any,
    prefix: str,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
    *,
    align: PrefixAlignment | None = None,
) -> ScoringPlan:
    """Plan the scoring of every label of every text after ``prefix`` (see the module doc).

    ``align`` pads the prefix to a multiple of its many tokens (``align_prefix_ids``).

    Raises:
        ConfigError: a label word tokenizes to nothing or is a prefix of another, or a label
            would be read with no token before it (empty prompt and no BOS).
    """
    if align is not None and align.multiple < 0:
        raise ConfigError(f"prefix alignment must be >= 0 tokens, got {align.multiple}",
                          where="reference.align_prefix", fix="use 0 (off) or e.g. 32")
    prefix_ids, padding = align_prefix_ids(tokenizer, prefix, prefix_token_ids(tokenizer, prefix),
                                           align)
    rows = build_rows(tokenizer, texts, label_continuations, suffix)
    if not prefix_ids and any(pos < 0 for r in rows for _, reads in r.reads
                              for pos, _ in reads):
        raise ConfigError("the prompt before a label is empty", where="reference.prompt",
                          fix="give the reference a non-empty prompt or suffix")
    return ScoringPlan(tuple(prefix_ids), tuple(label_continuations), len(texts), tuple(rows),
                       padding)
