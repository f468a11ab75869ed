"""Issue 27 (phase on healthy logs): LMDeploy's start-up as its lines say it. TurboMind building its
model from the checkpoint is the weights' load; the api_server's HINT lines come once the engine is
built and before uvicorn listens, so a log that ends on them is still starting (warm-up), and uvicorn's
"Application startup complete" is the readiness. Lines built here around LMDeploy's wording."""
from __future__ import annotations

from forensics.api import classify

_BUILD = ["2024-11-09 09:12:08,001 - lmdeploy - WARNING - model_source: hf_model",
          "[TM][WARNING] [LlamaTritonModel] `max_context_token_num` is not set, default to 8192.",
          "2024-11-09 09:12:09,487 - lmdeploy - WARNING - turbomind.py:231 - get 171 model params"]
_HINT = ["HINT:    Please open http://0.0.0.0:23333 in a browser for detailed api usage!!!"] * 3
_UVICORN = ["INFO:     Started server process [7776]", "INFO:     Waiting for application startup.",
            "INFO:     Application startup complete.",
            "INFO:     Uvicorn running on http://0.0.0.0:23333 (Press CTRL+C to quit)"]


def _answer(lines: list[str]) -> tuple[str, str]:
    d = classify("\n".join(lines) + "\n")
    return d["verdict"], d["phase"]


def test_turbomind_building_its_model_is_the_load():
    assert _answer(_BUILD) == ("starting", "load-weights")


def test_the_hint_lines_are_before_the_server_listens():
    assert _answer(_BUILD + _HINT) == ("starting", "warmup")
    assert _answer(_BUILD + _HINT + _UVICORN[:2]) == ("starting", "warmup")


def test_uvicorn_up_after_the_hint_is_ready():
    assert _answer(_BUILD + _HINT + _UVICORN) == ("ready", "ready")
