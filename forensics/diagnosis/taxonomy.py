"""Root-cause labels (taxonomy v1, ../shared/taxonomy.md). Never rename one."""
TAXONOMY_VERSION = "v1"

LABELS = (
    "env.module-missing", "env.library-missing", "env.abi-mismatch", "env.gpu-arch-unsupported",
    "env.driver-too-old", "toolchain.compiler-missing", "toolchain.compile-failed", "gpu.out-of-memory",
    "gpu.illegal-access", "gpu.cuda-graph-capture", "dist.nccl", "config.model-load",
    "config.invalid-argument", "net.port-in-use", "host.out-of-memory", "hang.timeout", "unknown",
)
LABEL_SET = frozenset(LABELS)
FAILURE_LABELS = tuple(label for label in LABELS if label != "unknown")
