"""Progress bars: one helper so every long step shows rate and ETA the same way."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import weakref
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


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines: ``$SYNTHCHECK_HEARTBEAT`` when it is a number of
    seconds (0: a line at every step), else :data:`HEARTBEAT_SECONDS`, with a warning on
    stderr (once) that names the variable."""
    env = os.environ.get("SYNTHCHECK_HEARTBEAT", "").strip()
    if not env:
        return HEARTBEAT_SECONDS
    try:
        value = float(env)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and 0 <= value <= 86400:
        return value
    if env not in _WARNED_ENV:
        _WARNED_ENV.add(env)
        print(f"warning: $SYNTHCHECK_HEARTBEAT is not a number of seconds from 0 to 86,400 "
              f"(SYNTHCHECK_HEARTBEAT={env[:40]!r}): using {HEARTBEAT_SECONDS:g}; set it to "
              "e.g. 60, or 0 for a line at every step", file=sys.stderr, flush=True)
    return HEARTBEAT_SECONDS


_WARNED_ENV: set[str] = set()


def _beat(ref: weakref.ReferenceType[Heartbeat], stop: threading.Event, interval: float
          ) -> None:
    """The heartbeat's timer: a line every ``interval`` seconds until the heartbeat is
    closed (or dropped, as when its step raised)."""
    while not stop.wait(interval):
        beat = ref()
        if beat is None:
            return
        beat.tick()
        del beat


class Heartbeat:
    """A stand-in for a progress bar where none is drawn (stderr is not a terminal, as in a
    log file or CI): every ``$SYNTHCHECK_HEARTBEAT`` seconds (default 30) of a long step it
    prints one line to stdout, ``[generate] 128/1,024 prompt (12.5%), 2.1 prompt/s, about
    7 min 10 s left``, so a log shows the step is alive and how far it is. The lines come
    from a timer, not from finished batches: a step stuck on one long batch (a 512-sentence
    chunk) still says so every interval (``... (on a batch for 1 min 00 s)``)."""

    def __init__(self, total: int | None, desc: str, unit: str = "it",
                 interval: float | None = None) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.n: float = 0
        self.interval = heartbeat_interval() if interval is None else interval
        self._start = self._last = self._moved = time.monotonic()
        self._postfix = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if self.interval > 0:
            threading.Thread(target=_beat, args=(weakref.ref(self), self._stop, self.interval),
                             name=f"heartbeat {desc}", daemon=True).start()

    def __enter__(self) -> Heartbeat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self._stop.set()

    def update(self, n: float = 1) -> None:
        """Count ``n`` more; print a line when ``interval`` seconds have passed."""
        with self._lock:
            self.n += n
            now = time.monotonic()
            if n:
                self._moved = now
            if now - self._last >= self.interval and n:
                self._last = now
                print(self.line(now - self._start), flush=True)

    def tick(self) -> None:
        """The timer's line: printed when no line came for ``interval`` seconds."""
        with self._lock:
            now = time.monotonic()
            if self._stop.is_set() or now - self._last < self.interval * 0.99:
                return
            self._last = now
            line = self.line(now - self._start)
            if now - self._moved >= self.interval * 0.99:
                line += f" (on a batch for {format_duration(now - self._moved)})"
            print(line, flush=True)

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
        """Stop the timer (there is no bar)."""
        self._stop.set()
