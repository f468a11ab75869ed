"""config.invalid-argument: argparse errors and argument checks of launch_server.py."""
import common
import launch_server

M = "/models/Qwen2.5-7B-Instruct"
SG = "python -m sglang.launch_server"
VL = "vllm serve"

VARIANTS = {
    "unrecognized": lambda: launch_server.main(["--model-path", M, "--tp-size", "2", "--enable-flashinfer-mla-v2", "--disable-radix"], SG),
    "invalid_choice": lambda: launch_server.main(["--model-path", "/models/DeepSeek-V3", "--attention-backend", "flashattn4"], SG),
    "required": lambda: launch_server.main(["--tp-size", "8", "--port", "30010"], SG),
    "invalid_int": lambda: launch_server.main(["--model", M, "--tensor-parallel-size", "two"], VL),
    "invalid_quant": lambda: launch_server.main(["--model", "/models/Llama-3.1-70B-Instruct", "--quantization", "nvfp4"], VL),
    "heads_tp": lambda: launch_server.main(["--model-path", M, "--tp-size", "3"], SG, heads=28),
    "heads_tp_vllm": lambda: launch_server.main(["--model", "/models/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "6"], VL, heads=32),
    "mem_fraction": lambda: launch_server.main(["--model-path", M, "--mem-fraction-static", "1.2"], SG),
    "spec_steps": lambda: launch_server.main(["--model-path", M, "--speculative-algorithm", "EAGLE3"], SG),
    "page_size": lambda: launch_server.main(["--model-path", M, "--page-size", "64", "--chunked-prefill-size", "1000"], SG),
}

if __name__ == "__main__":
    common.main(VARIANTS)
