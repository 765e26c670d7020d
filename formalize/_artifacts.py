"""The run-directory files stage 3 writes, each declared once (see :class:`synth.core.Artifact`):
a verified suite's outputs under ``verify/<suite>/`` (``VerifyResult.write`` writes the same
names into any ``--out`` folder) and the review decision log."""

from __future__ import annotations

from synth.core import artifact

VERIFY = artifact("verify", "verify/{suite}", "verify",
                  doc="one verified suite's outputs (a folder)")
VERIFY_SUMMARY = artifact("verify_summary", "verify/{suite}/summary.json", "verify",
                          doc="the verify result with provenance (fail rates, tests, recall)")
VERIFY_SUMMARY_CSV = artifact("verify_summary_csv", "verify/{suite}/summary.csv", "verify",
                              doc="fail rate per test, side by side")
VERIFY_FILLS = artifact("verify_fills", "verify/{suite}/fills.csv", "verify",
                        doc="fail rate per template fill")
VERIFY_GROUPS = artifact("verify_groups", "verify/{suite}/groups.csv", "verify",
                         doc="test-group deviations")
VERIFY_EXAMPLES = artifact("verify_examples", "verify/{suite}/examples.jsonl", "verify",
                           doc="failing cases, a few per test")
VERIFY_CASES = artifact("verify_cases", "verify/{suite}/cases.jsonl", "verify",
                        doc="every scored case (resumable in chunks)")
DECISIONS = artifact("decisions", "review/decisions.jsonl", "review",
                     doc="the append-only review decision log")
