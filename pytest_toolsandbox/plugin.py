"""pytest hooks of pytest-toolsandbox (the scenario collection lands here in the plugin issue)."""
