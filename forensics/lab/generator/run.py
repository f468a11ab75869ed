"""One process lifetime of the server: the phases in order, serving, and the
failure when it comes."""

from __future__ import annotations

from forensics.events.phases import PHASES

from .catalog import Failure, Precursor, pick
from .inject import FailureInjection
from .records import Emitter, LogState
from .stories.noise import noise_lines
from .stories.sglang import SglangStory
from .stories.vllm import VllmStory


class Run(SglangStory, VllmStory, FailureInjection):
    """One process lifetime of the server."""

    def __init__(self, st: LogState, failure: Failure | None, stop_at: str | None, precursor: Precursor | None):
        self.st, self.c, self.r = st, st.c, st.c.rng
        self.em = Emitter(st)
        self.failure = failure
        self.stop_at = stop_at           # healthy "starting": stop before this phase
        self.precursor = precursor
        self.pre_done = precursor is None
        self.outcome = "running"
        st.main_pid = self.r.randint(1200, 3999000) if self.r.random() < 0.3 else self.r.randint(900, 99000)
        st.child_pids = [st.main_pid + 60 + i * self.r.randint(1, 40) for i in range(self.c.tp)]
        st.api_pid, st.core_pid = st.main_pid, st.main_pid + self.r.randint(100, 400)

    # -- main flow
    def run(self) -> str:
        c = self.c
        for ph in PHASES[:-1]:
            if self.stop_at == ph:
                self.outcome = "starting"
                return self.outcome
            if ph == "kernel-jit" and not self.wants_jit():
                continue
            if ph == "shutdown":
                break
            self.st.phase = ph
            self.maybe_precursor(ph)
            if self.failure and self.failure.phase == ph:
                getattr(self, f"{c.server}_{ph.replace('-', '_')}")(partial=True)
                self.fail()
                return self.outcome
            getattr(self, f"{c.server}_{ph.replace('-', '_')}")(partial=False)
            if ph != "serving":
                noise_lines(self.em, ph)
        self.outcome = "ready"
        return self.outcome

    def wants_jit(self) -> bool:
        f = self.failure
        if f and f.phase == "kernel-jit":
            return True
        if self.precursor and self.precursor.phase == "kernel-jit":
            return True
        return self.r.random() < 0.35

    # ------------------------------------------------------------------ serving
    def serving_loop(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        n = r.randint(3, 14) if not partial else r.randint(3, 10)
        benign = self.failure is None and r.random() < 0.35
        pre_at = r.randint(0, max(0, n - 2)) if (self.precursor and not self.pre_done and self.precursor.phase == "serving") else -1
        for k in range(n):
            em.adv(0.5, 40)
            if k == pre_at:
                self.maybe_precursor("serving")
                em.adv(*self.precursor.lead) if self.precursor else None
            x = r.random()
            if x < 0.45:
                for _ in range(r.randint(1, 3)):
                    em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST {pick(r, ['/v1/chat/completions', '/v1/chat/completions', '/v1/completions', '/generate'])} HTTP/1.1\" 200 OK", tag="serving")
            elif x < 0.8:
                run = r.randint(1, 120)
                if c.server == "sglang":
                    em.sg((f"Decode batch. #running-req: {run}" if c.gen != "new" else f"Decode batch [{r.randint(40, 90000)}], #running-req: {run}") +
                          f", #token: {r.randint(100, 90000)}, token usage: {r.uniform(0, 0.95):.2f}, cuda graph: {r.random() < 0.8}, gen throughput (token/s): {r.uniform(20, 4000):.2f}, #queue-req: {r.randint(0, 5)}, ", 0, tag="serving")
                else:
                    em.vl("INFO", "loggers.py" if c.gen != "v06" else "metrics.py", f"{'Engine 000: ' if c.gen != 'v06' else ''}Avg prompt throughput: {r.uniform(0, 9000):.1f} tokens/s, Avg generation throughput: {r.uniform(0, 3000):.1f} tokens/s, Running: {run} reqs, Waiting: 0 reqs, GPU KV cache usage: {r.uniform(0, 90):.1f}%, Prefix cache hit rate: {r.uniform(0, 80):.1f}%", "api", tag="serving")
            elif x < 0.9:
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"GET {pick(r, ['/health', '/health', '/metrics', '/v1/models'])} HTTP/1.1\" 200 OK", tag="serving")
            elif c.server == "sglang":
                em.sg(f"Prefill batch. #new-seq: {r.randint(1, 9)}, #new-token: {r.randint(8, 9000)}, #cached-token: {r.randint(0, 9000)}, token usage: {r.uniform(0, 0.9):.2f}, #running-req: {r.randint(0, 60)}, #queue-req: 0", 0, tag="serving")
            if benign and r.random() < 0.25:
                self.benign_error()
        if not self.pre_done and self.precursor and self.precursor.phase == "serving":
            self.maybe_precursor("serving")
            em.adv(*self.precursor.lead)

    def benign_error(self) -> None:
        em, c, r = self.em, self.c, self.r
        k = r.randrange(3)
        if k == 0:
            em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"{pick(r, ['POST /v1/chat/completions', 'GET /v1/models/foo', 'POST /v1/embeddings', 'GET /favicon.ico'])} HTTP/1.1\" {pick(r, ['400 Bad Request', '404 Not Found', '422 Unprocessable Entity'])}")
        elif k == 1:
            if c.server == "vllm":
                lines = ["Error in preprocessing prompt inputs", "Traceback (most recent call last):"] + c.frames([
                    ("vllm/entrypoints/openai/serving_chat.py", "create_chat_completion", "request_prompts, engine_prompts = await self._preprocess_chat(", True),
                    ("vllm/entrypoints/openai/serving_engine.py", "_validate_input", "raise ValueError(")]) + [
                    f"ValueError: This model's maximum context length is {c.model.max_len} tokens. However, you requested {c.model.max_len + r.randint(10, 9000)} tokens in the messages, Please reduce the length of the messages."]
                em.vl_multi("ERROR", "serving_chat.py", lines, "api", tag="")
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request")
            else:
                em.sg(f"Error in request: Input length ({c.model.max_len + r.randint(10, 9000)} tokens) exceeds the maximum allowed length ({c.model.max_len} tokens). Use a shorter input or enable --allow-auto-truncate.")
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request")
        else:
            em.uv("ERROR", "Exception in ASGI application")
            lines = ["Traceback (most recent call last):"] + c.frames([
                (f"{c.sp}/uvicorn/protocols/http/httptools_impl.py", "run_asgi", "result = await app(  # type: ignore[func-returns-value]", True),
                (f"{c.sp}/starlette/routing.py", "app", "response = await f(request)"),
                ("sglang/srt/entrypoints/http_server.py" if c.server == "sglang" else "vllm/entrypoints/openai/api_server.py", "openai_v1_chat_completions" if c.server == "sglang" else "create_chat_completion",
                 "request_json = await raw_request.json()" if c.server == "sglang" else "json_body = await raw_request.json()"),
                (f"{c.sp}/starlette/requests.py", "json", "self._json = json.loads(body)"),
                (f"{c.sp.rsplit('/', 2)[0]}/json/decoder.py", "raw_decode", "raise JSONDecodeError(\"Expecting value\", s, err.value) from None")]) + [
                "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"]
            for ln in lines:
                em.bare(ln, proc="api" if c.server == "vllm" else None)
