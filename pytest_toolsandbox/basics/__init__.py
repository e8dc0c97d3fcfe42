"""Small leaf modules every layer uses; they import nothing else from the package.

- `jsondata` — untrusted values (SDK objects, agent output, files) to plain, strict JSON data.
- `vocabulary` — the names of scenario categories and augmentation variants.
- `limits` — the size limits on inputs (cassettes, responses, requests, messages) and bounded reads.
- `item_ids` — the agent labels in item ids, and ids with and without them.
- `gate_defaults` — the baseline gate's default significance level and minimum effect.
"""
