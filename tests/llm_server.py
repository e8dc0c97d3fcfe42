"""A small loopback HTTP server speaking the Chat Completions and Messages APIs (and answering RapidAPI-style
GET requests) with scripted replies.

Tests queue replies per endpoint (`/v1/chat/completions`, `/v1/messages`); each request takes the
next one, a reply marked `forever` answers every later request. Every request is kept (path, headers,
JSON body) so tests can check exactly what the real SDKs sent. Like the hosted APIs, the server rejects
a request that breaks their rules (tests/provider_rules.py) with their 400 answer, before taking a reply
from the queue.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.provider_rules import anthropic_violation, openai_violation

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"
RULES = {CHAT: openai_violation, MESSAGES: anthropic_violation}


@dataclass
class Reply:
    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    forever: bool = False


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    query: str = ""


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any,
              headers: dict[str, str] | None = None) -> None:
    """Answer a request with a JSON body (shared by the loopback test servers)."""
    payload = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


def openai_calls(*calls: tuple[str, str, dict[str, Any] | str], text: str | None = None) -> Reply:
    """A chat completion whose message carries these (id, name, arguments) tool calls."""
    tool_calls = [{"id": call_id, "type": "function",
                   "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                  for call_id, name, args in calls]
    return _completion({"role": "assistant", "content": text, "tool_calls": tool_calls}, "tool_calls")


def openai_text(text: str) -> Reply:
    return _completion({"role": "assistant", "content": text}, "stop")


def _completion(message: dict[str, Any], finish: str) -> Reply:
    return Reply({"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": "test-model",
                  "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                  "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})


def anthropic_calls(*calls: tuple[str, str, dict[str, Any]], text: str | None = None) -> Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": call_id, "name": name, "input": args} for call_id, name, args in calls]
    return _message(blocks, "tool_use")


def anthropic_text(text: str) -> Reply:
    return _message([{"type": "text", "text": text}], "end_turn")


def _message(blocks: list[dict[str, Any]], stop: str) -> Reply:
    return Reply({"id": "msg_test", "type": "message", "role": "assistant", "model": "test-model",
                  "content": blocks, "stop_reason": stop, "stop_sequence": None,
                  "usage": {"input_tokens": 200, "output_tokens": 30}})


def error(status: int, forever: bool = False, headers: dict[str, str] | None = None) -> Reply:
    return Reply({"error": {"message": f"scripted {status}", "type": "scripted_error"}}, status=status,
                 headers=headers or {}, forever=forever)


class ScriptedServer:
    """Start with `with ScriptedServer() as server:`; `server.url` is http://127.0.0.1:<port>."""

    def __init__(self) -> None:
        self.queues: defaultdict[str, deque[Reply]] = defaultdict(deque)
        self.received: list[Received] = []
        self.rejected: list[dict[str, Any]] = []
        """The 400 bodies sent for requests that broke a provider rule."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, path: str, *replies: Reply) -> None:
        self.queues[path].extend(replies)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [request.body for request in self.received if request.path == path]

    def _next(self, path: str) -> Reply:
        with self._lock:
            queue = self.queues[path]
            if not queue:
                return error(599)
            return queue[0] if queue[0].forever else queue.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                violation = RULES[self.path](body) if self.path in RULES else None
                if violation is not None:
                    with server._lock:
                        server.rejected.append(violation)
                    self._answer(Reply(violation, status=400))
                    return
                self._answer(server._next(self.path))

            def do_GET(self) -> None:
                """RapidAPI-style GET: replies are queued by path (without the query string)."""
                path, _, query = self.path.partition("?")
                with server._lock:
                    server.received.append(Received(path, {k.lower(): v for k, v in self.headers.items()}, {}, query))
                self._answer(server._next(path))

            def _answer(self, reply: Reply) -> None:
                send_json(self, reply.status, reply.body, reply.headers)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
