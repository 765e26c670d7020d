"""Old home of the review log and session (now ``formalize.review``), kept for the whole-run
HTML report's import until that report moves to ``synthcheck/report`` (issue 8)."""

from formalize.review import TAGS, ReviewLog, ReviewSession, tagged_sentences

__all__ = ["TAGS", "ReviewLog", "ReviewSession", "tagged_sentences"]
