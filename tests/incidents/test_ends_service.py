"""A failure whose signature says it fails the deployment's service (``ends_service``: a PD deployment's
KV transfer on a request, signatures/pd-kv-transfer.yaml) holds while the processes stay up and answer,
where another error of a ready server followed by serving is one request's; not once the server shut down."""
from forensics import api

TRANSFER = ("[2025-09-17 16:23:13 TP1] Decode transfer failed for request rank=1 decode_req.req.rid='3ce8' "
            "decode_req.req.bootstrap_room=16 with exception KVTransferError(bootstrap_room=16): Failed due to an "
            "unknown reason from another rank\n")
TIMED_OUT = ("[2025-09-17 16:23:13 TP0] Decode transfer failed for request rank=0 decode_req.req.rid='5687' "
             "decode_req.req.bootstrap_room=79 with exception KVTransferError(bootstrap_room=79): Request 79 timed "
             "out after 600.0s in KVPoll.WaitingForInput\n")
ACCESS = '[2025-09-17 16:23:16] INFO:     10.10.11.1:41698 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
HEALTH = '[2025-09-17 16:23:26] INFO:     10.10.11.1:41712 - "GET /health HTTP/1.1" 200 OK\n'
SHUTDOWN = "[2025-09-17 16:23:30] INFO:     Shutting down\n"


def test_a_kv_transfer_failure_fails_the_service_though_the_server_answers_after_it() -> None:
    res = api.classify_text(ACCESS + TRANSFER + ACCESS + HEALTH)
    assert (res["verdict"], res["root_cause"], res["phase"]) == ("failed", "unknown", "serving")


def test_a_kv_poll_timeout_is_a_deadline_that_fired() -> None:
    res = api.classify_text(ACCESS + TIMED_OUT + HEALTH)
    assert (res["verdict"], res["root_cause"]) == ("failed", "hang.timeout")


def test_an_excerpt_that_begins_with_the_failure_is_failed() -> None:
    assert api.classify_text(TRANSFER + ACCESS + HEALTH)["verdict"] == "failed"


def test_not_once_the_server_shut_down() -> None:
    assert api.classify_text(ACCESS + HEALTH + SHUTDOWN + TRANSFER)["verdict"] != "failed"


STARTING = ["[2025-09-17 16:19:10 TP0] Load weight begin. avail mem=78.00 GB\n",
            "[2025-09-17 16:19:30 TP0] Load weight end. type=WidgetForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB\n",
            "[2025-09-17 16:19:35 TP0] KV Cache is allocated. #tokens: 100000, K size: 5.00 GB, V size: 5.00 GB\n",
            "[2025-09-17 16:19:40] INFO:     Application startup complete.\n"]
READY = "[2025-09-17 16:20:00] The server is fired up and ready to roll!\n"


def test_not_a_transfer_failed_during_a_start_up_the_server_went_on_past() -> None:
    # start-up markers before it, a readiness line after it: a start-up error it survived (review22)
    res = api.classify_text("".join(STARTING) + TRANSFER + READY + ACCESS + ACCESS)
    assert res["verdict"] == "ready", (res["verdict"], res["evidence"])
