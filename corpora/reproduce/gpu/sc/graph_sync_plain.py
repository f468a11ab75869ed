# gpu.cuda-graph-capture: torch.cuda.synchronize() inside a capture.
import torch
x = torch.randn(1024, 1024, device="cuda")
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = x @ x
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x @ x
    torch.cuda.synchronize()
    z = y.relu()
g.replay()
