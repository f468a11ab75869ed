"""net.port-in-use: binding a port that another process already holds."""
import os
import socket
import subprocess
import sys
import time

import common

_holders = []


def _occupy(port, host="127.0.0.1"):
    """Hold the port in a separate real process (like a stale server)."""
    code = ("import socket,time;s=socket.socket();"
            "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);"
            f"s.bind(({host!r},{port}));s.listen();print('ok',flush=True);time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    p.stdout.readline()
    _holders.append(p)
    import atexit
    atexit.register(p.kill)


def socket_bind(port=30000):
    def fn():
        _occupy(port)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", port))
    return fn


def uvicorn_run(port=30000, sglang_cfg=False):
    def fn():
        _occupy(port)
        import uvicorn

        async def app(scope, receive, send):
            pass
        kw = {}
        if sglang_cfg:
            # SGLang 0.5.x set_uvicorn_logging_configs
            cfg = uvicorn.config.LOGGING_CONFIG
            cfg["formatters"]["default"]["fmt"] = "[%(asctime)s] %(levelprefix)s %(message)s"
            cfg["formatters"]["default"]["datefmt"] = "%Y-%m-%d %H:%M:%S"
            cfg["formatters"]["access"]["fmt"] = '[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'
            cfg["formatters"]["access"]["datefmt"] = "%Y-%m-%d %H:%M:%S"
            kw["log_config"] = cfg
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="info", timeout_keep_alive=5, loop="asyncio", **kw)
    return fn


def asyncio_server(port=8000):
    def fn():
        _occupy(port)
        import asyncio

        async def main():
            srv = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
            await srv.serve_forever()
        asyncio.run(main())
    return fn


def tcpstore(port=29500):
    def fn():
        _occupy(port, "0.0.0.0")
        import datetime
        import torch.distributed as dist
        dist.TCPStore("127.0.0.1", port, 1, True, timeout=datetime.timedelta(seconds=5))
    return fn


def init_process_group(port=29511):
    def fn():
        _occupy(port, "0.0.0.0")
        import torch.distributed as dist
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    return fn


VARIANTS = {
    "socket_bind": socket_bind(30000),
    "socket_bind_8000": socket_bind(8000),
    "uvicorn": uvicorn_run(8000),
    "uvicorn_sglang": uvicorn_run(30000, sglang_cfg=True),
    "asyncio": asyncio_server(8080),
    "tcpstore": tcpstore(29500),
    "init_pg": init_process_group(29511),
}

if __name__ == "__main__":
    common.main(VARIANTS)
