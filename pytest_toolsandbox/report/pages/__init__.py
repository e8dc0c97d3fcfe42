"""The static HTML report: page shell, escaping, charts, leaderboard, listings, trajectories, comparison."""
