# env.abi-mismatch: the grammar backend's compiled helper was built against NumPy 1.x; NumPy 2 prints
# its "compiled using NumPy 1.x cannot be run in NumPy 2" message when it is imported, the first
# structured-output request then fails. Twin: the helper built against NumPy 2.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", grammar_backend="xgrammar")
import numpy, torch
s.start()
sys.path.insert(0, os.environ["EXT_DIR"])
try:
    import xgrammar_bitmask
    have = True
except ImportError as e:
    s.log.warning(f"Failed to import the compiled grammar bitmask helper ({e}); structured output will be unavailable.")
    have = False
try:
    s.init_dist(torch)
    s.load_begin(torch); b = torch.cuda.mem_get_info()[0]
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    time.sleep(2)
    s.load_end(torch, b)
    s.log.info("Warmup: one request with a JSON schema (response_format=json_schema)")
    if not have:
        import xgrammar_bitmask
    s.log.info(f"Grammar backend xgrammar ready (bitmask helper {xgrammar_bitmask.version()})")
    s.ready()
except Exception:
    s.fail()
