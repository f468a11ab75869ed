"""A small server launcher with a realistic CLI (SGLang/vLLM-like options).
Used by sc_invalid_argument.py; all errors are printed by argparse or raised by
the argument checks below."""
import argparse
import dataclasses
import sys


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    dp_size: int = 1
    mem_fraction_static: float = 0.88
    max_model_len: int = 32768
    attention_backend: str = "flashinfer"
    quantization: str = None
    num_attention_heads: int = 28
    speculative_num_steps: int = None
    speculative_algorithm: str = None
    chunked_prefill_size: int = 8192
    page_size: int = 1

    def __post_init__(self):
        assert 0 < self.mem_fraction_static < 1, f"mem_fraction_static must be in (0, 1), got {self.mem_fraction_static}"
        if self.num_attention_heads % self.tp_size != 0:
            raise ValueError(
                f"Total number of attention heads ({self.num_attention_heads}) must be divisible by "
                f"tensor parallel size ({self.tp_size}).")
        if self.speculative_algorithm is not None and self.speculative_num_steps is None:
            raise ValueError("speculative_num_steps must be set when speculative_algorithm is set")
        if self.chunked_prefill_size % self.page_size != 0:
            raise ValueError(f"chunked_prefill_size ({self.chunked_prefill_size}) must be a multiple of page_size ({self.page_size})")


def make_parser(prog):
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tp-size", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    p.add_argument("--dp-size", type=int, default=1)
    p.add_argument("--mem-fraction-static", type=float, default=0.88)
    p.add_argument("--max-model-len", type=int, default=32768)
    p.add_argument("--attention-backend", choices=["flashinfer", "triton", "torch_native", "fa3", "flashmla", "cutlass_mla"], default="flashinfer")
    p.add_argument("--quantization", choices=["awq", "fp8", "gptq", "marlin", "w8a8_int8", "modelopt"], default=None)
    p.add_argument("--kv-cache-dtype", choices=["auto", "fp8_e5m2", "fp8_e4m3"], default="auto")
    p.add_argument("--speculative-algorithm", choices=["EAGLE", "EAGLE3", "NEXTN"], default=None)
    p.add_argument("--speculative-num-steps", type=int, default=None)
    p.add_argument("--chunked-prefill-size", type=int, default=8192)
    p.add_argument("--page-size", type=int, default=1)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--enable-torch-compile", action="store_true")
    return p


def main(argv, prog="python -m sglang.launch_server", heads=28):
    args = make_parser(prog).parse_args(argv)
    return ServerArgs(model_path=args.model_path, tp_size=args.tp_size, dp_size=args.dp_size,
                      mem_fraction_static=args.mem_fraction_static, max_model_len=args.max_model_len,
                      attention_backend=args.attention_backend, quantization=args.quantization,
                      num_attention_heads=heads, speculative_num_steps=args.speculative_num_steps,
                      speculative_algorithm=args.speculative_algorithm,
                      chunked_prefill_size=args.chunked_prefill_size, page_size=args.page_size)


if __name__ == "__main__":
    main(sys.argv[1:])
