# gpu.cuda-graph-capture: capture_begin() on the default (legacy) stream.
import torch
x = torch.randn(256, device="cuda")
g = torch.cuda.CUDAGraph()
g.capture_begin()
y = x * 2
g.capture_end()
g.replay()
