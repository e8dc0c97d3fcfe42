"""Can a model's endpoint be reached? Asked once before a run that must record, so that a missing
network, a server that is not started or a wrong URL stops the run before its first item with one line
naming the URL, instead of every item failing after its retries.

The check is a TCP connection to the endpoint's host and port (or to the proxy the SDK would use), at
most `timeout` seconds for all endpoints together: it proves the route, not the API. A replay never
asks (it must stay offline and fast).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import urllib.request
from collections.abc import Iterable
from urllib.parse import urlsplit

PROBE_TIMEOUT = 5.0
"""Seconds for all probes together; name resolution has no timeout of its own, so probes run on
daemon threads that are abandoned when the time is up."""


def target(url: str) -> tuple[str, int, str]:
    """(host, port, what) a request to `url` connects to first: the URL's host, or the proxy the
    environment names for it (httpx, under both SDKs, honours the same variables)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        proxy_parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        return proxy_parts.hostname or "", proxy_parts.port or 80, f"proxy {proxy_parts.hostname}"
    return host, port, f"{host}:{port}"


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _connect(url: str, results: dict[str, str | None], timeout: float) -> None:
    host, port, what = target(url)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            results[url] = None
    except socket.gaierror as error:
        results[url] = f"cannot resolve {host} ({error.strerror or error}); no network?"
    except ConnectionRefusedError:
        results[url] = f"nothing listens at {what}"
    except TimeoutError:
        results[url] = f"no answer from {what} within {timeout:g} s"
    except OSError as error:
        results[url] = f"cannot connect to {what} ({error.strerror or error})"


def unreachable(urls: Iterable[str], timeout: float = PROBE_TIMEOUT) -> dict[str, str]:
    """URL → why it cannot be reached, for the endpoints that cannot; empty when all answer."""
    unique = list(dict.fromkeys(urls))
    results: dict[str, str | None] = {}
    threads = [threading.Thread(target=_connect, args=(url, results, timeout), daemon=True) for url in unique]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:  # started together: the whole wait stays within `timeout`
        thread.join(max(0.0, deadline - time.monotonic()))
    problems = {}
    for url in unique:
        if url not in results:
            problems[url] = f"no answer from {target(url)[2]} within {timeout:g} s"
        elif results[url] is not None:
            problems[url] = str(results[url])
    return problems
