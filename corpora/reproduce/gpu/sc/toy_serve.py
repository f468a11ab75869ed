# A small HTTP inference server of the reproductions' own (not any real server): it loads a toy torch
# model, optionally reserves a KV-style pool, warms up, prints its own neutral "ready" line, then a
# client thread in the same process sends the requests of REQS to it over HTTP. Every line that is not
# from torch, CUDA, dynamo/inductor or http.server's access log ("127.0.0.1 - - [...] "POST ...") is
# this script's own wording ("toyserve ..."), chosen not to imitate any real server.
# Knobs (environment):
#   DEVICE=cuda|auto     auto: falls back to the CPU when torch.cuda.is_available() is False
#   REQS="1x16,4x32"     requests (batch x sequence length) sent after ready
#   BAD_TOKEN=N          the client's first request carries token id N (the tokenizer's added tokens)
#   COMPILE=none|lazy|fullgraph   torch.compile of the forward, built at the first request
#   HEADROOM_GIB=G       reserve a pool leaving G GiB free after warm-up (as servers size their KV pool)
#   WARM_AFTER="1x16,...": batch sizes warmed up in the background after the ready line
#   GUARD=0              no overflow guard in the layer loop (see below)
import json, logging, os, signal, sys, threading, time, traceback, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

logging.basicConfig(level=logging.INFO, format="%(asctime)s.%(msecs)03d toyserve %(levelname)s %(message)s",
                    datefmt="%Y-%m-%d %H:%M:%S", stream=sys.stdout)
log = logging.getLogger("toyserve")
E = os.environ.get
VOCAB, D, LAYERS = 32000, 2048, 4
# GUARD=0 drops the overflow guard: with it, dynamo (fullgraph=False) breaks the graph inside the layer loop
# and runs the whole forward eagerly, so nothing is compiled; without it inductor builds Triton kernels
GUARD = E("GUARD", "1") == "1"


def parse(spec):
    return [tuple(int(v) for v in s.split("x")) for s in spec.split(",") if s]


import torch  # noqa: E402


class Toy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        self.up = torch.nn.ModuleList(torch.nn.Linear(D, 4 * D) for _ in range(LAYERS))
        self.down = torch.nn.ModuleList(torch.nn.Linear(4 * D, D) for _ in range(LAYERS))
        self.head = torch.nn.Linear(D, VOCAB)

    def forward(self, tokens):
        h = self.emb(tokens)
        for up, down in zip(self.up, self.down):
            h = h + down(torch.nn.functional.gelu(up(h)))
            if GUARD and torch.isinf(h).any():  # overflow guard, as T5-style models have
                h = h.clamp(-6e4, 6e4)
        return self.head(h[:, -1]).argmax(-1)


def pick_device():
    want = E("DEVICE", "cuda")
    ok = torch.cuda.is_available()
    log.info("torch %s, cuda available: %s", torch.__version__, ok)
    if want == "auto" and not ok:
        log.info("no usable GPU; running the model on the CPU")
        return "cpu"
    return "cuda"


def gib(n):
    return n / (1 << 30)


def mem(dev):
    if dev != "cuda":
        return "device cpu"
    free, total = torch.cuda.mem_get_info()
    return (f"allocated {gib(torch.cuda.memory_allocated()):.2f} GiB, reserved {gib(torch.cuda.memory_reserved()):.2f} GiB, "
            f"free {gib(free):.2f} of {gib(total):.2f} GiB")


class State:
    fwd = None
    dev = None
    lock = threading.Lock()
    warm = threading.Event()


def run_batch(bs, seq, bad_token=None):
    t = torch.randint(0, VOCAB, (bs, seq), device=State.dev)
    if bad_token is not None:
        t[0, -1] = bad_token
    with torch.inference_mode(), State.lock:
        return State.fwd(t).tolist()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        try:
            out = run_batch(req["bs"], req["seq"], req.get("bad_token"))
        except Exception:
            log.error("request failed (bs=%d, seq=%d):\n%s", req["bs"], req["seq"], traceback.format_exc().rstrip())
            log.error("model worker is unusable; exiting")
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(1)
        body = json.dumps({"next": out[:4]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def client(port):
    bad = E("BAD_TOKEN")
    for i, (bs, seq) in enumerate(parse(E("REQS", "1x16,2x32,4x64"))):
        req = {"bs": bs, "seq": seq}
        if bad and i == 0:
            req["bad_token"] = int(bad)
        data = json.dumps(req).encode()
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/generate", data=data), timeout=300).read()
    State.warm.wait()
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)  # the operator's stop, after the client is done


def warm_after():
    for bs, seq in parse(E("WARM_AFTER", "")):
        log.info("background warm-up: batch %d x %d", bs, seq)
        try:
            run_batch(bs, seq)
        except Exception:
            log.error("background warm-up failed:\n%s", traceback.format_exc().rstrip())
            log.error("model worker is unusable; exiting")
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(1)
    log.info("background warm-up done")
    State.warm.set()


def main():
    State.dev = dev = pick_device()
    log.info("loading toy model (vocab %d, hidden %d, %d layers, bf16) on %s", VOCAB, D, LAYERS, dev)
    model = Toy().to(dev, torch.bfloat16).eval()
    log.info("model loaded: %s", mem(dev))
    State.fwd = model
    for bs, seq in [(1, 16), (4, 64), (8, 128)]:
        run_batch(bs, seq)
    log.info("warm-up done (batch sizes 1, 4, 8): %s", mem(dev))
    if E("HEADROOM_GIB"):
        free = torch.cuda.mem_get_info()[0]
        pool = torch.empty(int(free - float(E("HEADROOM_GIB")) * (1 << 30)), dtype=torch.uint8, device=dev)
        log.info("pool reserved: %.2f GiB; %s", gib(pool.numel()), mem(dev))
    mode = E("COMPILE", "none")
    if mode != "none":
        State.fwd = torch.compile(model, fullgraph=(mode == "fullgraph"))
        log.info("torch.compile on (fullgraph=%s); the forward is compiled at its first request", mode == "fullgraph")
    srv = ThreadingHTTPServer(("127.0.0.1", int(E("PORT", "18080"))), Handler)
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=srv.shutdown).start())
    log.info("ready: listening on http://127.0.0.1:%d", srv.server_port)
    if E("WARM_AFTER"):
        threading.Thread(target=warm_after, daemon=True).start()
    else:
        State.warm.set()
    threading.Thread(target=client, args=(srv.server_port,), daemon=True).start()
    srv.serve_forever()
    log.info("SIGTERM received; stopped serving")


if __name__ == "__main__":
    main()
