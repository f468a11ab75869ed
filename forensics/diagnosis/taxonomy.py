"""The taxonomy, imported from here: root-cause labels (taxonomy v1,
../shared/taxonomy.md; never rename one), the start-up phases (defined once,
in ``events.phases``) and the taxonomy version (``forensics.versions``)."""
from forensics.events.phases import PHASE_ORDER, PHASES
from forensics.versions import TAXONOMY_VERSION

__all__ = ["LABELS", "LABEL_SET", "FAILURE_LABELS", "PHASES", "PHASE_ORDER", "TAXONOMY_VERSION"]

LABELS = (
    "env.module-missing", "env.library-missing", "env.abi-mismatch", "env.gpu-arch-unsupported",
    "env.driver-too-old", "toolchain.compiler-missing", "toolchain.compile-failed", "gpu.out-of-memory",
    "gpu.illegal-access", "gpu.cuda-graph-capture", "dist.nccl", "config.model-load",
    "config.invalid-argument", "net.port-in-use", "host.out-of-memory", "hang.timeout", "unknown",
)
LABEL_SET = frozenset(LABELS)
FAILURE_LABELS = tuple(label for label in LABELS if label != "unknown")
