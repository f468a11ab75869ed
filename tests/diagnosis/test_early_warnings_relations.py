"""Early warnings (issue 12), the mechanisms that generalise past the lines
someone wrote a rule for:

* a line the process survived on its way to dying is an early warning even
  when it is evidence or comes after the first evidence line (wording that the
  program goes on; a handled traceback that fell back; a warning the failure
  later quotes) -- and a consequence printed at warning level is not;
* subject families: the parts of one subsystem, however a program names them
  (NCCL's NET transport: IB, UCX, GPUDirect RDMA, NCCL_NET_*/NCCL_IB_*);
* a default the user changed, about the failing subsystem;
* a catch-all precursor (any ``NCCL WARN``) is a weak prior when the line shares
  nothing specific with the failure;
* ``watch`` keeps quiet about a degraded start (falls back, "will not be
  available").

Whole logs are the project's GPU captures (corpora/gpu-early-warning,
corpora/gpu) and one composed RCCL log whose lines are the formats RCCL 2.21 /
NCCL 2.21 print (param.cc "%s set by environment to %lld.", init.cc's NUMA
warning, ibvwrap.cc's ibv_modify_qp error, net_ib.cc "NET/IB : Using ...") and
vLLM 0.10's EngineCore failure.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPORA, REAL, needs_real

from forensics.diagnosis import early_warnings as E
from forensics.lab.evaluate import evaluate_dirs
from forensics.pipeline import diagnose_source
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.ingest.sources import Source

GPU_EW = CORPORA / "gpu-early-warning"


def _link(path: Path) -> tuple[list[dict], list[dict]]:
    """(early warnings with signatures, linking alone) of one log."""
    incs: list = []
    res = diagnose_source(Source(str(path), path), keep_incidents=incs)
    return res["early_warnings"], E.relink(incs[res["incident"]], use_signatures=False) or []


def _find(warnings: list[dict], needle: str) -> dict | None:
    return next((w for w in warnings if needle in w["text"]), None)


def _needs(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not captured in this checkout")
    return path


def test_a_cause_that_retried_is_the_early_warning_of_the_failure():
    """SGLang's graph capture failed, retried with a smaller batch size, then
    died: the retry line is evidence *and* the warning (SGLang 0.5, torch 2.11)."""
    with_sigs, alone = _link(_needs(GPU_EW / "gpu-ew-graph-oom-retry.log"))
    for ws in (with_sigs, alone):
        w = _find(ws, "failed, retrying with cuda_graph_max_bs=64")
        assert w is not None, ws
        assert w["why"].startswith("the program went on after it ('retrying'), then failed"), w["why"]
        assert w["line"] == 10


def test_a_handled_traceback_that_fell_back_is_an_early_warning():
    """JAX's CUDA plugin failed to initialise and JAX fell back to the CPU; the
    server died later asking for a CUDA device."""
    with_sigs, alone = _link(_needs(GPU_EW / "gpu-ew-jax-no-gpu.log"))
    for ws in (with_sigs, alone):
        w = _find(ws, "Falling back to cpu.")
        assert w is not None and "falling back" in w["why"], ws


def test_a_warning_the_failure_later_quotes_is_an_early_warning():
    """``NCCL WARN Failed to initialize any NET plugin`` is printed before the
    DistBackendError whose 'Last error:' repeats it."""
    with_sigs, alone = _link(_needs(GPU_EW / "gpu-ew-nccl-net-ib.log"))
    for ws in (with_sigs, alone):
        w = _find(ws, "NCCL WARN Failed to initialize any NET plugin")
        assert w is not None and "logged as a warning before the process failed" in w["why"], ws


def test_a_consequence_after_the_cause_is_not_an_early_warning():
    """torchrun's ``W... Sending process N closing signal SIGTERM`` comes after
    the NCCL error: a warning level after the cause is a consequence."""
    with_sigs, alone = _link(_needs(CORPORA / "gpu" / "dist-nccl-dup-gpu-01.log"))
    assert _find(with_sigs, "closing signal SIGTERM") is None, with_sigs
    assert _find(alone, "closing signal SIGTERM") is None, alone
    assert _find(with_sigs, "Duplicate GPU detected") is not None


@pytest.mark.parametrize("text, in_family", [
    ("node02:10366:10376 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to SYS", True),
    ("node7:2211:2290 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 5.", True),
    ("node02:10366:10377 [0] ucx_plugin.c:498 NCCL WARN Failed: UCX error ucx_plugin.c:498 '-5' Invalid parameter", True),
    ("[1721186746.658016] [node02:10366:1] rcache.c:985  UCX  ERROR failed to insert region 0x1479900ba210", True),
    ("vm:7826:7826 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.7<0>", True),
    ("NCCL INFO Channel 00/0 : 1[7000] -> 0[b7000] [receive] via NET/UCX/0/GDRDMA", True),
    ("NCCL WARN Failed to initialize any NET plugin", True),
    ("misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument", True),
    ("NCCL INFO Dmabuf feature disabled without NCCL_ENABLE_DMABUF_SUPPORT=1", True),
    # other parts of NCCL are not the NET transport
    ("init.cc:140 NCCL WARN NUMA auto balancing enabled which can lead to variability in the RCCL performance!", False),
    ("NCCL INFO NCCL_P2P_LEVEL set by environment to SYS", False),
    ("socket.cc:57 NCCL WARN socketProgress: Connection closed by remote peer node02<35187>", False),
    ("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60", False),
])
def test_net_transport_family(text, in_family):
    assert ("fam:net-transport" in E.subjects(text)) is in_family, sorted(E.subjects(text))


@pytest.mark.parametrize("text, family", [
    ("No CUDA runtime is found, using CUDA_HOME='/usr'", "cuda-toolkit"),
    ("/bin/sh: 1: /usr/local/cuda-13.0/bin/nvcc: not found", "cuda-toolkit"),
    ("ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'", "cuda-toolkit"),
    ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12020)",
     "cuda-driver"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices()", "cuda-driver"),
    ("RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
     "cuda-driver"),
    ("RuntimeError: No CUDA GPUs are available", "cuda-driver"),
])
def test_cuda_families(text, family):
    assert "fam:" + family in E.subjects(text), sorted(E.subjects(text))
    other = {"cuda-toolkit": "cuda-driver", "cuda-driver": "cuda-toolkit"}[family]
    assert "fam:" + other not in E.subjects(text)


@pytest.mark.parametrize("text, in_family", [
    ("huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url "
     "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.", True),
    ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
     "files and it looks like Qwen/Qwen3-8B is not the path to a directory containing a file named config.json.", True),
    ("WARNING 05-01 10:00:01 [hf.py:10] No HF token found: set HF_TOKEN to access gated repositories", True),
    ("huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
     "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set 'local_files_only' "
     "to False.", True),
    # error messages of every kind point to the hub's documentation: no hub access
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
     "package flash_attn seems to be not installed. Please refer to the documentation of "
     "https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2.",
     False),
])
def test_model_hub_access_family(text, in_family):
    assert ("fam:model-hub-access" in E.subjects(text)) is in_family, sorted(E.subjects(text))


def test_a_missing_hub_token_is_the_early_warning_of_a_gated_repo():
    from forensics import classify_text

    d = classify_text(
        "INFO 05-01 10:00:00 [api_server.py:1000] vLLM API server version 0.9.0\n"
        "WARNING 05-01 10:00:01 [hf.py:10] No HF token found: set HF_TOKEN to access gated repositories\n"
        "ERROR 05-01 10:00:02 [core.py:500] huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access "
        "gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.\n")
    assert d["root_cause"] == "config.model-load"
    assert [w["line"] for w in d["early_warnings"]] == [2]
    assert "model-hub-access" in d["early_warnings"][0]["why"]


# A composed RCCL start-up (formats of RCCL/NCCL 2.21, vLLM 0.10): the user set
# the IB GID index, RCCL warns about NUMA balancing as it does on every such
# host, and the queue pair cannot move to RTR with that GID.
IB_LOG = """\
INFO 11-30 10:00:01 [__init__.py:241] Automatically detected platform rocm.
INFO 11-30 10:00:09 [core.py:74] Initializing a V1 LLM engine (v0.10.1) with config: model='Qwen/Qwen3-32B', tensor_parallel_size=2
node7:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>
node7:2211:2211 [0] NCCL INFO NET/Plugin: No plugin found (librccl-net.so)
node7:2211:2211 [0] NCCL INFO NET/Plugin: Using internal network plugin.
node7:2211:2211 [0] /build/rccl/hipify/src/init.cc:140 NCCL WARN NUMA auto balancing enabled which can lead to variability in the RCCL performance! Disable by "sudo sysctl kernel.numa_balancing=0"
node7:2211:2211 [0] NCCL INFO Kernel version: 5.15.0-91-generic
RCCL version 2.21.5+hip6.2
node7:2211:2290 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 5.
node7:2211:2290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.7<0>
node7:2211:2290 [0] NCCL INFO Using network IB
node7:2211:2290 [0] NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId 18000 commId 0x7f1 - Init START
node7:2211:2290 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0
node7:2211:2290 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 5
node7:2211:2290 [0] NCCL INFO transport/net_ib.cc:1019 -> 2
ERROR 11-30 10:00:31 [core.py:700] EngineCore failed to start.
ERROR 11-30 10:00:31 [core.py:700] Traceback (most recent call last):
ERROR 11-30 10:00:31 [core.py:700]   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2806, in all_reduce
ERROR 11-30 10:00:31 [core.py:700]     work = group.allreduce([tensor], opts)
ERROR 11-30 10:00:31 [core.py:700] torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
ERROR 11-30 10:00:31 [core.py:700] ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
ERROR 11-30 10:00:31 [core.py:700] Last error:
ERROR 11-30 10:00:31 [core.py:700] Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 5
"""


def test_a_user_override_in_the_failing_subsystem_outranks_start_up_chatter(tmp_path):
    log = tmp_path / "rccl-ib-gid.log"
    log.write_text(IB_LOG)
    with_sigs, alone = _link(log)
    for ws in (with_sigs, alone):
        gid = _find(ws, "NCCL_IB_GID_INDEX set by environment to 5.")
        assert gid is not None, ws
        assert "same subsystem as the failure: net-transport" in gid["why"]
        assert "a setting changed from its default" in gid["why"]
        assert "fam:net-transport" in gid["subjects"] and gid["signature"] is None
        numa = _find(ws, "NUMA auto balancing")
        assert numa is None or numa["score"] < gid["score"], ws  # the catch-all NCCL WARN prior is weak here
    qp = _find(with_sigs, "Call to ibv_modify_qp failed")
    assert qp is not None and qp["signature"] == "nccl.warn-line"
    assert len(with_sigs) <= 3


def test_catch_all_precursors_are_the_level_markers():
    from forensics.diagnosis.signatures import signature_set

    ids = {s.id for s in signature_set().signatures if s.kind == "precursor" and E.linking.catch_all(s)}
    assert "nccl.warn-line" in ids
    assert "deepgemm.nvcc-too-old-warning" not in ids and "nccl.connection-retry" not in ids


@pytest.mark.parametrize("text, went_on", [
    ("Capture cuda graph with max bs 160 failed, retrying with cuda_graph_max_bs=64: CUDA out of memory.", True),
    ("An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
     True),
    ("tpgds-aihub0002:848534:848534 [2] NVSHMEM INFO nvshmemi_common_init failed, continuing", True),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", False),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB.", False),
])
def test_survived_wording(text, went_on):
    assert (E.linking.survived(text) is not None) is went_on


def test_watch_keeps_quiet_about_a_degraded_start():
    """vLLM 0.10 on ROCm prints this on healthy start-ups (seen in several
    independent logs): the feature is off, nothing will fail for it."""
    base = E.baseline()
    quiet = Event(kinds.LOG, 15, "AITER is not found or QuarkOCP_MX is not supported on the current platform. "
                  "QuarkOCP_MX quantization will not be available.", level="WARNING")
    assert E.live_decision(quiet, base=base) is None
    loud = Event(kinds.LOG, 20, "transformers.py:22 - LMDeploy requires transformers version: [4.33.0 ~ 4.57.3], "
                 "but found version: 4.57.6", level="WARNING")
    assert E.live_decision(loud, base=base) is not None


@needs_real
@pytest.mark.parametrize("name", ["early-warning", "early-warning-b"])
def test_each_real_early_warning_set_meets_issue_12(name):
    """Issue 12 on each set alone: linking alone >= 80%, with signatures >= 90%."""
    ew = evaluate_dirs([REAL / name])["early_warnings"]
    assert ew["found_by_linking_alone"] / ew["n"] >= 0.80, ew
    assert ew["found"] / ew["n"] >= 0.90, ew
    assert ew["mean_listed_per_failure"] <= 3.0, ew


GENERATED = CORPORA / "generated"


@pytest.mark.parametrize("name, needle", [
    # journald, one pid: torch's import-time UserWarning, then SGLang's server_args starts a lifetime
    ("g7-0095.log", "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old"),
    # plain stderr, no pids: the warning is the process's preamble (no start-up phase, no traceback)
    ("g7-0018.log", "UserWarning: CUDA initialization:"),
])
def test_start_up_warnings_cross_a_lifetime_boundary_that_is_no_exit(name, needle):
    path = _needs(GENERATED / name)
    incs: list = []
    res = diagnose_source(Source(str(path), path), keep_incidents=incs)
    main = incs[res["incident"]]
    assert res["incident"] > 0  # the lifetime boundary is there
    for ws in (res["early_warnings"], E.relink(main, use_signatures=False) or []):
        w = _find(ws, needle)
        assert w is not None and w["line"] < main.start_line, ws


def test_a_process_exit_or_another_process_stops_the_carry():
    from forensics.diagnosis.early_warnings.carry import continues
    from forensics.incidents.lifetimes import Incident

    def inc(pids=(), exit=None, transitions=(), tracebacks=()):
        i = Incident(0, "-", 1)
        i.pids, i.exit, i.transitions, i.tracebacks = set(pids), exit, list(transitions), list(tracebacks)
        return i

    assert continues(inc(pids={7}), inc(pids={7}))
    assert not continues(inc(pids={7}), inc(pids={8}))  # another process
    assert not continues(inc(pids={7}, exit={"code": "exited", "line": 9}), inc(pids={7}))  # it exited
    assert continues(inc(), inc())  # no pids: a preamble
    assert not continues(inc(transitions=[(3, "launch")]), inc())  # no pids, a start-up of its own
