"""A scripted model server for driving real agent CLIs in tests.

It speaks three wire formats, streaming (server-sent events) and not:
Anthropic Messages (POST /v1/messages), OpenAI Responses (POST
/v1/responses) and Gemini (POST /v1beta/models/M:streamGenerateContent
and :generateContent). It serves on 127.0.0.1 only and plays a script:
a list of turns, each a tool call (Turn.tool) or a final text
(Turn.text). Which turn a request gets is read from the conversation it
carries (the number of tool calls the model already made in it), so a
retried request gets the same answer. Requests that are not the agent's
main loop (title generation, a quota probe, a summary: they carry no
tool of the script) get a short text. Every request is recorded, so a
test can read what the agent sent back: each tool call's result, by call.

Standard library only: it runs under /usr/bin/python3 as any user.
"""

import http.server
import json
import re
import threading
import time
import uuid

FINAL_DEFAULT = "Done."


class Turn:
    """One scripted model turn: a tool call or a final text."""

    def __init__(self, tool=None, args=None, text=None, kind="function"):
        self.tool = tool
        self.args = args or {}
        self.text = text
        # OpenAI Responses: "function" (JSON arguments) or "custom"
        # (freeform input: Codex's apply_patch grammar tool).
        self.kind = kind

    @staticmethod
    def call(tool, args=None, kind="function"):
        return Turn(tool=tool, args=args, kind=kind)

    @staticmethod
    def say(text):
        return Turn(text=text)

    def __repr__(self):
        return "Turn(%s)" % (self.tool or repr(self.text))


def _sse(handler, events):
    """Writes (event_name_or_None, json_obj) pairs as server-sent events."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, obj in events:
        chunk = ""
        if name:
            chunk += "event: %s\n" % name
        chunk += "data: %s\n\n" % json.dumps(obj)
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()
    handler.close_connection = True


def _json(handler, obj, status=200):
    body = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _text_of(content):
    """The text of a tool result or message content in any of the three
    formats: a string, a list of blocks with "text", or nested."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        for k in ("text", "output", "content", "response", "result", "error"):
            if k in content:
                return _text_of(content[k])
        return json.dumps(content)
    return str(content)


class Request:
    """One recorded request."""

    def __init__(self, api, path, headers, body, main):
        self.api = api
        self.path = path
        self.headers = headers
        self.body = body
        self.main = main  # part of the scripted loop
        self.turn = None  # the turn index it was answered with


class ModelServer:
    """Serves one script in one API on 127.0.0.1:<port> (a thread)."""

    def __init__(self, api, script, tool_names=()):
        assert api in ("anthropic", "openai", "gemini")
        self.api = api
        self.script = list(script)
        # A request is the main loop when it offers one of these tools
        # (default: the tools the script calls).
        self.tool_names = set(tool_names) or {t.tool for t in self.script if t.tool}
        self.requests = []
        self.lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self._t = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._t.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- what the test reads back ---

    def main_requests(self):
        return [r for r in self.requests if r.main]

    def offered_tools(self):
        """The tool names the agent's main-loop requests listed."""
        names = set()
        for r in self.main_requests():
            names |= set(self._tool_names_in(r.body))
        return names

    def tool_results(self):
        """{call_id: result text} over every request's conversation."""
        out = {}
        for r in self.requests:
            out.update(self._results_in(r.body))
        return out

    def result_of(self, index):
        """The result the agent reported for scripted turn index (a call)."""
        return self.tool_results().get(self.call_id(index))

    def call_id(self, index):
        return "call_hx_%d" % index

    def summary(self):
        lines = []
        for r in self.requests:
            lines.append("  %s %s main=%s turn=%s" % (r.api, r.path, r.main, r.turn))
        return "\n".join(lines)

    # --- reading the conversation ---

    def _tool_names_in(self, body):
        names = []
        for t in body.get("tools") or []:
            if self.api == "gemini":
                for d in t.get("functionDeclarations") or t.get("function_declarations") or []:
                    names.append(d.get("name"))
            elif "name" in t:
                names.append(t["name"])
            elif isinstance(t.get("function"), dict):
                names.append(t["function"].get("name"))
        return names

    def _calls_made(self, body):
        """How many tool calls of the model the conversation holds."""
        n = 0
        if self.api == "anthropic":
            for m in body.get("messages") or []:
                if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                    n += sum(1 for b in m["content"] if b.get("type") == "tool_use")
        elif self.api == "openai":
            for it in body.get("input") or []:
                if isinstance(it, dict) and it.get("type") in (
                        "function_call", "custom_tool_call", "local_shell_call"):
                    n += 1
        else:
            for c in body.get("contents") or []:
                if c.get("role") == "model":
                    n += sum(1 for p in c.get("parts") or [] if "functionCall" in p)
        return n

    def _results_in(self, body):
        out = {}
        if self.api == "anthropic":
            for m in body.get("messages") or []:
                if m.get("role") == "user" and isinstance(m.get("content"), list):
                    for b in m["content"]:
                        if b.get("type") == "tool_result":
                            out[b.get("tool_use_id")] = _text_of(b.get("content"))
        elif self.api == "openai":
            for it in body.get("input") or []:
                if isinstance(it, dict) and it.get("type") in (
                        "function_call_output", "custom_tool_call_output"):
                    out[it.get("call_id")] = _text_of(it.get("output"))
        else:
            for c in body.get("contents") or []:
                for p in c.get("parts") or []:
                    fr = p.get("functionResponse")
                    if fr:
                        out[fr.get("id") or fr.get("name")] = _text_of(fr.get("response"))
        return out

    def _turn_for(self, body):
        """(index, Turn) for a main-loop request, or None."""
        if not self.tool_names & set(self._tool_names_in(body)):
            return None
        i = self._calls_made(body)
        if i < len(self.script):
            # The turns before i are all calls; a text ends the script.
            return i, self.script[i]
        return i, Turn.say(FINAL_DEFAULT)

    # --- the HTTP side ---

    def _handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):
                server._record(self, None)
                path = self.path.split("?")[0]
                if path.endswith("/models"):
                    _json(self, {"object": "list", "data": [], "models": []})
                else:
                    _json(self, {}, 200)

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if self.headers.get("Content-Encoding") == "zstd":
                    _json(self, {"error": "zstd not supported"}, 415)
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    import gzip
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                server._dispatch(self, body)

        return Handler

    def _record(self, handler, body, main=False):
        r = Request(self.api, handler.path, dict(handler.headers.items()), body, main)
        with self.lock:
            self.requests.append(r)
        return r

    def _dispatch(self, h, body):
        path = h.path.split("?")[0]
        if self.api == "anthropic" and path.endswith("/count_tokens"):
            self._record(h, body)
            _json(h, {"input_tokens": 100})
            return
        if self.api == "gemini" and path.endswith(":countTokens"):
            self._record(h, body)
            _json(h, {"totalTokens": 100})
            return
        if not isinstance(body, dict):
            body = {}
        found = self._turn_for(body)
        r = self._record(h, body, main=found is not None)
        if found:
            r.turn, turn = found
        else:
            turn = Turn.say(self._aux_text(body))
        idx = r.turn if r.turn is not None else -1
        if self.api == "anthropic":
            self._anthropic(h, body, turn, idx)
        elif self.api == "openai":
            self._openai(h, body, turn, idx)
        else:
            self._gemini(h, path, turn, idx)

    def _aux_text(self, body):
        # Side requests sometimes want JSON back (Claude Code's topic
        # check, Gemini's next-speaker check); a small object satisfies
        # the ones seen and reads as text to the others.
        if self.api == "gemini" and body.get("generationConfig", {}).get("responseMimeType") == "application/json":
            return json.dumps({"reasoning": "done", "next_speaker": "user",
                               "model_choice": "flash", "complexity_reasoning": "simple",
                               "complexity_score": 1})
        return "ok"

    # Anthropic Messages
    def _anthropic(self, h, body, turn, idx):
        mid = "msg_hx_%s" % uuid.uuid4().hex[:12]
        model = body.get("model", "claude-scripted")
        usage = {"input_tokens": 10, "output_tokens": 5,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if turn.tool:
            block = {"type": "tool_use", "id": self.call_id(idx), "name": turn.tool,
                     "input": turn.args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": turn.text}
            stop = "end_turn"
        if not body.get("stream"):
            _json(h, {"id": mid, "type": "message", "role": "assistant", "model": model,
                      "content": [block], "stop_reason": stop, "stop_sequence": None,
                      "usage": usage})
            return
        ev = [("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
        if turn.tool:
            ev.append(("content_block_start", {"type": "content_block_start", "index": 0,
                       "content_block": {"type": "tool_use", "id": block["id"],
                                         "name": turn.tool, "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                       "delta": {"type": "input_json_delta",
                                 "partial_json": json.dumps(turn.args)}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": turn.text}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        ev.append(("message_delta", {"type": "message_delta",
                   "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 5}}))
        ev.append(("message_stop", {"type": "message_stop"}))
        _sse(h, ev)

    # OpenAI Responses
    def _openai(self, h, body, turn, idx):
        rid = "resp_hx_%s" % uuid.uuid4().hex[:12]
        model = body.get("model", "gpt-scripted")
        if turn.tool and turn.kind == "custom":
            item = {"type": "custom_tool_call", "id": "ctc_hx_%d" % idx, "status": "completed",
                    "call_id": self.call_id(idx), "name": turn.tool,
                    "input": turn.args if isinstance(turn.args, str) else json.dumps(turn.args)}
        elif turn.tool:
            item = {"type": "function_call", "id": "fc_hx_%d" % idx, "status": "completed",
                    "call_id": self.call_id(idx), "name": turn.tool,
                    "arguments": json.dumps(turn.args)}
        else:
            item = {"type": "message", "id": "msg_hx_%s" % uuid.uuid4().hex[:8],
                    "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        resp = {"id": rid, "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": model, "output": [item], "usage": usage}
        if not body.get("stream"):
            _json(h, resp)
            return
        started = dict(resp, status="in_progress", output=[], usage=None)
        ev = [("response.created", {"type": "response.created", "response": started,
                                    "sequence_number": 0})]
        ev.append(("response.output_item.added", {"type": "response.output_item.added",
                   "output_index": 0, "item": dict(item, status="in_progress"),
                   "sequence_number": 1}))
        if not turn.tool:
            ev.append(("response.output_text.delta", {"type": "response.output_text.delta",
                       "item_id": item["id"], "output_index": 0, "content_index": 0,
                       "delta": turn.text, "sequence_number": 2}))
        ev.append(("response.output_item.done", {"type": "response.output_item.done",
                   "output_index": 0, "item": item, "sequence_number": 3}))
        ev.append(("response.completed", {"type": "response.completed", "response": resp,
                                          "sequence_number": 4}))
        _sse(h, ev)

    # Gemini
    def _gemini(self, h, path, turn, idx):
        if turn.tool:
            part = {"functionCall": {"name": turn.tool, "args": turn.args,
                                     "id": self.call_id(idx)}}
        else:
            part = {"text": turn.text}
        m = re.search(r"models/([^/:]+)", path)
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                   "totalTokenCount": 15},
                 "modelVersion": m.group(1) if m else "gemini-scripted",
                 "responseId": uuid.uuid4().hex[:12]}
        if ":streamGenerateContent" in path:
            _sse(h, [(None, chunk)])
        else:
            _json(h, chunk)
