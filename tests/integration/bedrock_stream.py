"""Amazon Bedrock's streamed answer (InvokeModelWithResponseStream) as Claude Code's Bedrock SDK
reads it: AWS event-stream messages (application/vnd.amazon.eventstream), each a `chunk` event
whose JSON payload carries one Anthropic Messages event, base64-encoded, in `bytes`."""

from __future__ import annotations

import base64
import json
import struct
import zlib


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + b"\x07" + struct.pack("!H", len(raw_value)) + raw_value


def message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (total and headers lengths, its CRC32), headers, payload,
    the CRC32 of all before it."""
    raw_headers = b"".join(_header(k, v) for k, v in headers.items())
    prelude = struct.pack("!II", 12 + len(raw_headers) + len(payload) + 4, len(raw_headers))
    body = prelude + struct.pack("!I", zlib.crc32(prelude)) + raw_headers + payload
    return body + struct.pack("!I", zlib.crc32(body))


def chunk(event: dict) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    return message({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)


def anthropic_good(message_id: str) -> list[dict]:
    """The events of the sandbox upstream's sse-anthropic-good, text "Hello world"."""
    return [
        {"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant", "content": [],
                                              "model": "claude-test", "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " world"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 2}},
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 1, "outputTokenCount": 2,
                                                                      "invocationLatency": 1, "firstByteLatency": 1}},
    ]


def response(message_id: str) -> bytes:
    """The whole HTTP/1.1 answer, closed after."""
    body = b"".join(chunk(e) for e in anthropic_good(message_id))
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
            b"x-amzn-RequestId: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
            % (message_id.encode(), len(body), body))
