# An argument check fails in every worker under torchrun (3 workers, --tp-size 3, a model with 28
# attention heads). main() is wrapped in torch.distributed.elastic's @record, as vLLM/SGLang-style
# entry points often are, so the ChildFailedError summary carries the worker's traceback (exitcode 1).
import os, sys, logging
from torch.distributed.elastic.multiprocessing.errors import record
rank = int(os.environ["RANK"]); world = int(os.environ["WORLD_SIZE"])
logging.basicConfig(level=logging.INFO, format=f"INFO %(asctime)s [worker.py:%(lineno)d] rank={rank} %(message)s", datefmt="%m-%d %H:%M:%S")
log = logging.getLogger("worker")


def verify_with_parallel_config(num_heads, tp):
    if num_heads % tp != 0:
        raise ValueError(f"Total number of attention heads ({num_heads}) must be divisible by tensor parallel size ({tp}).")


@record
def main():
    log.info(f"Initializing worker {rank}/{world} for Qwen/Qwen2.5-7B-Instruct (tensor_parallel_size={world})")
    verify_with_parallel_config(28, world)
    log.info("worker ready")


if __name__ == "__main__":
    main()
