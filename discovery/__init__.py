"""Stage 2 (SynthTest_hard): task-model and reference scoring, divergence ranking, n-gram mining."""

from discovery._protocols import TaskScorer

__all__ = ["TaskScorer"]
