"""The error a scenario file raises when it cannot be used.

Its own module because both the loader (which validates a file) and the world builder (which the
loader runs to check a file's world) raise it: neither has to import the other for it.
"""


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message is meant for the scenario's author."""
