"""Traceback assembly across handled and fatal tracebacks of one start-up."""
from __future__ import annotations


from helpers import classify_lines as _run


def test_frames_after_an_exception_line_start_no_chain_in_that_traceback():
    # A plugin's traceback is printed bare and handled; the server logs the fatal one
    # later with its prefix on the header line only. The frames that follow belong
    # to the fatal traceback, not to the handled one (whose exception line came first).
    lines = [
        "[2026-12-01 09:14:01 TP0] Init JAX distributed begin.",
        "Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()",
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/__init__.py", line 369, in initialize',
        "    _check_cuda_versions(raise_on_first_error = True)",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "[2026-12-01 09:14:02 TP0] Load weight begin.",
        "[2026-12-01 09:14:04 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/srv/jax_server.py", line 24, in <module>',
        '    gpu = jax.devices("cuda")[0]',
        '  File "/venv/lib/python3.12/site-packages/jax/_src/xla_bridge.py", line 947, in _get_backend_uncached',
        "    raise RuntimeError(",
        "RuntimeError: Unknown backend cuda. Available backends are ['cpu']",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(3, 7), (9, 14)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].text.startswith("RuntimeError: jaxlib/cuda/versions_helpers.cc:135")
    assert tbs[1].text == "RuntimeError: Unknown backend cuda. Available backends are ['cpu']"
    assert _run(lines)["verdict"] == "failed"


def test_a_paste_that_lost_its_indentation_keeps_one_traceback():
    # A web page's rendering lost every leading space: each frame's source line
    # stands flush left after its File line, where an exception line would. The
    # frames and the exception still follow the header in order: one traceback,
    # a request handler's (uvicorn's run_asgi), which the server survives.
    lines = [
        "INFO: 127.0.0.1:46540 - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error",
        "ERROR: Exception in ASGI application",
        "Traceback (most recent call last):",
        'File "/opt/py3/lib/python3.10/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi',
        "result = await app( # type: ignore[func-returns-value]",
        'File "/opt/py3/lib/python3.10/site-packages/fastapi/routing.py", line 212, in run_endpoint_function',
        "return await dependant.call(**values)",
        'File "/srv/api_server.py", line 527, in chat_completions_v1',
        "choice_data = ChoiceModel(",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ChoiceModel",
        "finish_reason",
        "  Input should be 'stop' or 'length' [type=literal_error, input_value='error', input_type=str]",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(3, 12)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].data["exc_type"] == "pydantic_core._pydantic_core.ValidationError"
    assert [f.function for f in tbs[0].data["frames"]] == ["run_asgi", "run_endpoint_function", "chat_completions_v1"]
    assert not tbs[0].data["truncated"]
    assert _run(lines)["verdict"] != "failed"


def test_a_flush_left_exception_after_a_flush_left_file_line_still_ends_the_frames():
    # No source line (the file was not readable): the exception follows the File line.
    lines = [
        "Traceback (most recent call last):",
        'File "/srv/compile.py", line 9, in build',
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch._dynamo.exc.BackendCompilerFailed"


def test_blank_lines_between_frames_keep_one_traceback():
    # TGI's launcher relays a shard's traceback with a blank line between frames, and
    # a --timestamps log gives each blank line a bare time stamp. A warning another
    # part of the program printed meanwhile is not the exception.
    lines = [
        "Traceback (most recent call last):",
        "",
        '  File "/opt/conda/bin/text-generation-server", line 8, in <module>',
        "    sys.exit(app())",
        "2024-06-05T01:56:48.959585811Z",
        '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/__init__.py", line 775, in get_model',
        '    raise NotImplementedError(FLASH_ATT_ERROR_MESSAGE.format("Sharded Mixtral"))',
        "",
        "NotImplementedError: Sharded Mixtral requires Flash Attention enabled models.",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(1, 9)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].data["exc_type"] == "NotImplementedError" and len(tbs[0].data["frames"]) == 2
    warned = ["Traceback (most recent call last):",
              '  File "/opt/conda/lib/python3.10/site-packages/typer/core.py", line 216, in _main',
              "    rv = self.invoke(ctx)",
              "/opt/conda/lib/python3.10/site-packages/huggingface_hub/file_download.py:1132: FutureWarning: "
              "`resume_download` is deprecated"]
    tbs = [e for e in parse("\n".join(warned) + "\n") if e.kind == "traceback"]
    assert tbs[0].data["exc_type"] is None and tbs[0].data["truncated"]


def test_two_blank_lines_end_a_cut_traceback():
    lines = [
        "Traceback (most recent call last):",
        '  File "/srv/app.py", line 3, in <module>',
        "    main()",
        "",
        "",
        "Loading model shards",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["truncated"] and tbs[0].end_line == 3


def test_a_traceback_under_fastchat_s_stderr_prefix_is_one_traceback():
    # FastChat's workers relay stderr through their logger: every line of a
    # traceback gets "DATE TIME | ERROR | stderr | " before its own indentation.
    # The prefix ends at the one space after the last bar; the indentation is the
    # message's, so every line carries the same prefix and the frames stay one
    # traceback whose exception is the operator's Ctrl-C (a stop, not a failure).
    head = "2025-05-15 04:58:27 | ERROR | stderr | "
    lines = [
        "2025-05-15 04:58:24 | INFO | model_worker | Loading the model ['Qwen2.5-7B'] on worker eab961bd ...",
        head + "Traceback (most recent call last):",
        head + '  File "/env/lib/python3.10/site-packages/fastchat/model/model_adapter.py", line 353, in load_model',
        head + "    model, tokenizer = adapter.load_model(model_path, kwargs)",
        head + '  File "/env/lib/python3.10/site-packages/transformers/modeling_utils.py", line 789, in _load_state_dict_into_meta_model',
        head + "    param = param.to(casting_dtype)",
        head + "KeyboardInterrupt",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line, t.exceptions[-1].exc_type, len(t.exceptions[-1].frames)) for t in tbs] == [
        (2, 7, "KeyboardInterrupt", 2)]
    assert _run(lines)["verdict"] != "failed"


def _torchserve(ms: int, text: str) -> str:
    return f"2025-03-27T14:54:11,{ms:03d} [INFO ] W-9000-my_tc_1.0-stdout MODEL_LOG - {text}"


def test_a_traceback_printed_over_a_clock_tick_stays_one_traceback():
    # log4j (TorchServe's frontend relaying a worker's stdout) stamps every line with
    # milliseconds: the traceback of one request is printed over a tick of the clock.
    # The repeated header differs only in its clock: still one record, one traceback,
    # and it ran inside TorchServe's predict: one request's error, not the worker's death.
    body = [
        (428, "Invoking custom service failed."),
        (428, "Traceback (most recent call last):"),
        (428, '  File "/venv/lib/python3.10/site-packages/ts/service.py", line 135, in predict'),
        (428, "    ret = self._entry_point(input_batch, self.context)"),
        (429, '  File "/tmp/models/7fc4/handler.py", line 176, in preprocess'),
        (429, "    input_text_target = ast.literal_eval(input_text)"),
        (429, "SyntaxError: invalid syntax"),
    ]
    lines = [_torchserve(ms, t) for ms, t in body]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(2, 7)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].text == "SyntaxError: invalid syntax"
    # a clock far apart is another record: the traceback ends with its frames cut
    far = lines[:4] + [line.replace("14:54:11,429", "14:54:19,429") for line in lines[4:]]
    assert [(t.line, t.end_line) for t in parse("\n".join(far) + "\n") if t.kind == "traceback"][0] == (2, 4)


