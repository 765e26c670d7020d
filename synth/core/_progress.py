"""Progress bars: one helper so every long step shows rate and ETA the same way."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

#: Seconds between heartbeat lines when there is no terminal (``$SYNTHCHECK_HEARTBEAT``).
HEARTBEAT_SECONDS = 30.0


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

    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True,
               disable=not progress_enabled(enabled), mininterval=0.5)
    if enabled and bar.disable:  # wanted, but no terminal: a log or CI gets heartbeats
        return Heartbeat(total, desc, unit)
    return bar


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Heartbeat:
    """A stand-in for a progress bar where none is drawn (stderr is not a terminal, as in a
    log file or CI): every ``$SYNTHCHECK_HEARTBEAT`` seconds (default 30) of a long step it
    prints one line to stdout, ``[generate] 128/1,024 prompt (12.5%), 2.1 prompt/s, about
    7 min 10 s left``, so a log shows the step is alive and how far it is."""

    def __init__(self, total: int | None, desc: str, unit: str = "it",
                 interval: float | None = None) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.n: float = 0
        env = os.environ.get("SYNTHCHECK_HEARTBEAT", "").strip()
        self.interval = float(env) if interval is None and env else (
            HEARTBEAT_SECONDS if interval is None else interval)
        self._start = self._last = time.monotonic()
        self._postfix = ""

    def __enter__(self) -> Heartbeat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        """Count ``n`` more; print a line when ``interval`` seconds have passed."""
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.interval and n:
            self._last = now
            print(self.line(now - self._start), flush=True)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Keep the postfix (shown at the end of the next line)."""
        values = dict(*args, **kwargs)
        self._postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def line(self, elapsed: float) -> str:
        """The heartbeat text after ``elapsed`` seconds."""
        done, total, unit = self.n, self.total, self.unit
        rate = done / elapsed if elapsed > 0 else 0.0
        text = f"[{self.desc}] {done:,}" + (f"/{total:,}" if total else "") + f" {unit}"
        if total:
            text += f" ({100 * done / total:.1f}%)"
        text += f", {rate:.1f} {unit}/s"
        if total and rate > 0:
            text += f", about {format_duration((total - done) / rate)} left"
        return text + (f" ({self._postfix})" if self._postfix else "")

    def close(self) -> None:
        """Nothing to close (there is no bar)."""
