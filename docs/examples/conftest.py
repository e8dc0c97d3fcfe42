"""conftest.py: evaluate HttpChatAgent, with each item's HTTP exchanges kept in a cassette.

The first run records cassettes/<scenario>/<item>.yaml; later runs replay them offline. The
Authorization header is filtered out, so cassettes never contain an API key.
"""

import pytest
import vcr
from http_agent import HttpChatAgent

recorder = vcr.VCR(cassette_library_dir="cassettes", record_mode="once", filter_headers=["authorization"],
                   match_on=["method", "uri", "body"])


@pytest.fixture
def toolsandbox_agent():
    return HttpChatAgent()


@pytest.fixture
def toolsandbox_episode(toolsandbox_episode, toolsandbox_scenario, toolsandbox_case):
    """Wraps the plugin's episode runner (same name: this one receives the plugin's)."""
    cassette = f"{toolsandbox_scenario.path.removesuffix('.yaml')}/{toolsandbox_case.id}.yaml"

    def recorded():
        with recorder.use_cassette(cassette):
            return toolsandbox_episode()

    return recorded
