"""Shared helpers for the GPU failure reproductions.

Only the *wrapper* lines (server-like INFO lines, the 'Scheduler hit an exception'
wrapper, vLLM's per-line headers) come from here; every error line after them is
what torch / Triton / CUDA / NCCL / the compiler really printed.
"""
import logging
import os
import sys
import traceback

SGLANG_CAPTURE_FAILED_MSG = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
)


def sglang_logger(tp_rank=0):
    """SGLang's scheduler logger format: '[%(asctime)s TP0] %(message)s'."""
    logging.basicConfig(
        level=logging.INFO,
        format=f"[%(asctime)s TP{tp_rank}] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        force=True,
    )
    return logging.getLogger("sglang.srt.managers.scheduler")


def sglang_main_logger():
    """Main-process logger (no rank tag)."""
    lg = logging.getLogger("sglang.srt.entrypoints.engine")
    lg.propagate = False
    h = logging.StreamHandler()
    h.setFormatter(logging.Formatter("[%(asctime)s] %(message)s", datefmt="%Y-%m-%d %H:%M:%S"))
    lg.addHandler(h)
    lg.setLevel(logging.INFO)
    return lg


def sglang_report_and_exit(logger):
    """What SGLang's run_scheduler_process does with an exception."""
    logger.error(f"Scheduler hit an exception: {traceback.format_exc()}")
    sglang_main_logger().error(
        "Received sigquit from a child process. It usually means the child failed."
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


class _NewLineFormatter(logging.Formatter):
    """Mirrors vllm/logging_utils/formatter.py::NewLineFormatter."""

    def format(self, record):
        msg = logging.Formatter.format(self, record)
        if record.message != "":
            parts = msg.split(record.message)
            msg = msg.replace("\n", "\r\n" + parts[0])
        return msg


def vllm_logger(prefix=""):
    """vLLM's default format, with its per-line header on multi-line records."""
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(
        _NewLineFormatter(
            prefix + "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s",
            datefmt="%m-%d %H:%M:%S",
        )
    )
    lg = logging.getLogger("vllm")
    lg.handlers[:] = [h]
    lg.setLevel(logging.INFO)
    lg.propagate = False
    return lg


def gib(n):
    return n / (1 << 30)
