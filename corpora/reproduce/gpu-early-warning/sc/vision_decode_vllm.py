# env.library-missing: torchvision's image extension cannot load a bundled library; torchvision warns
# "Failed to load image Python extension"; the vision-tower warmup's decode_jpeg fails later.
# Twin: the complete install.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model="Qwen/Qwen2.5-VL-7B-Instruct", max_model_len=32768, limit_mm_per_prompt={"image": 2})
import io, torch, torchvision
from torchvision.io import decode_jpeg
v.start(torch)
try:
    w = v.load(torch, lambda: torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16))
    time.sleep(2)
    v.kv(torch, 312000)
    from PIL import Image
    buf = io.BytesIO(); Image.new("RGB", (448, 448), (120, 30, 200)).save(buf, format="JPEG")
    data = torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)
    v.eng.info("Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature size.")
    img = decode_jpeg(data)
    v.eng.info(f"Vision warmup image decoded: {tuple(img.shape)}")
    v.ready()
except Exception:
    v.fail()
