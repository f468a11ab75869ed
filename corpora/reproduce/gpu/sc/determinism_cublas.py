# A reproducible fine-tuning step: torch.use_deterministic_algorithms on, with or without warn_only, with or
# without CUBLAS_WORKSPACE_CONFIG in the environment. Lines with "[repro]" are this script's own.
# Knobs: WARN_ONLY=0|1 (CUBLAS_WORKSPACE_CONFIG comes from the caller's environment)
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

warn_only = os.environ.get("WARN_ONLY", "0") == "1"
say(f"torch {torch.__version__}; deterministic algorithms on (warn_only={warn_only}); "
    f"CUBLAS_WORKSPACE_CONFIG={os.environ.get('CUBLAS_WORKSPACE_CONFIG')}")
torch.manual_seed(0)
torch.use_deterministic_algorithms(True, warn_only=warn_only)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 256, device="cuda"), torch.randint(0, 10, (64,), device="cuda")
for step in range(3):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    say(f"step {step} loss {loss.item():.4f}")
