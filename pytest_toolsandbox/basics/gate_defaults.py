"""The baseline gate's defaults and bounds, in one place: the options, the settings, `compare` and the docs' figures
all read them from here (no heavy imports, so option parsing stays fast)."""

DEFAULT_ALPHA = 0.05
"""Significance level of every gate test (`--baseline-alpha`)."""

DEFAULT_MIN_EFFECT = 0.05
"""Smallest drop of a group's mean similarity or pass rate that fails the run (`--baseline-min-effect`): a
significant drop smaller than this is reported, not failing (small steady shifts, e.g. a changed
tokeniser, are significant over many tasks without mattering)."""

def alpha_problem(alpha: float) -> str | None:
    """Why `alpha` cannot be the gate's significance level (0 would switch the gate off, 1 would flag every
    change), or None when it can."""
    if 0.0 < alpha < 1.0:
        return None
    return f"{alpha:g} must be strictly between 0 and 1 (default: {DEFAULT_ALPHA:g})"


def min_effect_problem(min_effect: float) -> str | None:
    """Why `min_effect` cannot be the smallest failing drop, or None when it can."""
    if 0.0 <= min_effect <= 1.0:  # a drop of a mean similarity or a pass rate, both between 0 and 1
        return None
    return f"{min_effect:g} must be between 0 and 1 (default: {DEFAULT_MIN_EFFECT:g})"
