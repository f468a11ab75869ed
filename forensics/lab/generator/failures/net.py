"""Builder for net.port-in-use: the server's port is taken."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, import_frames, pick, tb
from .frames import head


def f_port(c: Ctx) -> Failure:
    r = c.rng
    port = c.port
    pre = None
    if c.journald and r.random() < 0.6:
        opid = r.randint(1000, 90000)
        pre = Precursor([f"Found left-over process {opid} (python3) in control group while starting unit. Ignoring.",
                         "This usually indicates unclean termination of a previous run, or service implementation deficiencies."],
                        "Found left-over process", "launch", style="systemd", lead=(0.01, 0.5))
    if c.server == "sglang":
        kind = r.choices(["uvicorn", "zmq", "wait", "dist"], weights=[5, 2, 2, 2])[0]
        if kind == "uvicorn":
            ln = f"[Errno 98] error while attempting to bind on address ('{pick(r, ['0.0.0.0', '127.0.0.1', '::'])}', {port}): address already in use"
            return Failure("net.port-in-use", "ready", [], "[Errno 98] error while attempting to bind on address", scope="log", log_line=ln, log_level="ERROR",
                           result="exit-code", precursor=pre, variant=kind)
        if kind == "zmq":
            p2 = port + r.randint(1, 40)
            exc = tb(import_frames(c, [])[:3] + c.frames([("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, template_manager, scheduler_info = _launch_subprocesses(", True),
                                                          ("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", "tokenizer_manager = TokenizerManager(server_args, port_args)"),
                                                          ("sglang/srt/managers/tokenizer_manager.py", "__init__", "self.recv_from_detokenizer = get_zmq_socket(", True),
                                                          ("sglang/srt/utils/common.py" if c.gen != "old" else "sglang/srt/utils.py", "get_zmq_socket", "socket.bind(endpoint)"),
                                                          (f"{c.sp}/zmq/sugar/socket.py", "bind", "super().bind(addr)"),
                                                          ("_zmq.py", "zmq.backend.cython._zmq.Socket.bind"),
                                                          ("_zmq.py", "zmq.backend.cython._zmq._check_rc")])) + [
                f"zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:{p2}')"]
            return Failure("net.port-in-use", "launch", exc, "zmq.error.ZMQError: Address already in use", scope="main", result="exit-code", precursor=pre, variant=kind)
        if kind == "wait":
            n = r.randint(10, 60)
            name = pick(r, ["nccl_port", "port", "dist_init_addr"])
            return Failure("net.port-in-use", "launch", [f"{name} at {port} is not available in {n} seconds."], f"is not available in {n} seconds",
                           scope="log", log_line=f"{name} at {port} is not available in {n} seconds.", log_level="", result="exit-code",
                           pre=[f"port {port} is in use. Waiting for {i} seconds for {name} to be available." for i in range(2, min(n, 4))],
                           precursor=Precursor([f"port {port} is in use. Waiting for 1 seconds for {name} to be available."], "is in use. Waiting for 1 seconds",
                                               "launch", style="log", lead=(1, 2)), variant=kind)
    else:
        kind = r.choices(["oserror", "uvicorn", "dist"], weights=[6, 1, 2])[0]
        if kind in ("oserror", "uvicorn"):
            exc = tb(import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)"),
                                                          ("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))"),
                                                          (f"{c.sp}/uvloop/__init__.py", "run", "return __asyncio.run(", True),
                                                          ("vllm/entrypoints/openai/api_server.py", "run_server", "listen_address, sock = setup_server(args)"),
                                                          ("vllm/entrypoints/openai/api_server.py", "setup_server", "sock = create_server_socket(sock_addr)"),
                                                          ("vllm/entrypoints/openai/api_server.py", "create_server_socket", "sock.bind(addr)")])) + [
                "OSError: [Errno 98] Address already in use"]
            return Failure("net.port-in-use", "launch", exc, "OSError: [Errno 98] Address already in use", scope="main", result="exit-code", precursor=pre, variant=kind)
    p = pick(r, [29500, 29501, 20000 + r.randint(0, 9999), port + 1])
    exc = tb(head(c, "launch") + c.frames([(f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "func_return = func(*args, **kwargs)", True),
                                           (f"{c.sp}/torch/distributed/distributed_c10d.py", "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_tcp_rendezvous_handler", "store = _create_c10d_store(", True),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_create_c10d_store", "return TCPStore(", True)])) + [
        f"torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: {p}, useIPv6: 0, code: -98, name: EADDRINUSE, message: address already in use"]
    return Failure("net.port-in-use", "launch", exc, "EADDRINUSE, message: address already in use", precursor=pre, variant="dist")
