"""CI decisions on a run: its baseline, the gate (per task and per group), run comparison, and their wording."""
