"""What a run reports, one job per sub-package: `results` (the run's data), `writing` (the report
directory), `pages` (the static HTML report), `text` (terminal, Markdown, JUnit), `ci` (baseline, gate,
comparison); `data` holds the paper's published rows."""
