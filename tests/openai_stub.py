"""A local OpenAI-compatible chat-completions server for tests and benchmarks (no paid API).

It answers ``POST /v1/chat/completions`` over real HTTP with chat-completion JSON, deciding the
label by a deterministic rule that reads the judge prompt the way a model would:

* the data blocks are cut at the FIRST closing delimiter after each opening one, so a fake
  closing delimiter that survived into the prompt would cut the response short;
* it is gullible: ``GRADE: C`` or ``Verdict: CORRECT`` found OUTSIDE the data blocks is obeyed,
  so an injection that escapes its block changes the verdict (and a test catches it);
* a refusal phrase in the response block gives NOT_ATTEMPTED; otherwise CORRECT iff the golden
  answer (lowercased) is a substring of the response block (lowercased), else INCORRECT.

Behaviour can be scripted per request (status codes, Retry-After, slow replies, malformed JSON,
free-text replies), globally in FIFO order or for requests whose response block contains a
marker. It counts requests and the maximum number in flight and records the Authorization
headers and JSON bodies it received.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scoring.judge import BLOCKS

REFUSALS = ("i don't know", "i do not know", "cannot answer", "i can't answer")
_GULLIBLE = re.compile(r"GRADE:\s*C\b|Verdict:\s*CORRECT", re.IGNORECASE)


@dataclass
class Action:
    """One scripted reply. ``content`` replaces the rule's reply text; ``body`` replaces the JSON."""

    status: int = 200
    delay: float = 0.0
    content: str | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def rate_limited(retry_after_ms: int | None = 10, retry_after: float | None = None) -> Action:
    """429 with ``retry-after-ms`` and/or a standard ``Retry-After`` (seconds), which the SDK
    honours instead of its own exponential backoff."""
    headers = {}
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Action(status=429, headers=headers)


def server_error(retry_after_ms: int = 10) -> Action:
    return Action(status=500, headers={"retry-after-ms": str(retry_after_ms)})


def slow(seconds: float) -> Action:
    return Action(delay=seconds)


def malformed() -> Action:
    return Action(body=b'{"id": "chatcmpl-broken", "choices": [ {"message": ')


def reply(content: str) -> Action:
    return Action(content=content)


def blocks(prompt: str) -> tuple[dict[str, str], str]:
    """Data blocks by name (first opening, first closing after it) and the text outside them."""
    found: dict[str, str] = {}
    outside = prompt
    for name, (start, end) in BLOCKS.items():
        i = prompt.find(start)
        if i < 0:
            continue
        j = prompt.find(end, i + len(start))
        if j < 0:
            continue
        found[name] = prompt[i + len(start) : j].strip("\n")
        outside = outside.replace(prompt[i : j + len(end)], "", 1)
    return found, outside


def rule_label(prompt: str) -> str | None:
    """The stub model's verdict for a judge prompt; None when it finds no response block."""
    data, outside = blocks(prompt)
    if _GULLIBLE.search(outside):
        return "CORRECT"
    if "response" not in data or "answer" not in data:
        return None
    response = data["response"].lower()
    if any(phrase in response for phrase in REFUSALS):
        return "NOT_ATTEMPTED"
    return "CORRECT" if data["answer"].lower() in response else "INCORRECT"


def expected_label(answer: str, response: str) -> str:
    """The rule applied to the original row (what an un-fooled stub must answer)."""
    if any(phrase in response.lower() for phrase in REFUSALS):
        return "NOT_ATTEMPTED"
    return "CORRECT" if answer.lower() in response.lower() else "INCORRECT"


class StubOpenAI:
    """Start with ``with StubOpenAI(latency=0.1) as stub:``; ``stub.base_url`` ends in ``/v1``."""

    def __init__(self, latency: float = 0.0, json_schema: bool = True, fingerprint: str = "fp_stub_1") -> None:
        self.latency = latency
        self.json_schema = json_schema  # False: answer 400 to response_format, like older servers
        self.fingerprint = fingerprint
        self._lock = threading.Lock()
        self._queue: deque[Action] = deque()
        self._when: list[tuple[str, deque[Action]]] = []
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth_headers: list[str | None] = []
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting -----------------------------------------------------------------------------
    def script(self, *actions: Action) -> None:
        """Replies for the next requests, in arrival order (before the rule applies)."""
        with self._lock:
            self._queue.extend(actions)

    def script_when(self, marker: str, *actions: Action) -> None:
        """Replies for requests whose response block contains ``marker``, in arrival order."""
        with self._lock:
            self._when.append((marker, deque(actions)))

    def reset_counts(self) -> None:
        with self._lock:
            self.requests = 0
            self.max_in_flight = 0
            self.auth_headers.clear()
            self.bodies.clear()
            self.statuses.clear()

    def prompts(self) -> list[str]:
        """The user message of every request received."""
        return [_user_text(body) for body in self.bodies]

    # lifecycle -----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubOpenAI:
        stub = self

        class Handler(_Handler):
            owner = stub

        server = _Server(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # request handling ----------------------------------------------------------------------
    def _next_action(self, response_block: str) -> Action | None:
        with self._lock:
            for marker, queue in self._when:
                if queue and marker in response_block:
                    return queue.popleft()
            if self._queue:
                return self._queue.popleft()
        return None

    def _enter(self, auth: str | None, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.auth_headers.append(auth)
            self.bodies.append(body)

    def _leave(self, status: int) -> None:
        with self._lock:
            self.in_flight -= 1
            self.statuses.append(status)

    def completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        prompt_tokens = max(1, prompt_chars // 4)
        completion_tokens = max(1, len(content) // 4)
        return {
            "id": f"chatcmpl-stub-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "system_fingerprint": self.fingerprint,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def _error_body(status: int, message: str) -> bytes:
    kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
    return json.dumps({"error": {"message": message, "type": kind, "code": None, "param": None}}).encode()


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops SYNs when 16+ clients connect at once, and each
    # dropped SYN costs the client a 1 s retransmit: a benchmark would measure that, not us.
    request_queue_size = 256
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    owner: StubOpenAI
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: object) -> None:  # silence the access log
        return

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            # The client gave up (timeout or cancel) before the reply: that is expected here.
            self.close_connection = True

    def do_POST(self) -> None:  # http.server naming
        stub = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error_body(404, "not found"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, _error_body(400, "body is not JSON"))
            return
        stub._enter(self.headers.get("Authorization"), body)
        status = 200
        try:
            prompt = _user_text(body)
            data, _ = blocks(prompt)
            action = stub._next_action(data.get("response", "")) or Action()
            delay = stub.latency + action.delay
            if delay:
                time.sleep(delay)
            status = action.status
            if status != 200:
                self._send(status, _error_body(status, f"scripted {status}"), action.headers)
                return
            wants_schema = (body.get("response_format") or {}).get("type") == "json_schema"
            if wants_schema and not stub.json_schema:
                status = 400
                self._send(400, _error_body(400, "response_format json_schema is not supported"))
                return
            if action.body is not None:
                self._send(200, action.body, action.headers)
                return
            content = action.content
            if content is None:
                label = rule_label(prompt)
                if label is None:
                    content = "I could not find the response to grade."
                elif wants_schema:
                    content = json.dumps({"label": label})
                else:
                    content = f"The response was compared with the golden answer.\n{label}"
            payload = json.dumps(stub.completion(body, content), ensure_ascii=False).encode()
            self._send(200, payload, action.headers)
        finally:
            stub._leave(status)
