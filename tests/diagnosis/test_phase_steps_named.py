"""Issue 27 item 4 (fix-phase5): what the frames and lines of a log say about its step, on lines built
here around the wording the programs print (never copied from the corpora): a tokenizer or processor
built from the arguments, the Hub's download, a listening socket refused, an engine whose start-up
finished (warmup until the server says it is ready)."""
from __future__ import annotations

from helpers import classify_lines as _run, frames_traceback

_tb = frames_traceback


_ARGS = "INFO 06-01 10:00:00 [utils.py:326] non-default args: {'model': 'org/some-vl-model'}"


def test_a_processor_built_from_the_arguments_is_launch_not_the_load():
    # vLLM builds the multimodal processor (transformers' from_pretrained) before any weight is read.
    d = _run([_ARGS, *_tb([("vllm/v1/engine/core.py", "__init__"),
                           ("vllm/transformers_utils/processor.py", "cached_processor_from_config"),
                           ("vllm/transformers_utils/processor.py", "get_processor"),
                           ("transformers/processing_utils.py", "from_pretrained")],
                          "TypeError: SomeProcessor.__init__() got multiple values for argument 'tokenizer'")])
    assert d["verdict"] == "failed" and d["phase"] == "launch"


def test_the_hubs_download_is_the_load_and_a_refused_repo_id_is_not():
    fetch = [("app.py", "main"), ("huggingface_hub/file_download.py", "hf_hub_download"),
             ("huggingface_hub/file_download.py", "_raise_on_head_call_error")]
    d = _run(_tb(fetch, "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo."))
    assert d["phase"] == "load-weights"
    # the argument check refused the id before any download (no frame of the hub's download itself)
    refused = [("sglang/srt/utils/hf_transformers_utils.py", "get_config"),
               ("transformers/utils/hub.py", "cached_files"),
               ("huggingface_hub/utils/_validators.py", "validate_repo_id")]
    d = _run(_tb(refused, "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name'"))
    assert d["phase"] == "launch"


def test_an_address_in_use_after_the_model_was_fetched_never_listened():
    d = _run(["Fetching 5 files: 100%|##########| 5/5 [00:00<00:00, 9.87it/s]",
              "INFO:     Started server process [4242]",
              "ERROR:    [Errno 98] Address already in use"])
    assert d["verdict"] == "failed" and d["phase"] == "launch"


def test_an_address_in_use_once_the_server_answered_requests_is_another_socket_refused_while_serving():
    # it had listened and served: the socket refused is an exporter's, not the server's own (review22)
    d = _run(["INFO:     Application startup complete.",
              *['INFO:     10.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 200 OK'] * 3,
              "INFO 06-01 10:05:00 [widget_exporter.py:10] Starting the widget exporter on port 9400",
              *_tb([("widget_exporter/server.py", "start")], "OSError: [Errno 98] Address already in use")])
    assert d["verdict"] == "failed" and d["phase"] == "serving"


_DONE = "INFO 06-01 10:01:00 [core.py:283] init engine (profile, create kv cache, warmup model) took 6.57 seconds"


def test_an_engine_whose_start_up_finished_is_warmup_until_the_server_says_ready():
    # vLLM's "init engine (profile, create kv cache, warmup model) took" ends the engine's own start-up, not the
    # server's: read as ready it lost 5 public logs net (fix-phase5; the labels of logs ending there say warmup
    # 9 times, ready 4), so readiness stays the server's line and a failure before it is warmup.
    up = ["INFO 06-01 10:00:40 [gpu_model_runner.py:3000] Graph capturing finished in 5 secs, took 0.40 GiB", _DONE]
    d = _run(up)
    assert d["verdict"] == "starting" and d["phase"] == "warmup"
    d = _run([*up, "RuntimeError: something the signatures do not know went wrong"])
    assert d["verdict"] == "failed" and d["phase"] == "warmup"
    ready = [*up, "INFO:     Application startup complete."]
    assert _run(ready)["phase"] == "ready"
    d = _run([*ready, "RuntimeError: something the signatures do not know went wrong"])
    assert d["verdict"] == "failed" and d["phase"] == "serving"
