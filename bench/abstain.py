"""The reference's abstain answer, calibrated or not: which sentences say "no label applies"?

A positive/negative reference with the abstain answer " neutral" (``reference.abstain``) reads
held-out tweets of the packaged 3-class set (``packaged:tweets3``: negative, neutral,
positive). A neutral tweet should abstain; a negative or positive one should not, and should
get its polarity right. The raw answers are scored once (labels plus the abstain word, the
content-free inputs beside them) and read both ways, as ``reference.abstain.calibrate``
says: uncalibrated (``false``, the default) and through the contextual calibration with the
labels (``true``). Per mode and threshold the table gives, with 95% Wilson intervals:

- ``neutral found``: the share of neutral tweets that abstain;
- ``false abstain``: the share of negative/positive tweets that abstain;
- ``polarity acc``: on the negative/positive tweets that do not abstain, the share whose top
  label is their gold one.

Usage::

    python bench/abstain.py --llm gemma3 --size 300      # measured numbers: docs/discovery.md
    python bench/abstain.py --small                      # a tiny random model, 24 tweets
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _shares import share as _iv

LLMS = {"smollm2": "packaged:smollm2-135m-instruct", "gemma3": "packaged:gemma3-270m"}
PROMPT = ("Question: Is this tweet negative, positive or neutral? Answer with negative, "
          "positive or neutral: {text}\nAnswer:")
SHOTS = [  # the sentiment3 config's shots
    ("@united lost my bag again and nobody at the desk cares. worst airline ever", "negative"),
    ("Flight 1423 to Denver departs at 6:45pm from gate B12 tonight.", "neutral"),
    ("@SouthwestAir thank you for the free upgrade, the crew was amazing!", "positive"),
    ("Self-driving cars scare me, I would never trust one with my kids.", "negative"),
    ("Google is testing its driverless cars on public roads in Austin this week.", "neutral"),
    ("Can't wait to ride in a driverless car, the future is so exciting!", "positive"),
]
LABELS = ["negative", "positive"]
THRESHOLDS = (0.3, 0.5)


def reference_config(calibrate: bool) -> Any:
    from discovery import AbstainConfig, ReferenceConfig, Shot

    return ReferenceConfig(prompt=PROMPT, shots=[Shot(text=t, label=lab) for t, lab in SHOTS],
                           abstain=AbstainConfig(word=" neutral", calibrate=calibrate),
                           calibration="contextual")


def measure(backend: Any, texts: Sequence[str], golds: Sequence[str]) -> list[dict[str, Any]]:
    """Score once, read both ways: one row per (calibrate, threshold)."""
    from discovery import FewShotReference

    scorer = FewShotReference(backend, reference_config(False), LABELS)
    raw = scorer.raw_logprobs(list(texts))
    golds = np.asarray(golds)
    neutral = golds == "neutral"
    rows = []
    for calibrate in (False, True):
        ref = FewShotReference(backend, reference_config(calibrate), LABELS)
        ref.fit_calibration()  # contextual: the content-free inputs, scored once each mode
        p_abstain = ref.abstain_proba(raw)
        top = np.array(LABELS)[ref.calibrated(raw).argmax(axis=1)]
        assert p_abstain is not None
        for t in THRESHOLDS:
            ab = p_abstain > t
            keep = ~neutral & ~ab
            rows.append({"calibrate": calibrate, "threshold": t,
                         "neutral": (int((ab & neutral).sum()), int(neutral.sum())),
                         "false": (int((ab & ~neutral).sum()), int((~neutral).sum())),
                         "polarity": (int((top[keep] == golds[keep]).sum()), int(keep.sum()))})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default="gemma3", choices=sorted(LLMS))
    ap.add_argument("--size", type=int, default=300, help="held-out tweets (stratified)")
    ap.add_argument("--small", action="store_true", help="a tiny random model, 24 tweets")
    args = ap.parse_args(argv)

    from discovery import EvaluationConfig, load_evaluation_set
    from synth.core import LabelSpace

    size = 24 if args.small else args.size
    held = load_evaluation_set(LabelSpace.of(["negative", "neutral", "positive"]),
                               EvaluationConfig(data="packaged:tweets3", size=size))
    started = time.process_time()
    if args.small:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from reference import _tiny_backend

        backend, name = _tiny_backend(list(held.texts) + [t for t, _ in SHOTS]), "tiny"
    else:
        from synth.engines import make_backend

        backend, name = make_backend(LLMS[args.llm], batch_size=32), args.llm
    rows = measure(backend, held.texts, held.labels)
    print(f"reference {name}; {len(held)} held-out tweets of packaged:tweets3 "
          f"({sum(g == 'neutral' for g in held.labels)} neutral); abstain word ' neutral'; "
          f"CPU {time.process_time() - started:.1f} s")
    print(f"{'calibrate':<10}{'threshold':>10}  {'neutral found':<28}{'false abstain':<28}"
          f"polarity acc")
    for r in rows:
        print(f"{str(r['calibrate']).lower():<10}{r['threshold']:>10g}  {_iv(*r['neutral']):<28}"
              f"{_iv(*r['false']):<28}{_iv(*r['polarity'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
