"""``phase_priors``' wording regexes on hostile lines: bounded time (its texts are cut to 4,000
characters, but a classify reads many of them)."""
from __future__ import annotations

import time

from forensics.diagnosis import phase_priors


def test_child_died_starting_is_linear_on_a_long_dashed_line():
    text = "a-" * 2_000  # a server's name tried from every word boundary, no "-server " after it
    t = time.perf_counter()
    for _ in range(10):
        assert not phase_priors.child_died_starting([text])
    assert time.perf_counter() - t < 0.5


def test_child_died_starting_still_reads_a_supervisors_words():
    assert phase_priors.child_died_starting(["ERROR llama-server failed to start within timeout"])
    assert phase_priors.child_died_starting(["whisper-server process has terminated with exit code 1"])
