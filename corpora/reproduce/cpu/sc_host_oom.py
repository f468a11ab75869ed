"""host.out-of-memory: real allocation failures under an address-space limit
(resource.setrlimit(RLIMIT_AS), the same mechanism as `ulimit -v`)."""
import mmap
import resource
import sys

import common

GiB = 1 << 30


def _limit(gib):
    resource.setrlimit(resource.RLIMIT_AS, (int(gib * GiB), int(gib * GiB)))


def bytearray_oom():
    _limit(2)
    buf = bytearray(6 * GiB)  # pinned host buffer for weights
    return buf


def numpy_oom():
    import numpy as np
    _limit(2)
    shards = [np.empty((32000, 4096, 64), dtype=np.float32) for _ in range(2)]
    return shards


def numpy_zeros_oom():
    import numpy as np
    _limit(1.5)
    return np.zeros((151936, 8192), dtype=np.float64)


def torch_empty_oom():
    import torch
    _limit(3)
    return torch.empty((128256, 8192, 4), dtype=torch.float32)


def torch_load_oom():
    import torch
    _limit(3)
    return [torch.ones((4096, 4096, 64), dtype=torch.bfloat16) for _ in range(4)]


def mmap_oom():
    _limit(1)
    return mmap.mmap(-1, 4 * GiB)  # anonymous shared buffer for the KV cache transfer


VARIANTS = {
    "bytearray": bytearray_oom,
    "numpy": numpy_oom,
    "numpy_zeros": numpy_zeros_oom,
    "torch_empty": torch_empty_oom,
    "torch_ones": torch_load_oom,
    "mmap": mmap_oom,
}

if __name__ == "__main__":
    common.main(VARIANTS)
