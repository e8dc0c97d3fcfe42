"""Tools that check and measure the scenario suite itself: `validate` and `stats`."""
