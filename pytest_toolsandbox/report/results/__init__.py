"""A run's results as data: per-item records, summary.json, the journal, usage and cost, fingerprints, merging."""
