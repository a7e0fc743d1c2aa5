"""Seeded generator of fault scripts for test_fault_injection.py.

`cases(seed, count, run_id)` gives `count` cases, each a script (a key, a policy and a list of
upstream steps), the host that will run it and the request body that host sends. The same seed
gives the same cases (the run id only goes into the keys, so reruns against one upstream never
share a counter).
"""

from __future__ import annotations

import dataclasses
import os
import random
import urllib.parse

from . import model

HOSTS = ("curl", "easy", "perform", "socket")

# How each host can send a request body: the host's option -> (method, rewindable by libcurl,
# replayable by the shim whatever its size). "get" sends none.
UPLOADS = {
    "curl": {"get": ("GET", True, True), "data": ("POST", True, True), "put": ("PUT", True, True)},
    "easy": {"get": ("GET", True, True), "seek": ("POST", True, True), "noseek": ("POST", False, False),
             "fileonly": ("POST", True, True)},
    "perform": {"get": ("GET", True, True), "postfields": ("POST", True, True), "seek": ("POST", True, True),
                "noseek": ("POST", False, False)},
}
UPLOADS["socket"] = UPLOADS["perform"]

# Statuses and how often they come up.
STATUSES = {200: 8, 201: 1, 204: 1, 400: 2, 401: 1, 403: 1, 404: 1, 408: 1, 409: 1, 422: 1, 425: 1, 429: 3,
            500: 2, 501: 1, 502: 2, 503: 6, 504: 1, 529: 3, 599: 1}
KINDS = {"status": 30, "captcha": 3, "quota": 2, "zai1302": 2, "reset": 4, "close": 4, "hang": 2, "sse": 0.6,
         "break": 2.5, "echo": 3, "ssescript": 3}
RA = ["0", "1", "2", "120", "abc", "-1", "1.5", *model.PAST_DATES, *model.FUTURE_DATES]
RAM = ["0", "1", "10", "20", "21", "50", "51", "5000", "x", "12.5", "-3", "0.0001"]
XSR = ["true", "false", "TRUE", "maybe"]
LENGTHS = [0, 10, 4095, 4097, 65536, 65537, 100000]
BREAKS = [0, 0, 1, 100, 5000, 70000]

# Policies a script runs under (model.POLICIES), and how often.
POLICY_WEIGHTS = {"a1": 1, "a2": 2, "a3": 4, "a5": 3, "au": 1.5, "nr": 2, "ih": 1.5, "cz": 2, "to": 1.5}
# Multi hosts give some transfers a short CURLOPT_TIMEOUT_MS and a script that ends in a hang
# longer than it (everything before the hang is quick: no server waits, no hangs, no streams).
TIMEOUT_SHARE = 0.08
# Sanitizer builds run several times slower, and the quick steps before the hang must still fit in
# the host's timeout: CMakePresets.json gives their test presets a larger one.
TIMEOUT_MS = int(os.environ.get("CURLRETRY_FAULT_TIMEOUT_MS", "600"))
TIMEOUT_HANG = f"hang{max(2000, TIMEOUT_MS * 3)}"


@dataclasses.dataclass
class Case:
    index: int
    host: str
    script: model.Script
    upload_mode: str
    upload: model.Upload
    timeout_ms: int | None = None  # the host's CURLOPT_TIMEOUT_MS, when the script outlasts it
    headers: bool = True  # False: the easy and multi hosts run it without a header callback

    def describe(self) -> str:
        size = "-" if self.upload.data is None else f"{len(self.upload.data)} bytes"
        timeout = f" timeout={self.timeout_ms}ms" if self.timeout_ms else ""
        headers = "" if self.headers else " noheaders"
        return (f"case {self.index} host={self.host} policy={self.script.policy.name} upload={self.upload_mode} "
                f"({size}){timeout}{headers} script={self.script.text}")


def _weighted(rng: random.Random, table: dict):
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys])[0]


def _encode(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def random_step(rng: random.Random) -> model.Step:
    kind = _weighted(rng, KINDS)
    if kind == "reset" or kind == "close":
        return model.Step.parse(kind)
    if kind == "sse":
        return model.Step.parse(f"sse{rng.randint(0, 2)}")
    if kind == "ssescript":
        return model.Step.parse(rng.choice(list(model.SSE_SCRIPTS)))
    if kind == "break":
        return model.Step.parse(f"break{rng.choice(BREAKS)}")
    if kind == "hang":
        base = f"hang{rng.randint(1, 80)}"
    elif kind == "status":
        base = str(_weighted(rng, STATUSES))
    else:
        base = kind  # captcha, quota, zai1302, echo
    mods = []
    r = rng.random()
    if r < 0.12:
        mods.append("ra=" + _encode(rng.choice(RA)))
    elif r < 0.24:
        mods.append("ram=" + _encode(rng.choice(RAM)))
    elif r < 0.29:
        mods.append(f"radate={rng.choice([0, 0, 3600])}")
    elif r < 0.33:
        mods += ["ra=" + _encode(rng.choice(["0", "1"])), "ram=" + _encode(rng.choice(RAM))]
    if rng.random() < 0.1:
        mods.append("xsr=" + rng.choice(XSR))
    if base.isdigit() and rng.random() < 0.1:
        mods.append(f"len={rng.choice(LENGTHS)}")
    if rng.random() < 0.15:
        mods.append("close")
    return model.Step.parse("+".join([base, *mods]))


def random_upload(rng: random.Random, host: str) -> tuple[str, model.Upload]:
    modes = UPLOADS[host]
    mode = "get" if rng.random() < 0.6 else rng.choice([m for m in modes if m != "get"])
    method, rewindable, replayable = modes[mode]
    if mode == "get":
        return mode, model.Upload()
    r = rng.random()
    if r < 0.1:
        size = 0
    elif r < 0.6:
        size = rng.randint(1, 3000)
    elif r < 0.85:
        size = rng.randint(3000, 60000)
    else:
        size = rng.randint(model.MAX_UPLOAD_REPLAY + 1, 150000)
    data = rng.randbytes(size)
    # A read-callback upload without a seek callback is replayed from the shim's copy, which
    # holds at most max_upload_replay bytes.
    replayable = replayable or size <= model.MAX_UPLOAD_REPLAY
    return mode, model.Upload(method, data, rewindable, replayable)


def random_script(rng: random.Random, key: str, policy: model.Policy) -> model.Script:
    n = min(1 + int(rng.expovariate(0.55)), 7)
    steps = [random_step(rng) for _ in range(n)]
    if policy.max_attempts == -1:
        # Unlimited attempts: the last step repeats forever, so it must end the transfer.
        while not model.is_terminal(policy, steps[-1]):
            steps[-1] = random_step(rng)
    return model.Script(key, policy, tuple(steps))


def quick_step(rng: random.Random) -> model.Step:
    """A step that answers at once: no server wait, no hang, no stream."""
    while True:
        step = random_step(rng)
        if step.kind not in ("hang", "sse") and step.ra is None and step.ram is None and step.radate is None:
            return step


def timeout_script(rng: random.Random, key: str, policy: model.Policy) -> model.Script:
    steps = [quick_step(rng) for _ in range(rng.randint(0, 3))]
    return model.Script(key, policy, tuple(steps) + (model.Step.parse(TIMEOUT_HANG),))


def cases(seed: int, count: int, run_id: str) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        policy = model.POLICIES[_weighted(rng, POLICY_WEIGHTS)]
        host = HOSTS[i % len(HOSTS)]
        key = f"{policy.name}-{run_id}-{i}"
        timeout = None
        if host in ("perform", "socket") and rng.random() < TIMEOUT_SHARE:
            script, timeout = timeout_script(rng, key, policy), TIMEOUT_MS
        else:
            script = random_script(rng, key, policy)
        mode, upload = random_upload(rng, host)
        # Every other round of the C hosts reads no headers: the shim then learns the status and
        # hints from libcurl instead of its own header callback. Chosen by index, so that a
        # seed's scripts stay what they were.
        headers = host == "curl" or (i // len(HOSTS)) % 2 == 0
        out.append(Case(i, host, script, mode, upload, timeout, headers))
    return out
