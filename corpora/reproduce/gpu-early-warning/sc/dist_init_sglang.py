# dist.nccl / hang.timeout / net.port-in-use: torch.distributed + NCCL initialisation as a server does it.
# The environment decides: NCCL_SOCKET_IFNAME, NCCL_NET, RANK/WORLD_SIZE, MASTER_PORT.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
import datetime
from srv import SGLang
rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
addr = f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:{os.environ.get('MASTER_PORT', '29500')}"
s = SGLang(tp_rank=0, nnodes=world, node_rank=rank, dist_init_addr=addr, tp_size=world,
           dist_timeout=int(os.environ.get("DIST_TIMEOUT", "30")))
import torch, torch.distributed as dist
s.start()
time.sleep(1)
try:
    s.log.info("Init torch distributed begin.")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://{addr}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=int(os.environ.get("DIST_TIMEOUT", "30"))),
                            device_id=torch.device("cuda:0"))
    free, total = torch.cuda.mem_get_info()
    s.log.info(f"Init torch distributed ends. mem usage={(total - free) / (1 << 30):.2f} GB")
    s.load_begin(torch)
    before = torch.cuda.mem_get_info()[0]
    w = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    time.sleep(1)
    s.load_end(torch, before)
    t = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    s.log.info(f"Custom allreduce warmup done. sum={t[0].item():.0f}")
    s.ready()
    dist.destroy_process_group()
except Exception:
    s.fail()
