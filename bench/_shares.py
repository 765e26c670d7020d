"""A share with its 95% Wilson interval and counts, as the bench tables print it."""

from __future__ import annotations


def share(k: int, n: int, empty: str = "n/a") -> str:
    """``"0.58 [0.46, 0.70] (35/60)"``; ``empty`` when ``n`` is 0."""
    from discovery._precision import _wilson

    if not n:
        return empty
    lo, hi = _wilson(k, n)
    return f"{k / n:.2f} [{lo:.2f}, {hi:.2f}] ({k}/{n})"
