"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline tests.

Real-LLM code paths (tau2's LLMAgent and UserSimulator through litellm, LLM-backed guards)
are tested end to end against it: ``litellm`` talks to it as ``openai/<name>`` with
``api_base=server.api_base``. Each response item is one of::

    {"content": "text"}
    {"tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "x"}}]}

optionally with ``"usage": {"prompt_tokens": .., "completion_tokens": ..}``,
``"delay_s": 2.0`` (to provoke client timeouts), ``"status": 500``, ``"headers": {"Retry-After": "1"}``, ``"echo_auth": True``
(the error message repeats the request's Authorization header, as some providers do) or ``"echo_headers": True`` (the
content, or the error message, repeats every request header and the request's URL). The headers of every request are
kept in ``request_headers``. Every completion carries ``system_fingerprint`` =
:data:`tauguard.llm_call.SCRIPTED_FINGERPRINT`, so a report can say its verdicts are plumbing. ``responses`` is a
list consumed in order (the last item repeats) or a callable ``(request_json) -> item``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence

from tauguard.llm_call import SCRIPTED_FINGERPRINT

Item = dict[str, Any]
Responder = Callable[[dict[str, Any]], Item]


def _completion(item: Item, model: str, counter: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": item.get("content")}
    finish = "stop"
    if item.get("tool_calls"):
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{counter}_{i}",
                "type": "function",
                "function": {"name": tc["name"], "arguments": json.dumps(tc.get("arguments", {}))},
            }
            for i, tc in enumerate(item["tool_calls"])
        ]
        finish = "tool_calls"
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    usage.update(item.get("usage", {}))
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "id": f"chatcmpl-{counter}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": SCRIPTED_FINGERPRINT,  # what its answers are: plumbing, never a model's
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: with dozens of simulations connecting at
    # once, the kernel drops the extra SYNs and each client waits a 1 s retransmission,
    # which a provider's front end never imposes.
    request_queue_size = 1024


class ScriptedLLMServer:
    """Context manager running the scripted server in a background thread."""

    def __init__(self, responses: Sequence[Item] | Responder) -> None:
        self._responses = responses
        self._index = 0
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []  # each request's headers, in order
        self.arrivals: list[float] = []  # time.monotonic() of each request, in order
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()

    def _next_item(self, body: dict[str, Any]) -> Item:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            if callable(self._responses):
                return self._responses(body)
            items = list(self._responses)
            item = items[min(self._index, len(items) - 1)]
            self._index += 1
            return item

    def __enter__(self) -> "ScriptedLLMServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as real providers do: a client reuses its connections.
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes; with Nagle's algorithm on, the body waits for
            # the client's delayed ACK of the headers (~40 ms per response on a kept-alive
            # connection). Providers' front ends send at once: TCP_NODELAY, as socketserver offers.
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", "0"))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except (ConnectionResetError, BrokenPipeError):
                    return  # the client went away mid-request (a killed run)
                with server._lock:
                    server.request_headers.append(dict(self.headers.items()))
                item = server._next_item(body)
                if item.get("echo_headers"):
                    echoed = "; ".join(f"{k}: {v}" for k, v in self.headers.items())
                    item = dict(item, content=f"request {self.path} with headers {echoed}")
                if item.get("echo_auth"):
                    item = dict(item, content=f"invalid credentials: {self.headers.get('Authorization')}")
                if item.get("delay_s"):
                    time.sleep(float(item["delay_s"]))
                status = int(item.get("status", 200))
                if status != 200:
                    payload = {"error": {"message": item.get("content", "scripted error"), "type": "server_error"}}
                else:
                    payload = _completion(item, body.get("model", "scripted"), len(server.requests))
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in (item.get("headers") or {}).items():
                        self.send_header(name, str(value))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def api_base(self) -> str:
        """The base URL to give litellm (``api_base``)."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            # Kept-alive connections would keep their handler threads waiting for another
            # request after the server is gone: end them.
            with self._lock:
                open_connections = list(self._connections)
            for connection in open_connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
