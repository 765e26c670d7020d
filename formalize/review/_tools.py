"""Annotation tools, registered by name in ``ANNOTATION_TOOLS`` (one module per tool).

A tool is how a run's sentences are written for it (``export``: items -> files) and how its
export is read back (``answers``: a file -> one :class:`Answer` per reviewer and sentence).
``synthcheck annotate export|import --format NAME`` (the blind audit's ``--audit`` too) and
:func:`formalize.export_annotations` / :func:`formalize.import_annotations` take any registered
name; what an answer means (a decision for the review log, a label for the audit) is decided
after, the same for every tool. A new tool is one module with an :class:`AnnotationTool`
subclass plus one registry entry::

    ANNOTATION_TOOLS.register("mytool", "mypackage.mymodule:MyTool")

The review notebook is not one: it writes the review log (and :class:`formalize.AuditLog`)
itself, with no files to hand out or read back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synth.core import ConfigError, Registry, did_you_mean

if TYPE_CHECKING:
    from formalize.review._annotate_import import Answer


class AnnotationTool:
    """An annotation tool. A subclass sets ``name`` and ``description`` and overrides
    :meth:`write` and :meth:`answers` (and :meth:`export_paths` when it writes more than
    one file); register it in ``formalize.review.ANNOTATION_TOOLS``."""

    #: The ``--format`` name.
    name: ClassVar[str] = ""
    #: One line on what the tool reads and writes (``annotate --help``).
    description: ClassVar[str] = ""
    #: What the files written beside ``--out`` are, for messages (``"its labeling config
    #: .xml"``); empty when the export is the one file ``--out`` names.
    beside: ClassVar[str] = ""
    #: What :attr:`Answer.record` counts, for messages (``"record 3"``, ``"line 4"``).
    record_unit: ClassVar[str] = "record"

    def export_paths(self, out: Path) -> list[Path]:
        """The files an export to ``out`` writes, ``out`` first, checked to be distinct.

        Raises:
            DataError: two of them would be one file (names ``--out`` and the fix).
        """
        return [out]

    def is_own_file(self, path: Path) -> bool:
        """Whether ``path``, an existing file beside ``out``, is one an earlier export of this
        tool wrote (so a new export may replace it; any other file there is the user's)."""
        return False

    def write(self, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
              labels: Sequence[str], *, audit: bool = False) -> None:
        """Write ``items`` to ``paths`` (what :meth:`export_paths` returned), atomically.

        Each item has ``id`` and ``text``; a review item also ``source`` (where it was found),
        ``task_model``, ``task_probs`` and ``reference_probs``, to show beside the text, and
        nothing may be pre-filled (a plain Submit would record it as the reviewer's).
        ``audit``: show the text alone (no scores, no model labels), and the answer is one
        label per sentence: one of ``labels`` or :data:`discovery.NO_LABEL`.
        """
        raise NotImplementedError(f"annotation tool {self.name!r} does not export")

    def answers(self, path: Path) -> list[Answer]:
        """Every reviewer's answers in the tool's export at ``path``: per sentence and
        reviewer, ``choices`` by question (``label``, ``tag``, ``note``), a ``key`` that is
        the same when the same export is read twice, and the tool's own time if it has one;
        ``record`` is where it is in the file (a :attr:`record_unit`, for messages).

        Raises:
            DataError: the file or one of its records is not the tool's export (names the
                file and the record or line, and the fix).
        """
        raise NotImplementedError(f"annotation tool {self.name!r} does not import")


#: ``--format`` name -> its :class:`AnnotationTool` subclass.
ANNOTATION_TOOLS: Registry[type[AnnotationTool]] = Registry("annotation tool", {
    "label-studio": "formalize.review._label_studio:LabelStudio",
    "argilla": "formalize.review._argilla:Argilla",
})


def annotation_tool(name: str) -> AnnotationTool:
    """The registered tool ``name``.

    Raises:
        ConfigError: an unknown name, with the closest registered one ("did you mean").
    """
    if name not in ANNOTATION_TOOLS:
        raise ConfigError(f"unknown annotation tool {name!r}", where="--format",
                          fix=did_you_mean(name, ANNOTATION_TOOLS.names()))
    return ANNOTATION_TOOLS.get(name)()
