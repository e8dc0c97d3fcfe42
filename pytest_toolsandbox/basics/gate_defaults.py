"""The baseline gate's defaults, in one place: the options, the settings, `compare` and the docs' figures
all read them from here (no heavy imports, so option parsing stays fast)."""

DEFAULT_ALPHA = 0.05
"""Significance level of every gate test (`--baseline-alpha`)."""

DEFAULT_MIN_EFFECT = 0.05
"""Smallest drop of a group's mean similarity or pass rate that fails the run (`--baseline-min-effect`): a
significant drop smaller than this is reported, not failing (small steady shifts, e.g. a changed
tokeniser, are significant over many tasks without mattering)."""
