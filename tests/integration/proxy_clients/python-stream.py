"""A plain user script that streams a Messages request with Python's httpx (the HTTP stack of the
official Anthropic and OpenAI Python SDKs) or requests, run by test_agents.py as `curlretry --
python3 python-stream.py httpx|requests`: each library's defaults (HTTPS_PROXY and the CA variables
from the environment, no retries of its own), the status and the streamed text on stdout, as an SDK
user's script prints it."""

import json
import sys

URL = "https://api.anthropic.com/v1/messages"
BODY = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
                   "messages": [{"role": "user", "content": "Say hello"}]}).encode()
HEADERS = {"content-type": "application/json", "x-api-key": "sk-ant-test-not-a-key",
           "anthropic-version": "2023-06-01"}


def show(status: int, lines) -> None:
    sys.stdout.write(f"{status}\n")
    for line in lines:
        if line.startswith("data: "):
            event = json.loads(line[len("data: "):])
            if event.get("type") == "content_block_delta":
                sys.stdout.write(event["delta"]["text"])
            elif event.get("type") == "error":
                sys.stdout.write(f"error: {event['error']['type']}")
    sys.stdout.write("\n")


if sys.argv[1] == "httpx":
    import httpx
    with httpx.stream("POST", URL, content=BODY, headers=HEADERS, timeout=60) as response:
        show(response.status_code, response.iter_lines())
else:
    import requests
    with requests.post(URL, data=BODY, headers=HEADERS, timeout=60, stream=True) as response:
        show(response.status_code, response.iter_lines(decode_unicode=True))
