"""What every role played by a model reports about that model, written once for the agent and the user."""

from __future__ import annotations

from pytest_toolsandbox.roles.model_client import ModelClient


class ModelBacked:
    """A role that sends its turns to `client`; the report reads `model`, `answered_model` and `usage`."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self._model: object = None

    @property
    def model(self) -> object:
        """The model requested (an alias's may be the one its cassette pinned, known at the first request),
        unless set to something else."""
        return self.client.settings.model if self._model is None else self._model

    @model.setter
    def model(self, value: object) -> None:
        self._model = value

    @property
    def answered_model(self) -> str | None:
        """The snapshot the API answered with."""
        return self.client.answered_model

    @property
    def usage(self) -> dict[str, int]:
        return self.client.counted_usage()
