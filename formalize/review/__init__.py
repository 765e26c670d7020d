"""Review and propose (stage 3): tag a run's hard sentences in an append-only decision log,
then draft templates from the tagged sentences and append accepted drafts to a suite."""

from formalize.review._annotate import annotation_items, export_annotations
from formalize.review._annotate_import import Answer, Imported, import_annotations
from formalize.review._audit import AuditLog, export_audit, import_audit, update_eval_audit
from formalize.review._drafts import append_tests, draft_suite, run_draft
from formalize.review._log import DECISIONS, TAGS, ReviewLog, ReviewLogWarning
from formalize.review._propose import (
    TemplateDraft,
    format_drafts,
    propose_templates,
    suggest_fills,
    suite_lexicons,
)
from formalize.review._session import DEFAULT_RUN, RUN_ENV, ReviewSession, tagged_sentences
from formalize.review._tools import ANNOTATION_TOOLS, AnnotationTool, annotation_tool
from formalize.review._widget import ReviewWidget

__all__ = [
    "ANNOTATION_TOOLS",
    "AnnotationTool",
    "Answer",
    "annotation_tool",
    "AuditLog",
    "Imported",
    "export_audit",
    "import_audit",
    "update_eval_audit",
    "DECISIONS",
    "DEFAULT_RUN",
    "RUN_ENV",
    "TAGS",
    "ReviewLog",
    "ReviewLogWarning",
    "ReviewSession",
    "ReviewWidget",
    "TemplateDraft",
    "annotation_items",
    "append_tests",
    "draft_suite",
    "export_annotations",
    "format_drafts",
    "import_annotations",
    "propose_templates",
    "run_draft",
    "suggest_fills",
    "suite_lexicons",
    "tagged_sentences",
]
