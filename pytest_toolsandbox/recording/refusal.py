"""The error of a request that may not go live (light: the model client matches it without loading httpx)."""


class MissingKey(RuntimeError):
    """A request its cassette cannot answer, to an endpoint whose key is not set: it is not sent."""
