"""The catalogue's miners for native and Go sources (llama.cpp/ggml, Ollama,
Triton Inference Server): what each macro or call prints, as a template."""
from __future__ import annotations

from forensics.events import catalogue
from forensics.lab import catalogue_mine as cm


def _mined(fn, text: str, path: str, package: str) -> dict[str, cm.Record]:
    out = cm.Mined()
    fn(text, path, package, "1.0", out)
    return {cm._norm_template(r.template): r for r in out.records}


LLAMA = '''
static int llama_model_load(const std::string & fname, llama_model & model) {
    try {
        model.load(fname);
    } catch (const std::exception & err) {
        LLAMA_LOG_ERROR("%s: error loading model: %s\\n", __func__, err.what());
        return -1;
    }
    if (n_ctx > n_ctx_train) {
        LLAMA_LOG_WARN("%s: n_ctx (%d) is larger than the training context\\n", __func__, n_ctx);
    }
    GGML_ASSERT(ctx != nullptr);
    GGML_ABORT("fatal error: unknown type %d", type);
    throw std::runtime_error(format("tensor '%s' has wrong shape", name.c_str()));
}

struct server_context {
    bool load_model(const common_params & params) {
        SRV_ERR("failed to load model, '%s'\\n", params.model.c_str());
        SLT_WRN(slot, "n_predict = %d exceeds server configuration\\n", n);
        fprintf(stdout, "not a log line at all %d\\n", 1);
        LOG_INF("%s = %s\\n", key, value);
    }
};
'''


def test_llama_cpp_macros_print_their_function_and_prefixes():
    got = _mined(cm.mine_llama_cpp, LLAMA, "src/llama.cpp", "llama.cpp")
    err = got["llama_model_load: error loading model: {what}"]
    assert err.level == "ERROR" and err.function == "llama_model_load" and err.kind == "native-log"
    assert any(t.startswith("llama_model_load: n_ctx ({n_ctx}) is larger") for t in got)
    assert "{file}:{line}: GGML_ASSERT(ctx != nullptr) failed" in got
    assert got["{file}:{line}: fatal error: unknown type {type}"].kind == "panic"
    thrown = got["tensor '{c_str}' has wrong shape"]
    assert thrown.kind == "raise" and thrown.exc_type == "std::runtime_error"
    srv = next(t for t in got if "failed to load model" in t)
    assert srv.startswith("srv {func}: ") and got[srv].function == "load_model"
    assert any(t.startswith("slot {func}: id {id} | task {task} | n_predict = {n}") for t in got)
    assert not any("not a log line" in t for t in got)  # stdout is not the log
    assert "{key} = {value}" not in got  # placeholders alone say nothing


GO = '''
package llm

func (s *llmServer) WaitUntilRunning(ctx context.Context) error {
	slog.Error("llama runner terminated", "error", err)
	slog.Info("load", "request", req)
	return fmt.Errorf("timed out waiting for llama runner to start: %w", err)
}

func locate() error {
	return errors.New("unable to locate runners in any search path")
}
'''


def test_go_slog_and_errors():
    got = _mined(cm.mine_go, GO, "llm/server.go", "ollama")
    assert got["llama runner terminated"].level == "ERROR"
    assert got["llama runner terminated"].function == "llmServer.WaitUntilRunning"
    assert got["timed out waiting for llama runner to start: {err}"].kind == "raise"
    assert got["unable to locate runners in any search path"].function == "locate"
    assert "load" not in got
    assert cm._repo_path_ok("ollama", "server/sched.go") and not cm._repo_path_ok("ollama", "server/sched_test.go")
    assert not cm._repo_path_ok("ollama", "llama/llama.cpp/src/llama.go")


ZEROLOG = '''
func startup() {
	log.Error().Err(err).Str("file", name).Msg("unable to register config file handler")
	log.Warn().Msgf("backend %s is not available on this system", backend)
	xlog.Error("failed to load environment variables from file", "error", err)
}
'''


def test_go_zerolog_chains_and_xlog():
    got = _mined(cm.mine_go, ZEROLOG, "core/startup.go", "localai")
    assert got["unable to register config file handler"].level == "ERROR"
    assert got["backend {backend} is not available on this system"].level == "WARNING"
    assert got["failed to load environment variables from file"].function == "startup"


TRITON = '''
Status
ModelRepositoryManager::LoadModels(const std::string& name)
{
  LOG_ERROR << "failed to load model '" << name << "': " << status.Message();
  LOG_VERBOSE(1) << "verbose lines are not kept";
  return Status(
      Status::Code::INTERNAL, "failed to load '" + name + "', no version is available");
}
'''


def test_triton_streams_and_status():
    got = _mined(cm.mine_triton_server, TRITON, "core/src/model_repository_manager.cc", "tritonserver")
    log = got["failed to load model '{name}': {Message}"]
    assert log.level == "ERROR" and log.function == "ModelRepositoryManager::LoadModels"
    st = got["failed to load '{name}', no version is available"]
    assert st.kind == "raise" and st.exc_type == "INTERNAL"
    assert not any("verbose" in t for t in got)


def test_catalogue_knows_the_new_families():
    e = catalogue.lookup("llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer")
    assert e is not None and e.package == "llama.cpp"
    e = catalogue.lookup('time=2025-01-01T00:00:00Z level=ERROR source=sched.go:123 msg="error loading llama server" '
                         'error="timed out waiting for llama runner to start - progress 0.00 - "')
    assert e is not None and e.package == "ollama" and e.label == "hang.timeout"
    e = catalogue.lookup("error: creating server: Internal - failed to load all models")
    assert e is not None and e.package == "tritonserver"
    assert {"llama.cpp", "ollama", "tritonserver", "xinference"} <= set(catalogue.packages())


def test_label_rule_examples():
    """Each rule's own examples (catalogue_rules.yaml): a match is labelled by
    that rule (first match wins, so an earlier rule taking it fails too); a
    no_match is not."""
    from forensics.events.tables import load_table
    from forensics.lab import catalogue_rules

    checked = 0
    for r in load_table(catalogue_rules.__file__, "catalogue_rules.yaml"):
        ex = r.get("examples") or {}
        for t in ex.get("match", []):
            # a rule with no label records nothing: its match is one no later rule labels
            want = r["id"] if r.get("label") else None
            assert catalogue_rules.guess_label(None, t, None) == (r.get("label"), want), (r["id"], t)
            checked += 1
        for t in ex.get("no_match", []):
            assert catalogue_rules.guess_label(None, t, None)[1] != r["id"], (r["id"], t)
    assert checked


HIP_ERROR = '''
const char *ihipGetErrorName(hipError_t hip_error) {
    switch(hip_error) {
        case hipErrorInvalidDeviceFunction:
            return "hipErrorInvalidDeviceFunction";
    };
}
const char *ihipGetErrorString(hipError_t hip_error) {
    switch(hip_error) {
        case hipSuccess:
            return "no error";
        case hipErrorOutOfMemory:
            return "out of memory";
        case hipErrorInvalidDeviceFunction:
            return "invalid device function";
        default:
            return "unknown error";
    };
}
bool CodeObject::check() {
    LogPrintfError("%s",
                   "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!");
    LogPrintfError("    %s - [%s]", target.c_str(), status.c_str());
}
'''


def test_hip_error_names_strings_and_logs():
    out = cm.Mined()
    cm.mine_hip_errors(HIP_ERROR, cm.HIP_ERROR_SRC, "rocm-6.2.2", out)
    cm.mine_hip_logs(HIP_ERROR, "hipamd/src/hip_code_object.cpp", "rocm-6.2.2", out)
    got = {r.template: r for r in out.records}
    assert got["HIP error: invalid device function"].exc_type == "hipErrorInvalidDeviceFunction"
    assert got["out of memory"].exc_type == "hipErrorOutOfMemory" and "hipErrorOutOfMemory" in got
    assert "no error" not in got and "HIP error: no error" not in got
    log = got["hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"]
    assert log.kind == "native-log" and log.level == "ERROR" and log.function == "CodeObject::check"
    from forensics.lab.catalogue_rules import guess_label
    assert guess_label("hipErrorInvalidDeviceFunction", "HIP error: invalid device function", None, "hip-runtime",
                       "error-string", "ERROR")[0] == "env.gpu-arch-unsupported"


NPU_ERRCODE = b'''
from enum import Enum
class _SubModuleID(Enum):
    PTA = 0
    OPS = 1
    UNKNOWN = 99
class ErrCode(Enum):
    SUCCESS = (0, "success")
    VALUE = (3, "invalid value")
    ACL = (100, "call acl api failed")
'''


def test_torch_npu_error_codes_are_suffixes_without_a_label():
    out = cm.Mined()
    cm.mine_npu_errcode_py(NPU_ERRCODE, "torch_npu/utils/_error_code.py", "2.5.1", out)
    got = {r.template: r for r in out.records}
    assert set(got) == {"ERR00003 PTA invalid value", "ERR01003 OPS invalid value", "ERR00100 PTA call acl api failed",
                        "ERR01100 OPS call acl api failed"}
    from forensics.lab.catalogue_rules import guess_label
    assert guess_label("ErrCode.VALUE", "ERR00003 PTA invalid value", None, "torch-npu", "error-string", "ERROR") == \
        (None, None)  # and not "invalid value"'s label: the suffix rule comes first


def test_catalogue_knows_the_accelerators():
    """Ascend's and ROCm's runtime wordings, as a failing server prints them."""
    e = catalogue.lookup("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity; "
                         "55.23 GiB already allocated; 1.02 GiB free; 57.01 GiB reserved in total by PyTorch)")
    assert e is not None and e.package == "torch-npu" and e.label == "gpu.out-of-memory"
    e = catalogue.lookup("[Error]: The aicore execution is abnormal.")
    assert e is not None and e.package == "torch-npu" and e.label == "gpu.illegal-access"
    e = catalogue.lookup("RuntimeError: HIP error: invalid device function")
    assert e is not None and e.package == "hip-runtime" and e.label == "env.gpu-arch-unsupported"
    assert {"torch-npu", "hip-runtime", "dynamo", "jax", "tpu-inference", "kserve"} <= set(catalogue.packages())
