# A server-shaped start-up that JIT-builds a small C++ op with torch.utils.cpp_extension.load_inline at
# start (verbose, as SGLang/vLLM custom-op loaders do), reaches ready, serves a few requests and stays
# up until it is stopped (SIGTERM: uvicorn-style shutdown lines). STALE_LOCK=1: the op's build folder
# already holds the 'lock' file of an earlier build that was killed, so torch waits for it forever
# (FileBaton.wait) and the start hangs until the driver's `timeout --verbose` stops it.
import os, sys, time, signal, logging
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang, gib
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", mem_fraction_static=0.1)
import torch
from torch.utils.cpp_extension import load_inline, _get_build_directory
# verbose=True builds log through torch's own handler at INFO (the I1205 ... lines)
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.INFO)


def stop(signum, frame):
    s.main.info("INFO:     Shutting down")
    s.main.info("INFO:     Waiting for application shutdown.")
    s.main.info("INFO:     Application shutdown complete.")
    s.main.info(f"INFO:     Finished server process [{os.getpid()}]")
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)


s.start()
s.init_dist(torch)
torch.cuda.set_device(0)
s.load_begin(torch)
b = torch.cuda.mem_get_info()[0]
w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
s.load_end(torch, b)
name = "sgl_cpu_topk_v2"
if os.environ.get("STALE_LOCK") == "1":
    d = _get_build_directory(name, verbose=False)
    open(os.path.join(d, "lock"), "w").close()    # left by a build that was killed
s.log.info("Compiling custom CPU ops (sgl_cpu_topk_v2) ...")
cpp = r'''
#include <torch/extension.h>
torch::Tensor topk_mask(torch::Tensor x, int64_t k) { auto t = std::get<0>(x.topk(k)); return x.ge(t.select(-1, k - 1).unsqueeze(-1)); }
'''
ext = load_inline(name, cpp_sources=cpp, functions=["topk_mask"], verbose=True)
s.log.info("Custom ops ready.")
kvb = int(torch.cuda.mem_get_info()[0] * 0.1 / 2)
k = torch.empty(kvb, dtype=torch.uint8, device="cuda"); v = torch.empty(kvb, dtype=torch.uint8, device="cuda")
s.kv(torch, kvb // (32 * 8 * 128 * 2), kvb)
signal.signal(signal.SIGTERM, stop)   # the HTTP server's handler exists once it is up
s.ready(kvb // (32 * 8 * 128 * 2))
i = 0
while True:
    time.sleep(3)
    i += 1
    x = torch.randn(4, 4096)
    ext.topk_mask(x, 8)
    s.log.info(f"Decode batch. #running-req: 1, #token: {40 + 8 * i}, token usage: 0.00, gen throughput (token/s): 41.{i % 10}, #queue-req: 0, ")
    s.main.info(f"INFO:     127.0.0.1:{49900 + i} - \"POST /generate HTTP/1.1\" 200 OK")
