"""Builders for the configuration family: a model that cannot be loaded, an invalid argument."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, pick, tb
from .frames import head
from .vocab import NEW_ARCHS, SGLANG_USAGE, VLLM_USAGE


# What a variant drew: phase, exception lines, proving substring, precursor.
Drawn = tuple[str, list[str], str, Precursor | None]


def _raised(phase: str, stack: list[str], lines: list[str], fatal: str) -> Drawn:
    """A variant that ends in one traceback and no precursor: the stack
    (outermost frame first), then the exception's lines. The caller builds
    ``stack`` before ``lines``, the order in which they draw from the run's rng."""
    return phase, tb(stack) + lines, fatal, None


def _ml_arch(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    r = c.rng
    phase, pre = "launch", None
    arch = pick(r, NEW_ARCHS)
    if c.server == "sglang":
        exc = tb(head(c, "load-weights") + c.frames([("sglang/srt/model_loader/utils.py", "get_model_architecture", "architectures = resolve_transformers_arch(model_config, architectures)"),
                                                    ("sglang/srt/models/registry.py", "_raise_for_unsupported", "raise ValueError(")])) + [
            f"ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: dict_keys(['BaichuanForCausalLM', 'ChatGLMModel', 'CohereForCausalLM', 'DbrxForCausalLM', 'DeepseekForCausalLM', 'DeepseekV2ForCausalLM', 'DeepseekV3ForCausalLM', 'ExaoneForCausalLM', 'GemmaForCausalLM', 'Gemma2ForCausalLM', 'GPT2LMHeadModel', 'GraniteForCausalLM', 'LlamaForCausalLM', 'MistralForCausalLM', 'MixtralForCausalLM', 'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'Qwen3ForCausalLM', 'Qwen3MoeForCausalLM'])"]
        phase = "load-weights"
        fatal = f"Model architectures ['{arch}'] are not supported for now"
        if r.random() < 0.6:
            mod = arch.lower().replace("forcausallm", "").replace("forconditionalgeneration", "")
            pre = Precursor([f"Ignore import error when loading sglang.srt.models.{mod}: cannot import name '{arch.replace('ForCausalLM', 'Config').replace('ForConditionalGeneration', 'Config')}' from 'transformers' ({c.sp}/transformers/__init__.py)"],
                            f"Ignore import error when loading sglang.srt.models.{mod}", "launch", style="log", lead=(3, 60))
    else:
        msg = pick(r, [f"Model architectures ['{arch}'] failed to be inspected. Please check the logs for more details.",
                       f"Model architectures ['{arch}'] are not supported for now. Supported architectures: dict_keys(['AquilaModel', 'AquilaForCausalLM', 'ArcticForCausalLM', 'BaiChuanForCausalLM', 'BloomForCausalLM', 'LlamaForCausalLM', 'MistralForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'])"])
        if "inspected" in msg:
            pre = Precursor([f"Error in inspecting model architecture '{arch}'"], f"Error in inspecting model architecture '{arch}'", "launch",
                            style="vlog", level="ERROR", vfile="registry.py", lead=(0.05, 2))
        exc = tb(launch_frames + c.frames([("vllm/config/model.py" if c.gen != "v06" else "vllm/config.py", "__post_init__", "self.multimodal_config = self._init_multimodal_config()"),
                                           ("vllm/model_executor/models/registry.py", "inspect_model_cls", "return self._raise_for_unsupported(architectures)"),
                                           ("vllm/model_executor/models/registry.py", "_raise_for_unsupported", "raise ValueError(")])) + [
            f"ValueError: {msg}"]
        fatal = f"Model architectures ['{arch}']"
    return phase, exc, fatal, pre


def _ml_no_config(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    if c.server == "vllm" and c.rng.random() < 0.5:
        last = "ValueError: Could not detect config format for no config file found. Ensure your model has either config.json (HF format) or params.json (Mistral format)."
        fatal = "Could not detect config format for no config file found"
    else:
        last = f"OSError: {mp} does not appear to have a file named config.json. Checkout 'https://huggingface.co/{mp}/tree/None' for available files."
        fatal = "does not appear to have a file named config.json"
    return _raised("launch", launch_frames + c.frames([(f"{c.sp}/transformers/configuration_utils.py", "get_config_dict", "config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)", True),
                                                      (f"{c.sp}/transformers/utils/hub.py", "cached_files", "raise OSError(")]), [last], fatal)


def _ml_model_type(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    mt = pick(c.rng, ["qwen3_vl_moe", "qwen3_next", "glm4v_moe", "gpt_oss", "deepseek_v32", "gemma3n", "kimi_k2", "minimax_m2", "olmo3"])
    return _raised("launch", launch_frames + c.frames([(f"{c.sp}/transformers/models/auto/configuration_auto.py", "from_pretrained", "raise ValueError(")]), [
        f"ValueError: The checkpoint you are trying to load has model type `{mt}` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.",
        "", "You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, and the checkpoint is very new, then there may not be a release version that supports this model yet. In this case, you can get the most up-to-date code by installing Transformers from source with the command `pip install git+https://github.com/huggingface/transformers.git`"],
        f"has model type `{mt}` but Transformers does not recognize this architecture")


def _ml_safetensors(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    err = pick(c.rng, ["HeaderTooLarge", "MetadataIncompleteBuffer", "InvalidHeaderDeserialization", "incomplete metadata, file not fully covered"])
    return _raised("load-weights", head(c, "load-weights") + c.frames([("sglang/srt/model_loader/weight_utils.py" if c.server == "sglang" else "vllm/model_executor/model_loader/weight_utils.py",
                                                                       "safetensors_weights_iterator", "with safe_open(st_file, framework=\"pt\") as f:", True)]),
                   [f"safetensors_rust.SafetensorError: Error while deserializing header: {err}"], f"Error while deserializing header: {err}")


def _ml_tokenizer(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    tk = pick(c.rng, ["LlamaTokenizerFast", "Qwen2TokenizerFast", "PreTrainedTokenizerFast", "GemmaTokenizerFast"])
    return _raised("launch", launch_frames[:2] + c.frames([("sglang/srt/hf_transformers_utils.py" if c.server == "sglang" else "vllm/transformers_utils/tokenizer.py", "get_tokenizer", "tokenizer = AutoTokenizer.from_pretrained(", True),
                                                          (f"{c.sp}/transformers/tokenization_utils_base.py", "from_pretrained", "raise EnvironmentError(")]), [
        f"OSError: Can't load tokenizer for '{mp}'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure '{mp}' is the correct path to a directory containing all relevant files for a {tk} tokenizer."],
        f"Can't load tokenizer for '{mp}'")


def _ml_gated(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    r = c.rng
    repo = pick(r, ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "google/gemma-3-27b-it", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"])
    rid = f"Root=1-{r.randbytes(4).hex()}-{r.randbytes(12).hex()}"
    return _raised("launch", launch_frames + c.frames([(f"{c.sp}/huggingface_hub/utils/_http.py", "hf_raise_for_status", "raise _format(GatedRepoError, message, response) from e")]), [
        f"huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: {rid})", "",
        f"Cannot access gated repo for url https://huggingface.co/{repo}/resolve/main/config.json.",
        f"Access to model {repo} is restricted. You must have access to it and be authenticated to access it. Please log in."],
        "Cannot access gated repo for url")


def _ml_not_found(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    r = c.rng
    repo = pick(r, ["Qwen/Qwen3-8B-Instruct", "meta-llama/Llama-3.1-8B-instruct", "deepseek-ai/DeepSeek-V3.2", "openai/gpt-oss-20B", "Qwen/Qwen2.5-7B-Instruct-AWQ-4bit"])
    return _raised("launch", launch_frames + c.frames([(f"{c.sp}/huggingface_hub/utils/_http.py", "hf_raise_for_status", "raise _format(RepositoryNotFoundError, message, response) from e")]), [
        f"huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: Root=1-{r.randbytes(4).hex()}-{r.randbytes(12).hex()})", "",
        f"Repository Not Found for url: https://huggingface.co/{repo}/resolve/main/config.json.",
        "Please make sure you specified the correct `repo_id` and `repo_type`.",
        "If you are trying to access a private or gated repo, make sure you are authenticated. For more details, see https://huggingface.co/docs/huggingface_hub/authentication"],
        "Repository Not Found for url")


def _ml_no_weights(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    return _raised("load-weights", head(c, "load-weights") + c.frames([("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/default_loader.py", "_prepare_weights", "raise RuntimeError(")]),
                   [f"RuntimeError: Cannot find any model weights with `{mp}`"], "Cannot find any model weights with")


def _ml_keyerror(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    key = pick(c.rng, ["model.layers.0.mlp.experts.w13_weight", "model.layers.12.self_attn.qkv_proj.weight_scale", "lm_head.weight", "model.visual.blocks.0.attn.qkv.weight",
                       "model.layers.3.mlp.gate.e_score_correction_bias"])
    return _raised("load-weights", head(c, "load-weights") + c.frames([("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/default_loader.py", "load_weights" if c.server == "vllm" else "load_weights_and_postprocess", "model.load_weights(weights)" if c.server == "sglang" else "loaded_weights = model.load_weights(", True),
                                                                       ((f"sglang/srt/models/{c.model.arch.lower()[:6]}.py") if c.server == "sglang" else f"vllm/model_executor/models/{c.model.arch.lower()[:6]}.py", "load_weights", "param = params_dict[name]")]),
                   [f"KeyError: '{key}'"], f"KeyError: '{key}'")


def _ml_quant(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    q = pick(c.rng, ["mxfp4", "nvfp4", "modelopt_fp4", "w4a8", "fp8_pertensor", "auto-round"])
    return _raised("launch", launch_frames + c.frames([("sglang/srt/configs/model_config.py" if c.server == "sglang" else "vllm/config/model.py", "_verify_quantization", "raise ValueError(")]), [
        f"ValueError: Unknown quantization method: {q}. Must be one of ['awq', 'fp8', 'gptq', 'marlin', 'gptq_marlin', 'awq_marlin', 'bitsandbytes', 'compressed-tensors', 'moe_wna16', 'w8a8_int8', 'w8a8_fp8']."],
        f"Unknown quantization method: {q}")


def _ml_shard_missing(c: Ctx, mp: str, launch_frames: list[str]) -> Drawn:
    n = c.model.shards
    k = c.rng.randint(1, max(1, n))
    return _raised("load-weights", head(c, "load-weights") + c.frames([(f"{c.sp}/safetensors/torch.py", "load_file", "with safe_open(filename, framework=\"pt\", device=device) as f:")]),
                   [f"FileNotFoundError: No such file or directory: \"{mp}/model-{k:05d}-of-{n:05d}.safetensors\""], f"model-{k:05d}-of-{n:05d}.safetensors")


# One function per way a model fails to load.
MODEL_LOAD_VARIANTS = {
    "arch": _ml_arch,
    "no-config": _ml_no_config,
    "model-type": _ml_model_type,
    "safetensors": _ml_safetensors,
    "tokenizer": _ml_tokenizer,
    "gated": _ml_gated,
    "not-found": _ml_not_found,
    "no-weights": _ml_no_weights,
    "keyerror": _ml_keyerror,
    "quant": _ml_quant,
    "shard-missing": _ml_shard_missing,
}


def f_model_load(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["arch", "no-config", "model-type", "safetensors", "tokenizer", "gated", "not-found", "no-weights", "keyerror", "quant", "shard-missing"],
                     weights=[4, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1])[0]
    mp = pick(r, [f"/models/{c.model.hf.split('/')[1]}", f"/data/hf/{c.model.hf.split('/')[1]}", c.model.hf, f"/mnt/weights/{c.model.hf.split('/')[1].lower()}"])
    launch_frames = (head(c, "launch")[:4] if c.server == "sglang" else c.frames([
        ("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "vllm_config = engine_args.create_engine_config(usage_context=usage_context)"),
        ("vllm/engine/arg_utils.py", "create_engine_config", "model_config = self.create_model_config()"),
        ("vllm/engine/arg_utils.py", "create_model_config", "return ModelConfig(", True)]))
    phase, exc, fatal, pre = MODEL_LOAD_VARIANTS[kind](c, mp, launch_frames)
    if phase == "launch":  # both servers fail these in the main process (SGLang loads the tokenizer there)
        return Failure("config.model-load", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    return Failure("config.model-load", phase, exc, fatal, precursor=pre, variant=kind)




def f_invalid_arg(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["unrecognized", "invalid-choice", "invalid-int", "required", "heads", "max-len", "batched", "sglang-assert", "placement", "pydantic"],
                     weights=[4, 2, 2, 1, 3, 2, 1, 2, 1, 1])[0]
    if kind in ("heads", "max-len", "batched", "placement", "pydantic") and c.server == "sglang":
        kind = pick(r, ["sglang-assert", "sglang-assert", "heads", "unrecognized", "invalid-choice"])
    if kind == "sglang-assert" and c.server == "vllm":
        kind = "heads"
    prog = "launch_server.py" if c.server == "sglang" else pick(r, ["vllm serve", "api_server.py"])
    usage = SGLANG_USAGE if c.server == "sglang" else (VLLM_USAGE if prog == "vllm serve" else "usage: api_server.py [-h] [--host HOST] [--port PORT] [--uvicorn-log-level {debug,info,warning,error,critical,trace}] ... [--model MODEL] ...")
    if kind in ("unrecognized", "invalid-choice", "invalid-int", "required"):
        return _argparse_error(c, kind, prog, usage)
    if kind == "heads":
        return _heads(c)
    if kind == "sglang-assert":
        msg = pick(r, ["AssertionError: The argument --tp-size must be divisible by --dp-size when --enable-dp-attention is set",
                       "ValueError: --enable-dp-attention requires --dp-size > 1",
                       "ValueError: Speculative decoding with EAGLE3 requires --speculative-draft-model-path",
                       f"ValueError: The requested context length {r.choice([262144, 200000, 1048576])} is greater than the derived context length {r.choice([32768, 40960, 131072])}. Set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 to override.",
                       "ValueError: --chunked-prefill-size must be divisible by --page-size",
                       f"AssertionError: mem_fraction_static={r.choice([1.2, 0.0, -0.5])} must be in (0, 1)"])
        exc = tb(c.frames([("sglang/launch_server.py", "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
                           ("sglang/srt/server_args.py", "prepare_server_args", "return ServerArgs.from_cli_args(raw_args)"),
                           ("sglang/srt/server_args.py", "from_cli_args", "return cls(**{attr: getattr(args, attr) for attr in attrs})"),
                           ("<string>", "__init__"),
                           ("sglang/srt/server_args.py", "__post_init__", "self._handle_other_validations()" if c.gen != "old" else "self.check_server_args()")])) + [msg]
        return Failure("config.invalid-argument", "launch", exc, msg.split(": ", 1)[1][:70], scope="main", result="exit-code", variant=kind)
    if kind == "max-len":
        n = pick(r, [262144, 1048576, 200000, 131072])
        m = pick(r, [32768, 40960, 8192])
        exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_model_config", "return ModelConfig(", True),
                           (f"{c.sp}/pydantic/_internal/_dataclasses.py", "__init__", "s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)")])) + [
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
            f"  Value error, User-specified max_model_len ({n}) is greater than the derived max_model_len (max_position_embeddings={m} or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error. [type=value_error, input_value=ArgsKwargs((), {{'model': ...}}), input_type=ArgsKwargs]",
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"]
        return Failure("config.invalid-argument", "launch", exc, "is greater than the derived max_model_len", scope="main", result="exit-code", variant=kind)
    if kind == "batched":
        a = pick(r, [2048, 4096, 8192])
        b = pick(r, [16384, 32768, 131072])
        exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "scheduler_config = SchedulerConfig(", True),
                           ("vllm/config/scheduler.py" if c.gen != "v06" else "vllm/config.py", "verify_args" if c.gen != "v06" else "_verify_args", "raise ValueError(")])) + [
            f"ValueError: max_num_batched_tokens ({a}) is smaller than max_model_len ({b}). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."]
        return Failure("config.invalid-argument", "launch", exc, f"max_num_batched_tokens ({a}) is smaller than max_model_len", scope="main", result="exit-code", variant=kind)
    if kind == "placement":
        exc = tb(c.frames([("vllm/executor/ray_utils.py", "initialize_ray_cluster", "raise ValueError(")])) + [
            "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group."]
        return Failure("config.invalid-argument", "launch", exc, "The number of required GPUs exceeds the total number of available GPUs", scope="main", result="exit-code", variant=kind)
    exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "speculative_config = self.create_speculative_config(", True),
                       (f"{c.sp}/pydantic/_internal/_dataclasses.py", "__init__", "s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)")])) + [
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig",
        f"  Value error, {pick(r, ['num_speculative_tokens must be provided with speculative model unless the draft model config contains an n_predict parameter.', 'Expected num_speculative_tokens to be greater than zero (0).'])} [type=value_error, input_value=ArgsKwargs((), {{}}), input_type=ArgsKwargs]"]
    return Failure("config.invalid-argument", "launch", exc, "validation error for SpeculativeConfig", scope="main", result="exit-code", variant=kind)


def _heads(c: Ctx) -> Failure:
    """Attention heads not divisible by the tensor-parallel size."""
    r = c.rng
    kind = "heads"
    tp = pick(r, [3, 5, 6, 8, 16])
    heads = pick(r, [28, 14, 40, 20, 12, 24])
    if c.server == "vllm":
        exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "config = VllmConfig(", True),
                           ("vllm/config/__init__.py" if c.gen != "v06" else "vllm/config.py", "__post_init__", "self.model_config.verify_with_parallel_config(self.parallel_config)"),
                           ("vllm/config/model.py" if c.gen != "v06" else "vllm/config.py", "verify_with_parallel_config", "raise ValueError(")])) + [
            f"ValueError: Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."]
        return Failure("config.invalid-argument", "launch", exc, "must be divisible by tensor parallel size", scope="main", result="exit-code", variant=kind)
    exc = tb(head(c, "load-weights")[:-2] + c.frames([("sglang/srt/layers/linear.py", "__init__", "self.num_heads = divide(self.total_num_heads, tp_size)"),
                                                     ("sglang/srt/distributed/utils.py", "divide", "ensure_divisibility(numerator, denominator)"),
                                                     ("sglang/srt/distributed/utils.py", "ensure_divisibility", "assert numerator % denominator == 0, \"{} is not divisible by {}\".format(")])) + [
        f"AssertionError: {heads} is not divisible by {tp}"]
    return Failure("config.invalid-argument", "load-weights", exc, f"AssertionError: {heads} is not divisible by {tp}", variant=kind)


def _argparse_error(c: Ctx, kind: str, prog: str, usage: str) -> Failure:
    """argparse rejects the command line: usage line, error, exit status 2."""
    r = c.rng
    if kind == "unrecognized":
        bad = pick(r, ["--reasoning_parser qwen3", "--tp 4", "--enable-flashinfer-mla", "--max-model-length 32768", "--gpu-memory-utilisation 0.9",
                       "--disable-radix", "--enable-dp-attention-v2", "--tool_call_parser hermes", "--speculative-algo EAGLE3", "--chunked-prefill 8192",
                       "--kv-cache-type fp8", "--served-model my-model", "--enable-torch-compile-v2", "--num-scheduler-steps 8", "--use-v2-block-manager"])
        msg = f"{prog}: error: unrecognized arguments: {bad}"
        fatal = f"error: unrecognized arguments: {bad.split()[0]}"
    elif kind == "invalid-choice":
        arg, val, ch = pick(r, [("--dtype", "bf16", "'auto', 'half', 'float16', 'bfloat16', 'float', 'float32'"),
                                ("--attention-backend", "fa4", "'flashinfer', 'triton', 'torch_native', 'fa3', 'flashmla', 'cutlass_mla', 'trtllm_mla', 'aiter'"),
                                ("--kv-cache-dtype", "fp8_e4m3fn", "'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2'"),
                                ("--load-format", "safetensor", "'auto', 'pt', 'safetensors', 'npcache', 'dummy', 'gguf', 'bitsandbytes'"),
                                ("--tool-call-parser", "qwen3", "'llama3', 'mistral', 'qwen25', 'deepseekv3', 'pythonic', 'kimi_k2', 'gpt-oss'")])
        msg = f"{prog}: error: argument {arg}: invalid choice: '{val}' (choose from {ch})"
        fatal = f"error: argument {arg}: invalid choice: '{val}'"
    elif kind == "invalid-int":
        arg, val = pick(r, [("--tp-size/--tensor-parallel-size" if c.server == "sglang" else "--tensor-parallel-size/-tp", "auto"), ("--port", "${PORT}"),
                            ("--max-running-requests" if c.server == "sglang" else "--max-num-seqs", "1e3"), ("--context-length" if c.server == "sglang" else "--max-model-len", "32k")])
        msg = f"{prog}: error: argument {arg}: invalid int value: '{val}'"
        fatal = f"invalid int value: '{val}'"
    else:
        msg = f"{prog}: error: the following arguments are required: --model-path" if c.server == "sglang" else f"{prog}: error: the following arguments are required: model_tag"
        fatal = "error: the following arguments are required"
    exc = [usage, msg] if r.random() < 0.8 else [msg]
    return Failure("config.invalid-argument", "launch", exc, fatal, scope="argparse", result="exit-code", exit_status="status=2/INVALIDARGUMENT", variant=kind)
