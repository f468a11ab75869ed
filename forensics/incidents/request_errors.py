"""Whether a traceback is one request's error: raised while a server handled one HTTP request
(the server answers 4xx/5xx and keeps serving), or a client's report of such an answer from this
machine. The verdicts ask it before a traceback may end a lifetime."""
from __future__ import annotations

import re

from forensics.events import types as kinds
from forensics.events.types import Event

# Starlette runs an app's start-up handlers (where many servers load their model) through its
# router's lifespan; uvicorn drives it from uvicorn/lifespan/. Such a traceback is a start-up's:
# its frames are Starlette's but it answers no request ("Application startup failed" follows).
_LIFESPAN_FUNCTIONS = frozenset(("lifespan", "startup", "_run_lifespan"))


def traceback_frames(ev: Event) -> list:
    """Every frame of a traceback event: its own and those of each exception of its chain."""
    frames = list(ev.data.get("frames") or ())
    for exc in ev.data.get("chain") or ():
        frames.extend(exc.frames)
    return frames


def _is_lifespan(file: str, function: str) -> bool:
    return "uvicorn/lifespan/" in file or (file.endswith("starlette/routing.py") and function in _LIFESPAN_FUNCTIONS)


# Frames only a request handler runs: ASGI/web stacks, vLLM's and SGLang's serving
# modules, LMDeploy's request path (api_server, async_engine.generate), Xinference's REST API.
_REQUEST_FRAMES = re.compile(r"starlette/|fastapi/|uvicorn/protocols/|/entrypoints/openai/serving_|/entrypoints/http_server\.py|aiohttp/web"
                             r"|lmdeploy/serve/openai/|lmdeploy/serve/(core/)?async_engine\.py|xinference/api/restful_api\.py"
                             # TorchServe's worker runs each inference through its service's predict
                             r"|/ts/service\.py")


# An HTTP client's exception for an error status (requests' raise_for_status, httpx, aiohttp)
# on a request to this machine: the local server was up and answered it with 4xx/5xx. (A
# server's own download that a hub answers with 404 is no such answer: it names another host.)
_CLIENT_STATUS = re.compile(r"^(?:requests\.exceptions\.HTTPError|httpx\.HTTPStatusError|"
                            r"aiohttp\.(?:client_exceptions\.)?ClientResponseError)$")
_LOCAL_URL = re.compile(r"\bhttps?://(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\])[:/]")


# A model compiled lazily (torch.compile, a Triton kernel) compiles at its first request:
# when that compile fails, every request fails the same way; not one bad request.
_LAZY_COMPILE = re.compile(r"(?:^|\.)(?:BackendCompilerFailed|InvalidCxxCompiler|CppCompileError|InductorError"
                           r"|CompilationError)$")


def request_level(ev: Event) -> bool:
    """An exception raised while handling one HTTP request (a bad client
    request): the server answers 4xx/5xx and keeps serving; or a client's
    report of such an answer from this machine (the server was up and answered)."""
    if ev.kind != kinds.TRACEBACK:
        return False
    if any(_LAZY_COMPILE.search(exc.exc_type or "") for exc in ev.data.get("chain") or ()):
        return False
    carrier = ev.data.get("carrier") or ""
    if "Exception in ASGI application" in carrier:
        return True
    chain = ev.data.get("chain") or ()
    if chain and _CLIENT_STATUS.match(chain[-1].exc_type or "") and _LOCAL_URL.search(chain[-1].exc_message or ""):
        return True
    if (ev.logger or "").startswith(("serving_chat", "serving_completion", "serving_engine", "serving_responses")):
        return True  # vLLM's request handlers log the request's traceback at ERROR
    if _unwound_to_top(ev):
        return False
    frames = traceback_frames(ev)
    if any(_is_lifespan(f.file, f.function) for f in frames):
        return False  # the app's start-up (model loading in a lifespan handler), not a request
    # A "<module>" frame is an import (the server's modules loading at start-up), not a request.
    return any(_REQUEST_FRAMES.search(f.file) and f.function != "<module>" or
               f.function in _SOCKETSERVER_REQUEST and f.file.endswith(_SOCKETSERVER_FILES) for f in frames)


# The outermost frame of a traceback Python printed because nothing caught the exception: the main
# script's top level, or runpy's (``python -m``). A request handler's traceback begins at the frame
# that caught it (the server's loop goes on); one that begins here unwound the whole main program,
# and the interpreter exits after printing it (sglang's launch_server failing to bind its socket
# inside http_server.py, whose request handlers live in the same file).
_TOP_FRAMES = frozenset({"<module>", "_run_module_as_main"})


def _unwound_to_top(ev: Event) -> bool:
    chain = ev.data.get("chain") or ()
    frames = chain[-1].frames if chain and chain[-1].frames else ev.data.get("frames") or ()
    return bool(frames) and frames[0].function in _TOP_FRAMES and not frames[0].partial


# Python's socketserver (http.server's servers are built on it) runs each request in these methods
# and, when one raises, prints "Exception occurred during processing of request from ..." with the
# traceback (BaseServer.handle_error) and serves the next: one request's error. Its start-up
# (server_bind, server_activate) runs in other methods.
_SOCKETSERVER_REQUEST = frozenset({"_handle_request_noblock", "process_request", "process_request_thread",
                                   "finish_request", "handle_one_request"})
_SOCKETSERVER_FILES = ("socketserver.py", "http/server.py")
