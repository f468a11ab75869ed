"""The learned decisions (issue 27): their shipped models load and answer, the rules
stay decisive where they must, and failure detection reads the end of a lifetime."""
from __future__ import annotations

import json

import pytest

from conftest import run_cli
from forensics.diagnosis.decision import death, learned
from forensics.diagnosis.decision.label_features import FEATURES, DecisionInputs, evidence_kind, pair_vector
from forensics.diagnosis.decision.label_model import MODEL_PATH, label_model
from forensics.diagnosis.decision.pair_model import MODEL_DIR, PairModel
from forensics.diagnosis.early_warnings.context import context_tokens, matching
from forensics.diagnosis.arbitrate import Decision


def test_every_shipped_model_names_its_features_and_its_held_out_figures():
    for name in ("decision.json", "phase.json", "evidence.json", "death.json"):
        data = json.loads((MODEL_DIR / name).read_text())
        assert "crossval" in data["meta"], name
    meta = json.loads(MODEL_PATH.read_text())["meta"]
    assert set(meta["ships"]) >= {"label", "confidence", "phase"}
    assert "active" in json.loads((MODEL_DIR / "evidence.json").read_text())
    assert meta["rows"] >= 300 and any(not g.startswith("project:") for g in meta["groups"])


def test_label_probabilities_are_a_distribution_and_follow_the_evidence():
    model = label_model()
    assert model is not None
    strong = DecisionInputs(rule_label="net.port-in-use", rule_strength="strong", rule_conf=0.95, rule_priority=80)
    p = model.proba(strong)
    assert sum(p.values()) == pytest.approx(1.0)
    assert max(p, key=p.get) == "net.port-in-use" and p["net.port-in-use"] > 0.75  # a strong signature alone: clearly first (0.79 after the fifteenth retrain)
    unsure = DecisionInputs(clf={"gpu.out-of-memory": 0.4, "host.out-of-memory": 0.35, "unknown": 0.25})
    q = model.proba(unsure)
    assert q["gpu.out-of-memory"] > q["env.abi-mismatch"]
    assert max(q.values()) < p["net.port-in-use"]  # less sure with less evidence


def test_a_conclusive_strong_signature_keeps_its_label():
    strong = DecisionInputs(rule_label="env.module-missing", rule_strength="strong", rule_conf=0.95,
                            rule_priority=90, clf=None)
    rules = Decision("env.module-missing", 0.95, "signature", [])
    got = learned.decide(strong, rules, rules_not_conclusive=False)
    assert got.label == "env.module-missing" and 0.5 < got.confidence <= 0.999


def test_pair_features_differ_only_by_the_candidate():
    inp = DecisionInputs(rule_label="dist.nccl", rule_strength="weak", clf={"dist.nccl": 0.6, "hang.timeout": 0.4})
    assert pair_vector(inp, "dist.nccl") != pair_vector(inp, "hang.timeout")
    assert sum(pair_vector(inp, "env.abi-mismatch")) == 1.0  # only its bias


def test_each_kind_of_evidence_is_named():
    assert evidence_kind(DecisionInputs(rule_label="dist.nccl", rule_strength="strong")) == "strong"
    assert evidence_kind(DecisionInputs(rule_label="dist.nccl", rule_strength="strong",
                                        clf={"dist.nccl": 0.6})) == "strong+classifier"
    assert evidence_kind(DecisionInputs(rule_label="dist.nccl", rule_strength="weak")) == "weak"
    assert evidence_kind(DecisionInputs(clf={"dist.nccl": 0.6})) == "classifier"
    assert evidence_kind(DecisionInputs()) == "none"


def _toy_model(temperatures: dict[str, float] | None) -> PairModel:
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("rule_strong")] = 4.0
    weights[FEATURES.index("clf")] = 4.0
    data = {"features": list(FEATURES), "classes": ["dist.nccl", "hang.timeout"], "weights": weights,
            "temperature": 1.0}
    if temperatures is not None:
        data["temperatures"] = temperatures
    return PairModel(data, FEATURES, pair_vector, evidence_kind)


def test_a_kind_of_evidence_is_as_sure_as_its_own_temperature_says():
    # The classifier alone was right less often held out than a strong signature at the same
    # logit: its own, higher temperature makes it less sure; the strong signature's is untouched.
    alone = DecisionInputs(clf={"dist.nccl": 1.0})
    strong = DecisionInputs(rule_label="dist.nccl", rule_strength="strong")
    shared, apart = _toy_model(None), _toy_model({"classifier": 2.0})
    assert apart.proba(alone)["dist.nccl"] < shared.proba(alone)["dist.nccl"]
    assert apart.proba(strong) == shared.proba(strong)
    assert apart.temperature_of(DecisionInputs()) == 1.0  # a kind without its own: the shared one


def test_the_death_detector_reads_real_failure_wording():
    model = death.death_model()
    assert model is not None
    dead = model.score('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].')
    alive = model.score("INFO 05-01 12:00:00 api_server.py:100] Started server process [4242]")
    assert dead > model.threshold > alive


def _classify(tmp_path, text: str) -> dict:
    p = tmp_path / "x.log"
    p.write_text(text)
    proc = run_cli("classify", "--format", "json", str(p))
    return json.loads(proc.stdout.splitlines()[0])


def test_a_start_up_that_ends_in_a_container_runtime_error_is_called_failed(tmp_path):
    log = ("+ docker run --gpus all -p 8000:8000 vllm/vllm-openai:latest --model m\n"
           "Unable to find image 'vllm/vllm-openai:latest' locally\n"
           "latest: Pulling from vllm/vllm-openai\n"
           "Status: Downloaded newer image for vllm/vllm-openai:latest\n"
           "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver "
           "to a newer version, or use an earlier cuda container: unknown.\n")
    res = _classify(tmp_path, log)
    assert res["verdict"] == "failed" and "requirement error" in res["evidence"][0]["text"]


def test_an_error_worded_warning_the_server_survived_is_not_a_death(tmp_path):
    lines = ["INFO 05-01 12:00:00 [api_server.py:100] vLLM API server version 0.9.0",
             "WARNING 05-01 12:00:01 [custom_all_reduce.py:80] Custom allreduce is disabled because your "
             "platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
             "disable_custom_all_reduce=True explicitly."]
    lines += [f"INFO 05-01 12:00:{i:02d} [loader.py:50] Loading safetensors checkpoint shards: {i}% Completed"
              for i in range(2, 50)]
    res = _classify(tmp_path, "\n".join(lines) + "\n")
    assert res["verdict"] != "failed"


def test_a_warning_an_early_warning_rule_knows_is_not_where_the_program_died(tmp_path):
    # torchao goes on without an extension that did not load (Xinference's start-up, public
    # batch-47/024): the detector may not read those lines as the death of a start-up still going.
    so = "/opt/conda/lib/python3.11/site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so"
    lines = [f"Failed to load {so}: Could not load this library: {so}",
             "2026-04-22 13:43:46,961 xinference.deploy.local 1 INFO     No response from process after 10 seconds",
             f"Failed to load {so}: Could not load this library: {so}",
             "2026-04-22 13:43:57,451 xinference.core.supervisor 16 INFO     Xinference supervisor 0.0.0.0:25558 started"]
    assert _classify(tmp_path, "\n".join(lines) + "\n")["verdict"] != "failed"


def test_context_tokens_name_gpu_backends_and_model_kind():
    assert "arch:blackwell" in context_tokens("NVIDIA B200 with CUDA capability sm_100")
    assert "gpu:memory-over-150gb" in context_tokens("[2026-05-30 14:38:27 TP0] Load weight begin. avail mem=265.77 GB")
    assert "gpu:memory-over-150gb" not in context_tokens("Load weight begin. avail mem=78.50 GB")
    toks = context_tokens("server_args=ServerArgs(attention_backend='trtllm_mla', mm_attention_backend=None)")
    assert "backend:trtllm_mla" in toks and "backend:none" not in toks
    assert "model:multimodal" in context_tokens("Load weight end. type=KimiK25ForConditionalGeneration, dtype=bf16")
    assert matching(("backend:*cute*", "arch:blackwell"), frozenset({"backend:flash_attn_cute"})) == ["backend:flash_attn_cute"]


def test_a_serving_health_check_deadline_is_a_failure_even_with_stats_after_it(tmp_path):
    # Ray Serve marks the replica unhealthy while its engine, busy, still prints stats: the
    # controller restarts it, so the stats lines after the deadline are not survival.
    log = ("1758 -- Didn't receive health check response for replica Replica(id='r1', deployment='vLLM:m', "
           "app='App') after 10.0s, marking it unhealthy.\n"
           "(_EngineBackgroundProcess pid=1) INFO 06-25 04:39:52 [metrics.py:486] Avg prompt throughput: "
           "27408.8 tokens/s, Avg generation throughput: 4.9 tokens/s, Running: 49 reqs, Pending: 951 reqs\n")
    res = _classify(tmp_path, log)
    assert res["verdict"] == "failed" and res["root_cause"] == "hang.timeout"


def test_llama_cpp_bind_failure_and_ggml_abort_are_failures(tmp_path):
    bind = ("0.00.064.257 I cmn  common_param: common_params_print_info: verbosity = 3\n"
            "0.00.065.436 E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 9090\n"
            "0.00.065.441 I srv    operator(): operator(): cleaning up before exit...\n"
            "0.00.065.581 E srv  llama_server: exiting due to HTTP server error\n")
    res = _classify(tmp_path, bind)
    assert res["verdict"] == "failed" and res["root_cause"] == "net.port-in-use"
    forced = ("main: server is listening on http://127.0.0.1:8080\n"
              "srv  update_slots: all slots are idle\n"
              "Received second interrupt, terminating immediately.\n"
              "/src/ggml/src/ggml-metal/ggml-metal-device.m:618: GGML_ASSERT([rsets->data count] == 0) failed\n")
    assert _classify(tmp_path, forced)["verdict"] != "failed"  # the operator's forced exit, not a failure


def test_the_label_prior_reads_the_proving_line_kind_not_its_family():
    from forensics.diagnosis.decision.label_prior import count_table, keys, prior_of

    assert "exc:ImportError" in keys("ImportError: DLL load failed while importing _turbomind")
    assert "code:cudaErrorPeerAccessUnsupported" in keys("CUDA error cudaErrorPeerAccessUnsupported at x.cu:3")
    assert "code:HSA_STATUS_ERROR_EXCEPTION" in keys("Callback: Queue aborting with error : HSA_STATUS_ERROR_EXCEPTION:")
    assert "code:errno104" in keys("ConnectionResetError: [Errno 104] Connection reset by peer")
    assert keys(None) == () and keys("") == ()
    rows = [(keys("ImportError: a"), "env.module-missing", "vllm"), (keys("ImportError: b"), "env.module-missing", "tgi"),
            (keys("ImportError: c"), "env.abi-mismatch", "tgi"),
            (keys("KeyError: 'x'"), "config.model-load", "vllm"), (keys("KeyError: 'y'"), "config.model-load", "vllm")]
    table = count_table(rows)
    assert "exc:KeyError" not in table  # one family's wording says nothing of the next
    p = prior_of(table, "ImportError: libfoo.so")
    assert max(p, key=p.get) == "env.module-missing" and sum(p.values()) < 1.0  # smoothed
    assert prior_of(table, "nothing known here") == {}


def test_a_model_trained_before_the_prior_features_answers_as_it_did():
    from forensics.diagnosis.decision.label_features import PRIOR

    data = json.loads(MODEL_PATH.read_text())
    # Trained before the prior: its features end where the prior's begin (those appended later,
    # the proving line's wording, came after the prior and are missing from it too).
    cut = min(data["features"].index(f) for f in PRIOR if f in data["features"])
    old = dict(data, features=data["features"][:cut], weights=data["weights"][:cut])
    old.pop("prior", None)
    model = PairModel(old, FEATURES, pair_vector, evidence_kind)
    inp = DecisionInputs(clf={"gpu.out-of-memory": 0.4, "host.out-of-memory": 0.35},
                         prior={"gpu.out-of-memory": 0.9})
    assert model.proba(inp) == model.proba(DecisionInputs(clf=inp.clf))  # the prior weighs 0 there
    assert not model.prior


def test_the_catalogues_label_of_the_proving_line_is_read_as_its_own_input():
    """vLLM's own message (mined from its wheels) that the KV cache cannot hold one sequence: the
    catalogue's rules label it a device-memory shortfall, whichever family's log prints it."""
    from forensics.diagnosis.decision.label_features import INDEX, DecisionInputs, pair_vector
    from forensics.diagnosis.decision.label_prior import catalogue_says

    line = ("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in "
            "KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.")
    said = catalogue_says(line)
    assert "gpu.out-of-memory" in said
    assert catalogue_says("INFO 04-02 10:21:01 model_runner.py:1563] hello there") == ()
    inp = DecisionInputs(clf={"gpu.out-of-memory": 0.3}, cat_says=said)
    x = pair_vector(inp, "gpu.out-of-memory")
    assert x[INDEX["cat_says"]] == 1.0 and x[INDEX["cat_says_without_rule"]] == 1.0
    assert x[INDEX["cat_says_x_clf"]] == 0.3
    assert pair_vector(inp, "unknown")[INDEX["unknown_when_cat_says"]] == 1.0
    assert pair_vector(inp, "dist.nccl")[INDEX["cat_says"]] == 0.0


def test_the_death_detector_reads_build_and_command_line_errors_as_shapes():
    # Build tools and argument parsers word their deaths alike across programs: CMake, make in
    # any locale, a compiler, argparse and cobra (docker's CLI) rejecting an argument.
    assert "__build_error__" in death.tokens("CMake Error at CMakeLists.txt:479 (file):")
    assert "__build_error__" in death.tokens("make: *** [Makefile:64：devel_build] 错误 125")
    assert "__build_error__" in death.tokens("csrc/ops.cu:12:10: fatal error: cuda_fp8.h: No such file or directory")
    assert "__build_error__" not in death.tokens("CMake Warning at CMakeLists.txt:40 (message):")
    assert "__usage_error__" in death.tokens("unknown flag: --trt_root")
    assert "__usage_error__" in death.tokens("api_server.py: error: unrecognized arguments: --tp-szie 8")
    assert "__usage_error__" not in death.tokens("INFO 05-01 12:00:00 [arg_utils.py:100] non-default args: {'tp': 8}")


def test_unknown_reads_how_the_failure_showed_itself_where_no_signature_named_it():
    """A bare wrapper line, a death with neither a traceback nor a wrapper: read beside ``unknown`` only
    where no signature matched."""
    from forensics.diagnosis.decision.label_features import INDEX

    wrapped = DecisionInputs(clf={"config.model-load": 0.5}, wrapper=True, ends_in_error=True)
    assert pair_vector(wrapped, "unknown")[INDEX["unknown_when_wrapper"]] == 1.0
    assert pair_vector(wrapped, "unknown")[INDEX["unknown_when_bare_death"]] == 0.0
    assert pair_vector(wrapped, "config.model-load")[INDEX["unknown_when_wrapper"]] == 0.0
    died = DecisionInputs(clf={"config.model-load": 0.5}, ends_in_error=True)
    assert pair_vector(died, "unknown")[INDEX["unknown_when_bare_death"]] == 1.0
    in_traceback = DecisionInputs(clf={"config.model-load": 0.5}, wrapper=True, ends_in_error=True, traceback=True)
    named = DecisionInputs(rule_label="dist.nccl", rule_strength="strong", rule_priority=80, wrapper=True)
    for inp in (in_traceback, named):
        x = pair_vector(inp, "unknown")
        assert x[INDEX["unknown_when_wrapper"]] == x[INDEX["unknown_when_bare_death"]] == 0.0


def test_a_model_trained_before_the_shape_features_answers_as_it_did():
    from forensics.diagnosis.decision.label_features import SHAPE

    data = json.loads(MODEL_PATH.read_text())
    cut = min((data["features"].index(f) for f in SHAPE if f in data["features"]), default=len(data["features"]))
    old = dict(data, features=data["features"][:cut], weights=data["weights"][:cut])
    model = PairModel(old, FEATURES, pair_vector, evidence_kind)
    inp = DecisionInputs(clf={"config.model-load": 0.4, "unknown": 0.3}, wrapper=True, ends_in_error=True)
    assert model.proba(inp) == model.proba(DecisionInputs(clf=inp.clf))  # they weigh 0 there
