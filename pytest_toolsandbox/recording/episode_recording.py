"""One episode's cassette, reachable only from that episode: the replacement for vcrpy's `use_cassette`.

`use_cassette` patches httpx2 for the whole process, which is wrong as soon as two episodes run at
once. Here each episode opens its own `EpisodeRecording`; `activate()` makes it the current one in a
context variable, so the roles of that episode (which build their SDK clients at their first request,
inside the episode) find it with `active_recording()` and send through `http_client()`, and no other
thread sees it unless it runs in a copy of this context (as `watchdog.call_with_timeout` does).

The vcrpy `Cassette` object still does the cassette's work — loading, matching, the record modes,
secret filtering, saving through our `CompressedYamlPersister` — configured by `cassettes.recorder`
exactly as `use_cassette` was, so the files are the same.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolsandbox.basics.limits import Limits
from pytest_toolsandbox.recording.cassettes import recorder
from pytest_toolsandbox.recording.pins import read_pins, write_pins
from pytest_toolsandbox.roles.model_catalog import family_of

if TYPE_CHECKING:
    import httpx2

_ACTIVE: ContextVar[EpisodeRecording | None] = ContextVar("toolsandbox_recording", default=None)
_NOT_CASSETTE_ARGUMENTS = ("path_transformer", "func_path_generator", "record_on_exception")
"""Keys of `VCR.get_merged_config` that configure `use_cassette`, not the `Cassette` itself."""


class EpisodeRecording:
    """One episode's cassette, used only by the roles of that episode."""

    def __init__(self, path: Path, mode: str, environ: Mapping[str, str] | None = None,
                 limits: Limits | None = None) -> None:
        from vcr.cassette import Cassette

        from pytest_toolsandbox.recording.transport import shared_live_transports

        self.path = Path(path)
        self.limits = limits or Limits()
        """Size limits: of the cassette loaded here, and of each live response (`basics/limits.py`)."""
        config = recorder(mode, environ, self.limits.max_cassette_bytes).get_merged_config(path=str(self.path))
        self.cassette: Any = Cassette.load(**{key: value for key, value in config.items()
                                              if key not in _NOT_CASSETTE_ARGUMENTS})
        self.lock = threading.Lock()
        """Held while the cassette is read or changed (an episode's roles may share it across threads)."""
        self._live = shared_live_transports()
        """Where live requests go: the process's connection pools, shared by all its episodes."""
        self._recorded = False
        self._finished = False
        self.pins = {} if mode == "all" else read_pins(self.path)
        """alias → model this cassette was recorded with (`pins.py`); re-recording pins anew."""
        self._pinned: dict[str, str] = {}
        self.refused_hosts: dict[str, str] = {}
        """Host → why no live request may go there (its key is not set): a replay needs no key, and a
        request the cassette cannot answer fails with that reason instead of going out without one."""

    def pin(self, alias: str, current: str) -> str:
        """The model `alias` plays with in this episode: the one its cassette was recorded with, else
        `current` (then pinned when the cassette is saved)."""
        with self.lock:
            if alias not in self._pinned:
                self._pinned[alias] = self.pins.get(alias) or self._recorded_model(current) or current
            return self._pinned[alias]

    def _recorded_model(self, current: str) -> str | None:
        """For a cassette recorded before pins existed: the model of `current`'s family its requests name."""
        family = family_of(current)
        if family is None or self.cassette.record_mode == "all":
            return None
        for request in self.cassette.requests:
            try:
                model = json.loads(request.body or b"{}").get("model")
            except (ValueError, AttributeError, TypeError):
                continue
            if isinstance(model, str) and family_of(model) == family:
                return model
        return None

    @property
    def play_count(self) -> int:
        """Requests answered from the cassette so far."""
        return self.cassette.play_count

    @property
    def dirty(self) -> bool:
        """Whether this episode recorded anything (still true after `finish` saved it)."""
        return self._recorded or self.cassette.dirty

    @property
    def replayed(self) -> bool:
        """Every request of the episode came from the cassette (and there was at least one)."""
        return self.play_count > 0 and not self.dirty

    @contextmanager
    def activate(self) -> Iterator[EpisodeRecording]:
        """Make this the current context's recording until the block ends."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def http_client(self, timeout: float | None = None) -> httpx2.Client:
        """An httpx2 client whose every request goes through this cassette (None: httpx2's default
        timeout). Proxies from the environment apply to live requests only, inside the transport,
        so no request can bypass the cassette."""
        import httpx2

        from pytest_toolsandbox.recording.transport import CassetteTransport

        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        return httpx2.Client(transport=CassetteTransport(self, self._live), trust_env=False,
                             follow_redirects=True, **options)

    def finish(self, keep: bool) -> None:
        """`keep`: save what was recorded (the record mode decides whether anything was). Otherwise
        nothing is written: no new file, an existing one stays as it was. Only the first call counts.
        The live connections stay open for the next episode."""
        with self.lock:
            if self._finished:  # saved as soon as the episode ended; the item's teardown comes later
                return
            self._finished = True
            self._recorded = self.cassette.dirty
            if keep:
                self.cassette._save()
                if self._recorded and self._pinned and self.path.is_file():
                    write_pins(self.path, {**self.pins, **self._pinned})


def active_recording() -> EpisodeRecording | None:
    """The recording of the episode running in this context, if any."""
    return _ACTIVE.get()
