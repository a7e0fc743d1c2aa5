"""The bodies of the flaky upstream's `sse-<name>` scripts (upstream/sse_scripts.cpp),
mirrored byte for byte so that tests can assert exactly what a host received. A control test in
test_sse_streams.py checks this mirror against the upstream itself."""

from __future__ import annotations


def _event(kind: str, data: str) -> str:
    return f"event: {kind}\ndata: {data}\n\n"


def _message_start(key: str, attempt: int) -> str:
    return _event("message_start", '{"type":"message_start","message":{"id":"msg_%s_%d","type":"message",'
                  '"role":"assistant","content":[],"model":"claude-test"}}' % (key, attempt))


PING = _event("ping", '{"type": "ping"}')


def _error(kind: str, message: str) -> str:
    return _event("error", '{"type":"error","error":{"type":"%s","message":"%s"}}' % (kind, message))


OVERLOADED = _error("overloaded_error", "Overloaded")
BLOCK_START = _event("content_block_start",
                     '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}')


def _delta(text: str) -> str:
    return _event("content_block_delta",
                  '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}}' % text)


GOOD_TAIL = [BLOCK_START, _delta("Hello"), _delta(" world"),
             _event("content_block_stop", '{"type":"content_block_stop","index":0}'),
             _event("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}'),
             _event("message_stop", '{"type":"message_stop"}')]


def _chat(key: str, attempt: int, delta: str, finish: str) -> str:
    return ('data: {"id":"chatcmpl-%s-%d","object":"chat.completion.chunk","choices":[{"index":0,"delta":%s,'
            '"finish_reason":%s}]}\n\n' % (key, attempt, delta, finish))


ROLE_DELTA = '{"role":"assistant","content":"","refusal":null}'


def events(name: str, key: str, attempt: int, number: int = 0) -> list[str]:
    """The events of one attempt, LF line ends, as the upstream writes them (one write each)."""
    if name == "sse-overload":
        return [_message_start(key, attempt), PING, OVERLOADED]
    if name in ("sse-good", "sse-stall"):
        return [_message_start(key, attempt), PING, *GOOD_TAIL]
    if name == "sse-late-error":
        return [_message_start(key, attempt), PING, BLOCK_START, _delta("Hel"), OVERLOADED]
    if name == "sse-invalid":
        return [_message_start(key, attempt), _error("invalid_request_error", "max_tokens: too large")]
    if name == "sse-pings":
        pings = -(-number // len(PING)) if number else 0
        return [_message_start(key, attempt), *([PING] * pings), OVERLOADED]
    if name == "sse-oai-chat-good":
        return [_chat(key, attempt, ROLE_DELTA, "null"), _chat(key, attempt, '{"content":"Hello"}', "null"),
                _chat(key, attempt, "{}", '"stop"'), "data: [DONE]\n\n"]
    if name == "sse-oai-chat-overload":
        return [_chat(key, attempt, ROLE_DELTA, "null"),
                'data: {"error":{"message":"The server is overloaded","type":"server_error","param":null,'
                '"code":"server_is_overloaded"}}\n\n']
    if name == "sse-oai-responses-overload":
        rid = f"resp_{key}_{attempt}"
        return [_event("response.created", '{"type":"response.created","response":{"id":"%s","status":"in_progress",'
                       '"error":null}}' % rid),
                _event("response.in_progress", '{"type":"response.in_progress","response":{"id":"%s",'
                       '"status":"in_progress","error":null}}' % rid),
                _event("response.failed", '{"type":"response.failed","response":{"id":"%s","status":"failed",'
                       '"error":{"code":"server_is_overloaded","message":"The server is overloaded"}}}' % rid)]
    if name == "sse-anthropic-good":
        return [_event("message_start", '{"type":"message_start","message":{"id":"msg_%s_%d","type":"message",'
                       '"role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,'
                       '"usage":{"input_tokens":1,"output_tokens":1}}}' % (key, attempt)),
                PING, BLOCK_START, _delta("Hello"), _delta(" world"),
                _event("content_block_stop", '{"type":"content_block_stop","index":0}'),
                _event("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
                       '"usage":{"output_tokens":2}}'),
                _event("message_stop", '{"type":"message_stop"}')]
    if name == "sse-oai-responses-good":
        rid, item = f"resp_{key}_{attempt}", f"msg_{key}_{attempt}"
        message = ('{"type":"message","id":"%s","status":"completed","role":"assistant","content":[{"type":'
                   '"output_text","text":"Hello world","annotations":[]}]}' % item)
        return [_event("response.created", '{"type":"response.created","response":{"id":"%s","status":"in_progress",'
                       '"error":null}}' % rid),
                _event("response.output_item.added", '{"type":"response.output_item.added","output_index":0,"item":{'
                       '"type":"message","id":"%s","status":"in_progress","role":"assistant","content":[]}}' % item),
                _event("response.output_text.delta", '{"type":"response.output_text.delta","item_id":"%s",'
                       '"output_index":0,"content_index":0,"delta":"Hello world"}' % item),
                _event("response.output_item.done", '{"type":"response.output_item.done","output_index":0,"item":%s}'
                       % message),
                _event("response.completed", '{"type":"response.completed","response":{"id":"%s","status":"completed",'
                       '"error":null,"output":[%s],"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},'
                       '"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":3}}}'
                       % (rid, message))]
    if name == "sse-gemini-good":
        return ['data: {"candidates":[{"content":{"parts":[{"text":"Hello world"}],"role":"model"},"finishReason":"STOP",'
                '"index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2,"totalTokenCount":3},'
                '"modelVersion":"gemini-test","responseId":"%s_%d"}\n\n' % (key, attempt)]
    if name == "sse-gemini-overload":
        return ['data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}\n\n']
    raise ValueError(f"unknown SSE script {name}")


def body(step: str, key: str, attempt: int) -> bytes:
    """What a client receives for one attempt of `step` (e.g. "sse-overload+eol=crlf+split=1")."""
    base, *modifiers = step.split("+")
    eol = "\n"
    for m in modifiers:
        if m == "eol=crlf":
            eol = "\r\n"
        elif m == "eol=cr":
            eol = "\r"
    number = 0
    for prefix in ("sse-stall-", "sse-pings-"):
        if base.startswith(prefix):
            number = int(base[len(prefix):])
            base = prefix[:-1]
    text = "".join(events(base, key, attempt, number))
    return text.replace("\n", eol).encode()
