# CUDA graph capture of a small model's decode step for several batch sizes while another thread of the
# same process (a stats reporter, as servers run) reads a GPU counter with .item() every millisecond.
# CAPTURE_MODE is torch.cuda.graph's capture_error_mode (torch's default is "global": any thread's
# potentially unsafe CUDA call during a capture is refused; "thread_local" refuses only the capturing
# thread's). "[repro]" lines are this script's own.
import os, threading, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

MODE = os.environ.get("CAPTURE_MODE", "global")
D, LAYERS = 2048, 8
layers = [torch.nn.Linear(D, D, device="cuda", dtype=torch.bfloat16) for _ in range(LAYERS)]


def forward(x):
    for lin in layers:
        x = x + torch.nn.functional.silu(lin(x))
    return x


served = torch.zeros((), device="cuda", dtype=torch.int64)
stop = threading.Event()


def stats():
    n = 0
    while not stop.is_set():
        n = served.item()
        time.sleep(0.001)
    say(f"stats thread stopped ({n} served)")


threading.Thread(target=stats, name="stats", daemon=True).start()
say(f"torch {torch.__version__}; capturing CUDA graphs (capture_error_mode={MODE})")
static_in = torch.zeros(256, D, device="cuda", dtype=torch.bfloat16)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        forward(static_in)
torch.cuda.current_stream().wait_stream(s)
graphs = {}
for bs in [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256] * 4:
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=MODE):
        out = forward(static_in[:bs])
    graphs[bs] = (g, out)
say(f"captured {len(graphs)} batch sizes")
for bs, (g, out) in graphs.items():
    g.replay()
    served += bs
torch.cuda.synchronize()
stop.set()
time.sleep(0.05)
say(f"ready: replayed every graph, served={served.item()}")
