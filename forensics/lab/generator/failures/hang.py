"""Builder for hang.timeout: a start-up or collective that never finishes."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, pick, tb, vllm_core_head
from .frames import head


def _store_timeout(c: Ctx) -> Failure:
    """torch.distributed's TCPStore gave up waiting for the other ranks to join
    (a rendezvous deadline, not an NCCL collective)."""
    r = c.rng
    world = max(c.tp, 2) * pick(r, [1, 1, 2])
    to = pick(r, [300, 600, 601, 900, 1800])
    exc = tb(head(c, "launch") + c.frames([(f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "func_return = func(*args, **kwargs)", True),
                                           (f"{c.sp}/torch/distributed/distributed_c10d.py", "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_tcp_rendezvous_handler", "store = _create_c10d_store(", True),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_create_c10d_store", "return TCPStore(", True)])) + [
        f"torch.distributed.DistStoreError: Timed out after {to} seconds waiting for clients. {r.randint(1, world - 1)}/{world} clients joined."]
    return Failure("hang.timeout", "launch", exc, "seconds waiting for clients.", scope="rank0", result="exit-code", variant="store-timeout")


def f_hang(c: Ctx) -> Failure:
    r = c.rng
    pre = None
    if c.server == "sglang":
        kinds = ["watchdog", "watchdog", "health", "warmup-timeout", "store-timeout"] + (["systemd-start"] if c.journald else [])
        kind = pick(r, kinds)
        if kind == "store-timeout":
            return _store_timeout(c)
        if kind == "watchdog":
            to = pick(r, [300, 300, 600, 1800, 120])
            ln = f"Watchdog timeout (self.watchdog_timeout={to})" if c.gen != "new" else f"Scheduler watchdog timeout (self.watchdog_timeout={to}, self.soft=False)"
            if r.random() < 0.6:
                pre = Precursor([f"Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}. last_heartbeat time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"],
                                "Health check failed. Server couldn't get a response from detokenizer", "serving", style="log", lead=(60, float(to)))
            dump = [f"self.cur_batch.batch_size()={r.randint(1, 64)}, self.cur_batch.reqs[0].rid='{r.randbytes(16).hex()}', self.cur_batch.forward_mode=ForwardMode.{pick(r, ['DECODE', 'EXTEND', 'MIXED'])}",
                    "Pyspy dump for PID " + str(r.randint(2000, 99999)) + ":" if r.random() < 0.5 else "py-spy not found; skipping stack dump. Install with `pip install py-spy`."]
            return Failure("hang.timeout", "serving", [], ln, scope="log", log_line=ln, log_level="", pre=dump, pre_scope="log", precursor=pre, variant=kind)
        if kind == "health":
            ln = f"Health check failed. Server couldn't get a response from detokenizer for last {pick(r, [20, 20, 60, 120])} seconds. tic start time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}. last_heartbeat time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
            return Failure("hang.timeout", "serving", [], "Server couldn't get a response from detokenizer", scope="log", log_line=ln, log_level="", result="exit-code", variant=kind)
        if kind == "warmup-timeout":
            to = pick(r, [600, 1800, 120])
            exc = tb(c.frames([("sglang/srt/entrypoints/http_server.py", "_execute_server_warmup", "res = requests.post(", True),
                               (f"{c.sp}/requests/api.py", "post", "return request(\"post\", url, data=data, json=json, **kwargs)"),
                               (f"{c.sp}/requests/adapters.py", "send", "raise ReadTimeout(e, request=request)")])) + [
                f"requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port={c.port}): Read timed out. (read timeout={to})"]
            return Failure("hang.timeout", "warmup", exc, "Read timed out. (read timeout=", scope="warmup", variant=kind)
        return Failure("hang.timeout", pick(r, ["load-weights", "cuda-graph-capture", "kernel-jit"]), [], "Start operation timed out. Terminating.", scope="systemd",
                       systemd=["Start operation timed out. Terminating."], result="timeout", variant=kind)
    kinds = ["rpc", "rpc", "engine-start", "shm", "store-timeout"] + (["systemd-start"] if c.journald else [])
    kind = pick(r, kinds)
    if kind == "store-timeout":
        return _store_timeout(c)
    if kind in ("rpc", "shm"):
        if r.random() < 0.7 or kind == "shm":
            pre = Precursor(["No available shared memory broadcast block found in 60 second. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization)."],
                            "No available shared memory broadcast block found in 60 second", "serving", style="vlog", vfile="shm_broadcast.py", lead=(60, 600))
        meth = pick(r, ["execute_model", "sample_tokens", "get_output"])
        exc = tb(vllm_core_head(c, "serving")[:12] + c.frames([("vllm/v1/executor/multiproc_executor.py", "collective_rpc", "raise TimeoutError(f\"RPC call to {method} timed out.\") from e")])) + [
            f"TimeoutError: RPC call to {meth} timed out."]
        return Failure("hang.timeout", "serving", exc, f"TimeoutError: RPC call to {meth} timed out.", result="exit-code", precursor=pre, variant=kind)
    if kind == "engine-start":
        exc = tb(c.frames([("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "async_llm = AsyncLLM.from_vllm_config(", True),
                           ("vllm/v1/engine/core_client.py", "__init__", "with launch_core_engines(vllm_config, executor_class,"),
                           ("vllm/v1/engine/utils.py", "wait_for_engine_startup", "raise TimeoutError(\"Timed out waiting for engines to send\"")])) + [
            "TimeoutError: Timed out waiting for engines to send initial message on input socket."]
        return Failure("hang.timeout", pick(r, ["load-weights", "launch"]), exc, "Timed out waiting for engines to send initial message", scope="main", result="exit-code", variant=kind)
    return Failure("hang.timeout", pick(r, ["load-weights", "cuda-graph-capture", "kernel-jit"]), [], "Start operation timed out. Terminating.", scope="systemd",
                   systemd=["Start operation timed out. Terminating."], result="timeout", variant=kind)
