"""The fake provider used by the concurrency tests and benchmark: it plays episodes deterministically,
holds each answer for its delay, serves at most `max_concurrent` requests at once and can rain 429s."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import Request, urlopen

from tests.fake_provider import CHAT, Behaviour, FakeProvider, Stats, answer

ROOT = Path(__file__).resolve().parents[1]
SET_WIFI = {"type": "function", "function": {
    "name": "set_wifi_status", "description": "Turn wifi on or off.",
    "parameters": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}}
SEARCH = {"type": "function", "function": {
    "name": "search_contacts", "description": "Find contacts.",
    "parameters": {"type": "object", "required": ["name", "limit", "kind", "tags", "when"],
                   "properties": {"name": {"type": "string"}, "limit": {"type": "integer"},
                                  "kind": {"type": "string", "enum": ["person", "company"]},
                                  "tags": {"type": "array", "items": {"type": "string"}},
                                  "when": {"anyOf": [{"type": "null"}, {"type": "number"}]},
                                  "optional": {"type": "string"}}}}}


def post(url: str, body: dict) -> tuple[int, dict, dict[str, str]]:
    request = Request(url + CHAT, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except HTTPError as failure:
        return failure.code, json.loads(failure.read()), dict(failure.headers)


def conversation(*results: str) -> list[dict]:
    calls = [{"role": "assistant", "content": None,
              "tool_calls": [{"id": f"call_{n}", "type": "function",
                              "function": {"name": "set_wifi_status", "arguments": "{}"}}]}
             for n, _ in enumerate(results, 1)]
    replies = [{"role": "tool", "tool_call_id": f"call_{n}", "content": text} for n, text in enumerate(results, 1)]
    interleaved = [message for pair in zip(calls, replies, strict=True) for message in pair]
    return [{"role": "system", "content": "Be helpful."}, {"role": "user", "content": "Turn off my wifi."},
            *interleaved]


def test_tools_are_called_until_the_turn_has_enough_results_then_text() -> None:
    first = answer({"model": "m", "messages": conversation(), "tools": [SET_WIFI, SEARCH]}, calls_per_turn=2)
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert first["choices"][0]["finish_reason"] == "tool_calls" and call["id"] == "call_1"
    assert call["function"]["name"] in {"set_wifi_status", "search_contacts"}
    second = answer({"model": "m", "messages": conversation("ok"), "tools": [SET_WIFI, SEARCH]}, calls_per_turn=2)
    assert second["choices"][0]["message"]["tool_calls"][0]["id"] == "call_2"
    done = answer({"model": "m", "messages": conversation("ok", "ok"), "tools": [SET_WIFI, SEARCH]}, calls_per_turn=2)
    assert done["choices"][0] == {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": "Done after 2 tool call(s)."}}
    assert done["usage"]["total_tokens"] == done["usage"]["prompt_tokens"] + done["usage"]["completion_tokens"] > 0
    no_tools = answer({"model": "m", "messages": conversation()}, calls_per_turn=2)
    assert no_tools["choices"][0]["finish_reason"] == "stop"


def test_answers_are_a_function_of_the_request_and_arguments_fit_the_schema() -> None:
    bodies = [{"model": "m", "messages": [{"role": "user", "content": f"request {n}"}], "tools": [SET_WIFI, SEARCH]}
              for n in range(40)]
    once = [answer(body, 2) for body in bodies]
    assert once == [answer(json.loads(json.dumps(body)), 2) for body in bodies]
    chosen = {reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"]: reply for reply in once}
    assert set(chosen) == {"set_wifi_status", "search_contacts"}  # the choice depends on the request
    arguments = json.loads(chosen["search_contacts"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"name": "test", "limit": 1, "kind": "person", "tags": [], "when": 1}
    wifi = json.loads(chosen["set_wifi_status"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert wifi == {"on": True}


def test_malformed_requests_get_a_text_answer() -> None:
    for body in ({"messages": 5}, {"messages": [3, None, "x"], "tools": "nope"}, {"tools": [{"function": 1}]}):
        assert answer(body, 2)["choices"][0]["finish_reason"] == "stop"


def test_requests_beyond_the_limit_queue_and_are_counted() -> None:
    with FakeProvider(Behaviour(delay=0.05, max_concurrent=2)) as server:
        results: list[int] = []
        threads = [threading.Thread(target=lambda n=n: results.append(
            post(server.url, {"messages": [{"role": "user", "content": f"hi {n}"}]})[0])) for n in range(6)]
        for thread in threads:
            thread.start()
        assert server.wait_until_served(6, timeout=30)
        for thread in threads:
            thread.join()
        stats = server.stats()
    assert results == [200] * 6
    assert (stats.served, stats.arrived, stats.rate_limited, stats.in_flight) == (6, 6, 0, 0)
    assert stats.peak_serving == 2 and 2 <= stats.peak_in_flight <= 6
    assert stats.first_arrival is not None and stats.last_answer is not None
    assert stats.last_answer - stats.first_arrival >= 3 * 0.05  # six requests, two at a time


def test_a_storm_answers_429_with_retry_after_during_its_window_only() -> None:
    with FakeProvider(Behaviour(delay=0, storm_after=1, storm_window=30, retry_after=2)) as server:
        body = {"messages": [{"role": "user", "content": "hi"}]}
        before = post(server.url, body)
        during = [post(server.url, body) for _ in range(3)]
        stats = server.stats()
    assert before[0] == 200
    assert [status for status, _, _ in during] == [429] * 3
    assert during[0][2]["retry-after"] == "2" and during[0][1]["error"]["type"] == "rate_limit_error"
    assert (stats.served, stats.rate_limited, stats.arrived) == (1, 3, 4)
    assert stats.bursts(gap=1.0) == 1


def test_bursts_are_429s_separated_by_quiet_gaps() -> None:
    assert Stats(rate_limited_at=[]).bursts(gap=1) == 0
    assert Stats(rate_limited_at=[10.0, 10.2, 10.1, 12.0, 12.5, 20.0]).bursts(gap=1) == 3


def test_runs_as_a_subprocess_with_stats_and_reset() -> None:
    process = subprocess.Popen([sys.executable, "-m", "tests.fake_provider", "--delay", "0", "--calls-per-turn", "1"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().removeprefix("listening on ").strip()
        status, reply, _ = post(url, {"messages": [{"role": "user", "content": "hi"}], "tools": [SET_WIFI]})
        assert status == 200 and reply["choices"][0]["finish_reason"] == "tool_calls"
        with urlopen(url + "/stats", timeout=30) as response:
            assert json.loads(response.read())["served"] == 1
        urlopen(Request(url + "/reset", b"", method="POST"), timeout=30).close()
        with urlopen(url + "/stats", timeout=30) as response:
            assert json.loads(response.read())["served"] == 0
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_requests_breaking_the_apis_rules_get_its_400() -> None:
    with FakeProvider(Behaviour(delay=0.0)) as server:
        status, body, _ = post(server.url, {"model": "o4-mini", "messages": conversation(), "max_tokens": 10})
        assert status == 400 and body["error"]["code"] == "unsupported_parameter"
        unanswered = conversation("ok")[:-1]  # a call without its result
        status, body, _ = post(server.url, {"model": "gpt-4o", "messages": [*unanswered, {"role": "user",
                                                                                         "content": "hi"}]})
        assert status == 400 and "did not have response messages: call_1" in body["error"]["message"]
        assert server.stats().rejected == 2 and server.stats().served == 0


def test_announced_limits_are_sent_and_enforced() -> None:
    with FakeProvider(Behaviour(delay=0.0, rpm=2)) as server:
        answers = [post(server.url, {"model": "m", "messages": conversation()}) for _ in range(3)]
    assert [status for status, _, _ in answers] == [200, 200, 429]
    headers = {name.lower(): value for name, value in answers[1][2].items()}
    assert (headers["x-ratelimit-limit-requests"], headers["x-ratelimit-remaining-requests"]) == ("2", "0")
    assert headers["x-ratelimit-reset-requests"].endswith("s")
    assert server.stats().rate_limited == 1
