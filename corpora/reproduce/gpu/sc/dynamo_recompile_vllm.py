# torch.compile of a decode step whose layers call .item() (a graph break in every layer) and that
# sees a new batch size on every step. MODE=bad compiles with dynamic=False, so each new batch size
# recompiles until config.recompile_limit, and fail_on_recompile_limit_hit turns the limit into an
# error; MODE=good leaves dynamic at its default (automatic dynamic shapes after one recompile).
# TORCH_LOGS=graph_breaks,recompiles is set by the driver: both runs print the graph breaks and
# the first recompile.
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import VLLM
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
v = VLLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=8192, enforce_eager=False)
import torch
import torch._dynamo
torch._dynamo.config.fail_on_recompile_limit_hit = True
v.start()


class Layer(torch.nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.lin(x)
        if h.abs().amax().item() > 1e4:  # overflow guard: a graph break in every layer
            h = h.clamp(-1e4, 1e4)
        return x + torch.nn.functional.silu(h)


class Model(torch.nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


try:
    model = v.load(torch, lambda: Model().cuda())
    fn = torch.compile(model, dynamic=False if MODE == "bad" else None)
    t = time.time()
    for step, bs in enumerate([1, 2, 3, 5, 7, 9, 11, 13, 17, 19, 23, 29]):
        fn(torch.randn(bs, 1024, device="cuda"))
    torch.cuda.synchronize()
    v.eng.info(f"torch.compile takes {time.time() - t:.2f} s in total")
    v.kv(torch, 389_120)
    v.ready()
except Exception:
    v.fail()
