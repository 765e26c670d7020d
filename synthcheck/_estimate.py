"""Time estimates printed before the long stages of `discover`: the work (prompts or
sentences) times a rate measured on this machine.

After each stage that ran long enough to time (at least a second), its rate (work per
second) is recorded in the user cache (``rates.json`` under ``$SYNTHCHECK_CACHE``), keyed by
the stage and the model that does the work, with the load it ran under; the next estimate
uses it, scaled by the load now, and says the range. Before the first measurement here,
the rates of the default run measured on the project's reference machine are used, and
the line says so. A cache that cannot be read, or an entry that is not a sane rate, is
ignored with a warning that names the file.
"""

from __future__ import annotations

import json
import math
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from synth.core import format_duration

#: The default run (configs/sentiment.yaml, SmolLM2 in bfloat16) on the project's reference
#: machine: 2 cores of an AMD EPYC, 2026-11-24, main at 4e3b1f7 (/work/baseline-demo:
#: generate 1,024 prompts in 50.5 s, score 869 sentences in 36.1 s, focus 480 prompts in
#: 44.6 s). Used until this machine has measured its own.
REFERENCE_RATES: dict[str, tuple[float, str]] = {
    "generate": (1024 / 50.5, "prompt"),
    "score": (869 / 36.1, "sentence"),
    "focus": (480 / 44.6, "prompt"),
}


#: The least work whose rate is recorded.
MIN_WORK = 100
#: The range of rates an estimate believes (items per second); others in the cache are
#: ignored with a warning.
MIN_RATE, MAX_RATE = 1e-3, 1e7
#: The shortest step whose rate is recorded (shorter ones measure start-up, not throughput).
MIN_SECONDS = 1.0


def _path() -> Path | None:
    try:
        from synth.core import cache_dir

        return cache_dir() / "rates.json"
    except Exception:  # noqa: BLE001 - an unusable cache only costs the measured rates
        return None


_WARNED: set[str] = set()


def _warn(key: str, text: str) -> None:
    """Print ``warning: ...`` once per process and subject (an estimate is printed before
    each long stage; the cache's fault is said once)."""
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"warning: {text}", file=sys.stderr, flush=True)


def _number(value: Any) -> float | None:
    """``value`` as a finite float when it is a JSON number (not a string, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _problem(key: str, rec: Any) -> str | None:
    """Why the cache entry ``key`` cannot give an estimate, or None."""
    if not isinstance(rec, dict):
        return f"the entry is {type(rec).__name__}, not an object"
    stage = key.partition("|")[0]
    rate = _number(rec.get("rate"))
    if rate is None or not MIN_RATE <= rate <= MAX_RATE:
        return (f"rate {rec.get('rate')!r} is not a number of items per second from "
                f"{MIN_RATE:g} to {MAX_RATE:g}")
    unit = rec.get("unit")
    want = REFERENCE_RATES[stage][1] if stage in REFERENCE_RATES else None
    if want is not None and unit != want:
        return f"unit {unit!r} is not {want!r}"
    if not isinstance(rec.get("measured", ""), str):
        return f"measured {rec.get('measured')!r} is not a date"
    return None


def _read(*, warn: bool = True) -> dict[str, Any]:
    """The valid entries of ``rates.json``; a file that cannot be read, or an entry that is
    not a sane rate, is ignored with a warning naming the file (never a traceback)."""
    path = _path()
    if path is None or not (path.exists() or path.is_symlink()):
        return {}
    fix = "delete it; this machine's rates are measured again after the next run"
    if path.is_dir():
        if warn:
            _warn(str(path), f"the estimates' cache is a directory, not a file ({path}): "
                             "remove it; until then estimates use the reference machine's "
                             "rates and nothing is recorded")
        return {}
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        if warn:
            why = getattr(exc, "msg", None) or type(exc).__name__
            _warn(str(path), f"the estimates' cache cannot be read ({why}) ({path}): {fix}")
        return {}
    if not isinstance(data, dict):
        if warn:
            _warn(str(path), f"the estimates' cache is a JSON {type(data).__name__}, not an "
                             f"object ({path}): {fix}")
        return {}
    good = {}
    for key, rec in data.items():
        why = _problem(key, rec)
        if why is None:
            good[key] = rec
        elif warn:
            _warn(f"{path}|{key}", f"ignoring the measured rate {key!r}: {why} ({path}): "
                                   "delete that entry (or the file); it is measured again "
                                   "after the next run")
    return good


def _load() -> float | None:
    """The 1-minute load average of this machine (None where the OS does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _cores() -> int:
    return os.cpu_count() or 1


def estimate_line(stage: str, model: str, work: int) -> str | None:
    """``[generate] estimate: 1,024 prompts at 20.3 prompt/s = about 50 s (50 s to 1 min 05
    s); ...`` with where the rate comes from, or None without work or a rate.

    The rate measured here (or the reference machine's) is scaled by the load: the run
    that measured it shared the machine with a load of ``load`` on ``cores`` cores; this
    stage will share it with the load now plus itself (using every core). The range runs
    from the unscaled time to 1.5 times the larger of the two."""
    if work <= 0:
        return None
    rec = _read().get(f"{stage}|{model}")
    cores = _cores()
    if rec is not None:
        rate, unit = float(rec["rate"]), str(rec["unit"])
        then = _number(rec.get("load"))
        source = f"measured on this machine {str(rec.get('measured', ''))[:10]}".rstrip()
        if then is not None:
            source += f" at a load of {then:.1f}"
    elif stage in REFERENCE_RATES:
        rate, unit = REFERENCE_RATES[stage]
        then = None
        source = ("the default run's rate on a 2-core reference machine; this machine's "
                  "own is recorded after this run")
    else:
        return None
    now = _load()
    slow_then = max(1.0, then / cores) if then is not None else 1.0
    slow_now = max(1.0, (now + cores) / cores) if now is not None else 1.0
    scaled = rate * slow_then / slow_now
    plain, likely = work / rate, work / scaled
    lo, hi = min(plain, likely), 1.5 * max(plain, likely)
    load_now = (f"scaled by the load now, {now:.1f} on {cores} core(s)" if now is not None
                else "the load now is unknown")
    return (f"[{stage}] estimate: {work:,} {unit}s at {scaled:.1f} {unit}/s = about "
            f"{format_duration(likely)} ({format_duration(lo)} to {format_duration(hi)}); "
            f"rate {rate:.1f} {unit}/s ({source}), {load_now}")


def record_rate(stage: str, model: str, work: int, seconds: float) -> None:
    """Remember ``work / seconds`` (and the load it ran under) for the next estimate: not for
    steps under :data:`MIN_SECONDS`, nor for less than :data:`MIN_WORK` prompts or sentences
    (loading the model dominates those). A cache that cannot be read is replaced by one
    with its valid entries; one that is a directory is left alone."""
    if work < MIN_WORK or seconds < MIN_SECONDS or stage not in REFERENCE_RATES:
        return
    path = _path()
    if path is None or path.is_dir():
        return
    from synth.core import SynthcheckError, write_json_atomic

    data = _read(warn=False)
    rec: dict[str, Any] = {"rate": round(work / seconds, 3), "unit": REFERENCE_RATES[stage][1],
                           "work": work, "seconds": round(seconds, 2),
                           "measured": datetime.now(UTC).isoformat(timespec="seconds"),
                           "cores": _cores()}
    load = _load()
    if load is not None:
        rec["load"] = round(load, 2)
    data[f"{stage}|{model}"] = rec
    try:
        write_json_atomic(path, data)
    except (OSError, SynthcheckError):
        return
