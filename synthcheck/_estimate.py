"""Time estimates printed before the long stages of `discover`: the work (prompts or
sentences) times a rate measured on this machine.

After each stage that ran long enough to time (at least a second), its rate (work per
second) is recorded in the user cache (``rates.json`` under ``$SYNTHCHECK_CACHE``), keyed by
the stage and the model that does the work; the next estimate uses it. Before the first
measurement here, the rates of the default run measured on the project's reference
machine are used, and the line says so.
"""

from __future__ import annotations

import json
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
#: The shortest step whose rate is recorded (shorter ones measure start-up, not throughput).
MIN_SECONDS = 1.0


def _path() -> Path | None:
    try:
        from synth.core import cache_dir

        return cache_dir() / "rates.json"
    except Exception:  # noqa: BLE001 - an unusable cache only costs the measured rates
        return None


def _read() -> dict[str, Any]:
    path = _path()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def estimate_line(stage: str, model: str, work: int) -> str | None:
    """``[generate] estimate: 1,024 prompts at 20.3 prompt/s (measured here on ...) = about
    50 s``, or None without work or a rate."""
    if work <= 0:
        return None
    rec = _read().get(f"{stage}|{model}")
    if isinstance(rec, dict) and rec.get("rate"):
        rate, unit = float(rec["rate"]), str(rec.get("unit", "item"))
        source = f"measured on this machine {rec.get('measured', '')[:10]}".rstrip()
    elif stage in REFERENCE_RATES:
        rate, unit = REFERENCE_RATES[stage]
        source = ("the default run's rate on a 2-core reference machine; this machine's "
                  "own is recorded after this run")
    else:
        return None
    return (f"[{stage}] estimate: {work:,} {unit}s / {rate:.1f} {unit}/s ({source}) = about "
            f"{format_duration(work / rate)}; a machine shared with other jobs is slower")


def record_rate(stage: str, model: str, work: int, seconds: float) -> None:
    """Remember ``work / seconds`` for the next estimate: not for steps under
    :data:`MIN_SECONDS`, nor for less than :data:`MIN_WORK` prompts or sentences (loading the
    model dominates those)."""
    if work < MIN_WORK or seconds < MIN_SECONDS or stage not in REFERENCE_RATES:
        return
    path = _path()
    if path is None:
        return
    from synth.core import write_json_atomic

    data = _read()
    data[f"{stage}|{model}"] = {"rate": round(work / seconds, 3),
                                "unit": REFERENCE_RATES[stage][1], "work": work,
                                "seconds": round(seconds, 2),
                                "measured": datetime.now(UTC).isoformat(timespec="seconds")}
    try:
        write_json_atomic(path, data)
    except OSError:
        return
