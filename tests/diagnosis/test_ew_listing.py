"""The learned early-warning listing: the shipped file says what it was judged
on, and where a model ships it decides which scored lines are listed."""
import json

import pytest

from forensics.diagnosis.early_warnings import learned

LOG = (
    "INFO 05-01 10:00:00 [api_server.py:1000] vLLM API server version 0.9.0\n"
    "WARNING 05-01 10:00:01 [hf.py:10] No HF token found: set HF_TOKEN to access gated repositories\n"
    "ERROR 05-01 10:00:02 [core.py:500] huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access "
    "gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.\n")


def test_the_shipped_file_records_its_held_out_judgement() -> None:
    data = json.loads(learned.MODEL_PATH.read_text(encoding="utf-8"))
    assert data["features"] == list(learned.FEATURES) and len(data["weights"]) == len(learned.FEATURES)
    cv = data["meta"]["crossval"]["overall"]
    lo, bo = cv["learned"], cv["bar"]
    should = lo["found"] >= bo["found"] and lo["per_failure"] <= 3 and lo["other_lines"] <= bo["other_lines"]
    assert data["meta"]["ships"] == should
    assert lo["labelled"] == bo["labelled"] > 0


@pytest.fixture
def model_file(tmp_path, monkeypatch):
    def write(weights: dict[str, float], bias: float, threshold: float, ships: bool = True) -> None:
        path = tmp_path / "early_warning.json"
        path.write_text(json.dumps({"features": list(learned.FEATURES),
                                    "weights": [weights.get(f, 0.0) for f in learned.FEATURES],
                                    "bias": bias, "threshold": threshold, "meta": {"ships": ships}}))
        monkeypatch.setattr(learned, "MODEL_PATH", path)
        learned._CACHE.clear()
    yield write
    learned._CACHE.clear()


def warnings_of(text: str) -> list[int]:
    from forensics import classify_text

    return [w["line"] for w in classify_text(text)["early_warnings"]]


def test_a_shipped_model_decides_the_listing(model_file, monkeypatch) -> None:
    from forensics.diagnosis.early_warnings import linking

    monkeypatch.setattr(linking, "FEW", 0)  # (one candidate: the few rule would list it whatever the model says)
    assert warnings_of(LOG) == [2]  # the hand-set bar lists the token warning
    model_file({"level_WARNING": -20.0}, 0.0, 0.5)  # a model that never lists a WARNING line
    assert warnings_of(LOG) == []
    model_file({"level_WARNING": 20.0}, -10.0, 0.5)
    assert warnings_of(LOG) == [2]


def test_a_model_that_did_not_ship_is_not_used(model_file) -> None:
    model_file({"level_WARNING": -20.0}, 0.0, 0.5, ships=False)
    assert learned.listing_model() is None
    assert warnings_of(LOG) == [2]


# A hang after a collective's peer never connected: the Gloo notice scores under the bar (1.7) and is the
# only candidate; the floor lists it. The same shape with a line that heads the failure's own report
# ("request failed (...):", then the traceback) lists nothing: that line is the failure speaking.
GLOO_HANG = (
    "[2026-01-04 02:20:00] Load weight end. type=Qwen3ForCausalLM, avail mem=60.10 GB\n"
    "WARNING: rank 1 could not reach rank 0\n"
    "[2026-01-04 02:53:29] Watchdog timeout (self.watchdog_timeout=300)\n")
# gloo's own report that a peer is not connected is wording of a class (peer-not-connected): over the bar
GLOO_NOT_CONNECTED = GLOO_HANG.replace("WARNING: rank 1 could not reach rank 0", "[Gloo] Rank 1 is NOT connected to: [0]")
HEADED_FAILURE = (
    "INFO 05-01 10:00:00 toyserve starting\n"
    "toyserve ERROR request failed (bs=1, seq=16):\n"
    "Traceback (most recent call last):\n"
    '  File "serve.py", line 10, in <module>\n'
    "    run()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def test_the_strongest_candidate_under_the_bar_is_listed_from_the_floor(monkeypatch) -> None:
    from forensics import classify_text
    from forensics.diagnosis.early_warnings import linking

    # (bars over the warning's score, whatever ships: the floor is what this test is about)
    monkeypatch.setattr(linking, "LIST_THRESHOLD", 1.7)
    monkeypatch.setattr(linking, "WARNED_BAR", 1.7)
    monkeypatch.setattr(linking, "FEW", 0)  # (the only candidate: the few rule would list it whatever the bars)
    got = classify_text(GLOO_HANG)["early_warnings"]
    assert [w["line"] for w in got] == [2]
    assert linking.BEST_FLOOR <= got[0]["score"] < linking.LIST_THRESHOLD
    monkeypatch.setattr(linking, "BEST_FLOOR", 99.0)
    assert warnings_of(GLOO_HANG) == []
    monkeypatch.setattr(linking, "WARNED_BAR", 1.0)  # a line printed as a warning, listed from the warned bar
    assert warnings_of(GLOO_HANG) == [2]
    got = classify_text(GLOO_NOT_CONNECTED)["early_warnings"]
    assert [w["line"] for w in got] == [2] and got[0]["score"] >= linking.LIST_THRESHOLD
    assert "peer-not-connected" in got[0]["why"]


def test_a_line_that_heads_the_failures_report_is_not_listed_from_the_floor(monkeypatch) -> None:
    from forensics.diagnosis.early_warnings import linking

    assert warnings_of(HEADED_FAILURE) == []
    monkeypatch.setattr(linking, "_heads_what_follows", lambda text: False)
    assert warnings_of(HEADED_FAILURE) == [2]  # (it scores above the floor: the colon is what keeps it out)


def test_the_warned_bar_lists_only_lines_printed_at_a_warning_level() -> None:
    """Two candidates of one score under the bar: the one its program printed as a warning is listed
    from the warned bar, the INFO progress line is not; a line that heads the failure's report is not
    listed from it either."""
    from forensics.diagnosis.early_warnings import linking

    scored = {3: {"line": 3, "text": "Load weight end. avail mem=60.10 GB", "score": 0.5, "count": 1, "_level": None},
              5: {"line": 5, "text": "rank 1 could not reach rank 0", "score": 0.5, "count": 1, "_level": "WARNING"},
              7: {"line": 7, "text": "request failed (bs=1):", "score": 0.5, "count": 1, "_level": "ERROR"}}
    assert [w["line"] for w in linking._rank(scored, None, 1.2, 99.0, 0.0)] == [5]
    assert linking._rank(scored, None, 1.2, 99.0, 1.2) == []


# A pasted excerpt: vLLM's KV-cache budget line, then the engine's death, its cause not named. The budget
# line is an INFO line healthy start-ups print too (it scores under every bar), but it is the only line
# before the failure: a reader reads it first.
PASTED = (
    "INFO 05-01 10:00:00 [gpu_worker.py:300] Available KV cache memory: 1.71 GiB\n"
    "ERROR 05-01 10:00:02 [core.py:500] EngineCore failed to start.\n"
    "ERROR 05-01 10:00:02 [core.py:500] RuntimeError: Engine core initialization failed. See root cause above.\n")
# The same shape before a compile failure: a timing line is no warning of it (not worth reading alone).
TIMED = (
    "INFO 05-01 10:00:00 [loader.py:300] Loading weights took 3.41 seconds\n"
    "ERROR 05-01 10:00:02 [build.py:10] RuntimeError: Error building extension 'fused_kernels': ninja: build stopped\n")


def test_a_failure_with_few_candidates_lists_those_worth_reading(monkeypatch) -> None:
    from forensics import classify_text
    from forensics.diagnosis.early_warnings import linking

    got = classify_text(PASTED)
    assert [w["line"] for w in got["early_warnings"]] == [1]
    assert got["early_warnings"][0]["score"] < linking.BEST_FLOOR  # listed by the few rule, not a bar
    assert warnings_of(TIMED) == []
    monkeypatch.setattr(linking, "FEW", 0)
    assert warnings_of(PASTED) == []
