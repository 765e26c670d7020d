"""The one sanitiser for text shown to people: corpus sentences, n-grams and model names
reach terminals, Markdown files (``summary.md``, a PR comment) and HTML pages, and none of
them may act there.

Control characters (ESC, BEL, backspace, C1 controls...) and bidirectional overrides
(right-to-left override and its kin) become visible escapes (``\\x1b``, ``\\u202e``); in
Markdown, links, images and ``@mentions`` are defused as well.
"""

from __future__ import annotations

import io
import re
from typing import IO, Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any, *, keep: str = "") -> str:
    """``text`` (made a string) with every control character and bidirectional override
    shown as an escape: ``"a\\x1b]0;x\\x07"`` -> ``"a\\\\x1b]0;x\\\\x07"``, RLO ->
    ``"\\\\u202e"``. The characters in ``keep`` (e.g. ``"\\n\\t"``) are left as they are."""
    text = str(text)
    if keep:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
    return _UNSAFE.sub(_escape, text)


_MD_SPECIAL = re.compile(r"([\\|])|\](?=[(\[:])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def markdown_text(value: Any) -> str:
    """Text for a Markdown file: visible (see :func:`visible`; a line break becomes a
    space), no raw HTML, nothing Markdown would turn into a link, an image or a table cell
    break, and no ``@mention``; yet readable as plain text.

    Only a ``<`` that could open a tag (before a letter, ``/``, ``!`` or ``?``) and an ``&``
    that could start an entity (before a letter or ``#``) become entities: a lone
    ``q < 0.05`` or ``A & B`` renders as written. A backslash and a table cell's ``|`` are
    backslash-escaped, and so is what follows a ``]`` that would make a link, an image or a
    link definition (``](``, ``][``, ``]:``), so ``[0.53, 0.89]`` stays as written; an
    ``@`` before a name goes in a code span (`` `@`name ``), where GitHub never sees a
    mention."""
    text = visible(str(value).replace("\r\n", " ").replace("\r", " ").replace("\n", " "))
    text = re.sub(r"&(?=[A-Za-z#])", "&amp;", text)
    text = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)
    text = _MD_SPECIAL.sub(lambda m: "\\" + m.group(1) if m.group(1) else "]\\", text)
    return _MENTION.sub("`@`", text)


class VisibleStream(io.TextIOBase):
    """A text stream that writes through :func:`visible` (keeping ``keep``), so whatever a
    command prints cannot act on the terminal. Everything else (``isatty``, ``fileno``,
    ``encoding``) is the wrapped stream's."""

    def __init__(self, stream: IO[str], keep: str = "\n\t",
                 allowed: tuple[str, ...] = ()) -> None:
        self._stream = stream
        self._keep = keep
        self._allowed = allowed

    def write(self, s: str) -> int:
        """Write ``s`` with its unsafe characters escaped (``allowed`` sequences, such as a
        progress bar's cursor-up, pass)."""
        if self._allowed and any(a in s for a in self._allowed):
            parts = re.split("(" + "|".join(map(re.escape, self._allowed)) + ")", s)
            safe = "".join(p if p in self._allowed else visible(p, keep=self._keep)
                           for p in parts)
        else:
            safe = visible(s, keep=self._keep)
        self._stream.write(safe)
        return len(s)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
