"""Progress bars: one helper so every long step shows rate and ETA the same way."""

from __future__ import annotations

import sys
from typing import Any


def progress_enabled(wanted: bool = True) -> bool:
    """Whether to draw a progress bar: asked for, and stderr is a terminal (a log file or a
    CI job gets no bar)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(wanted and isatty is not None and isatty())


def progress_bar(total: int | None, desc: str, unit: str = "it", *, enabled: bool = True
                 ) -> Any:
    """A tqdm bar on stderr with rate and ETA, drawn only when :func:`progress_enabled`
    (otherwise a disabled bar whose ``update`` does nothing)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True,
                disable=not progress_enabled(enabled), mininterval=0.5)
