"""A request a server logs as a JSON record (method, path and status as fields beside a bare
message, as llama.cpp's server did before 2025) says where the server was: a probe answered is
readiness, a POST to an inference route answered is serving. The message alone ("request") says
neither, so the record's fields are written after it."""
from __future__ import annotations

from forensics import classify_text, parse
from forensics.envelope.containers import access_fields

# llama.cpp's server (b2xxx, early 2024) with its JSON log format: keys sorted (nlohmann::json).
_LLAMA_JSON = "\n".join([
    '{"build":2400,"commit":"a30b324","function":"main","level":"INFO","line":2812,"msg":"build info","tid":"1","timestamp":1713861100}',
    '{"function":"main","level":"INFO","line":3000,"msg":"model loaded","tid":"1","timestamp":1713861120}',
    '{"function":"log_server_request","level":"INFO","line":2737,"method":"GET","msg":"request","params":{},"path":"/health",'
    '"remote_addr":"127.0.0.1","remote_port":59706,"status":200,"tid":"1","timestamp":1713861125}',
]) + "\n"
_POST = ('{"function":"log_server_request","level":"INFO","line":2737,"method":"POST","msg":"request","params":{},'
         '"path":"/completion","remote_addr":"127.0.0.1","remote_port":59710,"status":200,"tid":"1","timestamp":1713861130}\n')


def test_json_request_record_keeps_its_fields():
    texts = [e.text for e in parse(_LLAMA_JSON)]
    assert any('method="GET" path="/health" status=200' in t for t in texts)


def test_probe_answered_is_ready_and_inference_post_is_serving():
    probed = classify_text(_LLAMA_JSON)
    assert (probed["verdict"], probed["phase"]) == ("ready", "ready")
    served = classify_text(_LLAMA_JSON + _POST)
    assert (served["verdict"], served["phase"]) == ("ready", "serving")


def test_not_an_access_record():
    # no status (a request being sent, not answered), a method that is no HTTP method, a path with a space
    assert access_fields({"msg": "request", "method": "GET", "path": "/health"}, "request") == ""
    assert access_fields({"msg": "x", "method": "compute", "path": "/a", "status": 200}, "x") == ""
    assert access_fields({"msg": "x", "method": "GET", "path": "/a b", "status": 200}, "x") == ""
    assert access_fields({"msg": "x", "method": "GET", "path": "/a", "status": True}, "x") == ""
