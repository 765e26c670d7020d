"""Old home of the verify result (now ``formalize._result``), kept for the whole-run HTML
report's import until that report moves to ``synthcheck/report`` (issue 8)."""

from formalize._result import VerifyResult, group_deviations, summary_tests

__all__ = ["VerifyResult", "group_deviations", "summary_tests"]
