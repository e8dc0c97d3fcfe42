"""What runs scenarios inside pytest: from a collected scenario file to a played, reported episode.

The flow, module by module:

- `configure` — options registered, settings read once, rate limits and prices set, early stops.
- `items` — a scenario file as a pytest module; its `test_scenario` items, `Case` (agent, variant, trial).
- `selection` — shards (`shard`) and resumed runs (`resume`) deselect items; roles are probed once.
- `prepare` — the one place an item's episode is prepared: agent, user, world, recording, backend.
- `episode` (one conversation), `offpolicy` (`--user=reference-history`) — the orchestrators.
- `play` — the item's episode played (or waited for) in its turn; its own errors (`errors`).
- `ahead`, `scheduler`, `warmup`, `xdist_schedule` — `--concurrency N`: episodes of upcoming items
  started early on a thread pool, imports done while every episode waits, xdist queues kept deep.
- `watchdog` (`--episode-timeout`), `interruption` (Ctrl-C and forced stops), `heap` (GC freezing).
- `budget`, `budget_stop` — `--max-spend` / `--max-run-tokens`.
- `agent_override` — an overriding `toolsandbox_agent` fixture that would silently ignore `--agent`.
- `controller` — the controller process: progress, summary, reports, terminal table.

`plugin.py` (the pytest hooks and fixtures) delegates to these; `report/results/item_report.py` turns a played
item into the record its test report carries.
"""
