# torch.distributed on one GPU: how a process group's start goes with the rendezvous settings it is given.
# Started by torchrun (RANK etc. from it) or directly with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT in the
# environment. Lines with "[repro]" are this script's own.
# Knobs: MODE=allreduce|cpu-tensor  INIT_TIMEOUT=seconds  HOLD=seconds to keep the group (and the port) open
import os, time
from datetime import timedelta


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

E = os.environ.get
rank, world = int(E("RANK", "0")), int(E("WORLD_SIZE", "1"))
dev = torch.device("cuda", int(E("LOCAL_RANK", "0")))
torch.cuda.set_device(dev)
say(f"rank {rank} of {world}, master {E('MASTER_ADDR')}:{E('MASTER_PORT')}, torch {torch.__version__}")
say("init_process_group(nccl) begin")
dist.init_process_group("nccl", timeout=timedelta(seconds=int(E("INIT_TIMEOUT", "30"))), device_id=dev)
say("init_process_group done")
x = torch.ones(4) if E("MODE", "allreduce") == "cpu-tensor" else torch.ones(4, device=dev)
dist.all_reduce(x)
say(f"all_reduce: {x.tolist()}")
time.sleep(int(E("HOLD", "0")))
dist.destroy_process_group()
say("done")
