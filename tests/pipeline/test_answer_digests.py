"""Every classify answer, pinned (issue 14: a speed change changes no answer).

``tests/fixtures/answer-digests.json`` holds, for every log of ``corpora/*``,
every real set and seed (``bench/answers.py``'s walk), a digest of what the
answer says: verdict, cause, phase, what decided, signature, the evidence and
early-warning lines, and each lifetime's verdict, cause, phase and lines. Only
digests are kept, so nothing of the real logs is copied. Confidence figures are
left out: they are floats, and this must hold on any machine. After an intended
change, ``FORENSICS_UPDATE_FIXTURES=1 python -m pytest tests/pipeline/test_answer_digests.py``
rewrites the file; review which keys changed, then commit it."""
from __future__ import annotations

import json

import approved as A
from conftest import REPO

DIGESTS = REPO / "tests" / "fixtures" / "answer-digests.json"


_digest = A.pinned_digest


def test_every_answer_is_the_pinned_one(reference_answers):
    """The normal path's answers come from the session's shared reference
    (tests/reference_answers.py: hash seed 1), computed once for this test,
    test_native_core, test_hash_seed and test_matching_engine."""
    from reference_answers import split

    got = split(reference_answers())[2]
    assert len(got) > 900
    if A.UPDATE:
        DIGESTS.write_text(json.dumps(got, indent=0, sort_keys=True) + "\n")
        return
    want = json.loads(DIGESTS.read_text())
    if not any(k.startswith("real/") for k in got):  # no ../shared here: the project's own logs only
        want = {k: v for k, v in want.items() if not k.startswith(("real/", "seeds/"))}
    changed = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    assert not changed, (f"{len(changed)} answers differ from the pinned ones (intended? "
                         f"FORENSICS_UPDATE_FIXTURES=1 re-pins): {changed[:20]}")


def test_a_changed_answer_changes_its_digest():
    base = {"verdict": "failed", "root_cause": "gpu.out-of-memory", "phase": "serving", "evidence": [],
            "early_warnings": [], "incidents": []}
    assert _digest(base) != _digest({**base, "phase": "cuda-graph"})
    assert _digest(base) == _digest({**base, "confidence": 0.5})  # floats are not pinned
