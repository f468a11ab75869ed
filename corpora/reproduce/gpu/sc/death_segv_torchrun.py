# A worker under torchrun dies of SIGSEGV in native code (here: ctypes reads address 0, standing for a
# custom all-reduce extension that dereferences a bad handle). faulthandler is on, as in SGLang/vLLM,
# so Python prints 'Fatal Python error: Segmentation fault' and the stack; torchrun reports exitcode -11.
import ctypes, faulthandler, os, time, logging
faulthandler.enable()
import torch, torch.distributed as dist
rank = int(os.environ["RANK"])
logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s TP{rank}] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
log = logging.getLogger("sglang.srt.managers.scheduler")
torch.cuda.set_device(0)
log.info("Init torch distributed begin.")
dist.init_process_group("gloo")
log.info("Init torch distributed ends. mem usage=%.2f GB" % ((lambda f, t: (t - f) / 2**30)(*torch.cuda.mem_get_info())))


def init_custom_allreduce(handle_addr):
    log.info("Initializing custom all-reduce buffers (IPC handles)")
    return ctypes.string_at(handle_addr, 64)   # the handle is a bad address on rank 1


if rank == 1:
    init_custom_allreduce(0x10)
dist.barrier()
log.info("custom all-reduce ready")
