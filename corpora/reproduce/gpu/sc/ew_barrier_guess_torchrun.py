# torch's NCCL barrier before any collective, with no device bound (init_process_group without
# device_id, no torch.cuda.set_device): ProcessGroupNCCL guesses the GPU from the global rank and
# warns that a wrong rank-to-GPU mapping can hang. Under torchrun --nproc-per-node 2 on ONE GPU both
# ranks guess GPU 0 (rank % 1) and NCCL refuses two ranks on one device; with --nproc-per-node 1 the
# same warning is printed and the barrier passes. SGLang's scheduler log format.
import os, logging
import torch, torch.distributed as dist
rank = int(os.environ["RANK"])
logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s TP{rank}] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
log = logging.getLogger("sglang.srt.managers.scheduler")
log.info("Init torch distributed begin.")
dist.init_process_group("nccl")
dist.barrier()
log.info("Init torch distributed ends. mem usage=%.2f GB" % ((lambda f, t: (t - f) / 2**30)(*torch.cuda.mem_get_info())))
log.info("The server is fired up and ready to roll!")
dist.destroy_process_group()
