"""The shell every static report page shares: stylesheet, navigation, number formats.

Pages are self-contained (inline CSS, inline SVG, at most a small inline script) so the report
opens from file:// with no network; every value from a run goes through `escaping.escape`.
"""

from __future__ import annotations

from pytest_toolsandbox.report.pages.escaping import escape

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;color:#1d2330;margin:1.5rem auto;max-width:84rem;padding:0 1rem}
h1{font-size:1.5rem;margin:.2rem 0 1rem}h2{font-size:1.15rem;margin-top:1.6rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;display:block;max-width:100%;overflow-x:auto}
td small{overflow-wrap:anywhere}table.ts-items{font-size:13px}table.ts-items td,table.ts-items th{padding:.2rem .4rem}
th,td{border:1px solid #d5d9e2;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#eef1f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.kind-all td{font-weight:600}tr.kind-category td:first-child,tr.kind-variant td:first-child{padding-left:1.2rem}
.partial{background:#fff4d6;border:1px solid #e3b341;padding:.5rem .8rem}
.outcome-passed,.outcome-xpassed{color:#1f7a44}.outcome-failed,.outcome-error{color:#b42318;font-weight:600}
.outcome-xfailed,.outcome-skipped{color:#7a6200}nav a{margin-right:1rem}
.board td.cell{min-width:9rem}.board .rate{font-size:1.05rem;font-weight:600;color:inherit;text-decoration:none}
.board .sub{display:block;color:#4a5368;font-size:12px}
dl.meta{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr);gap:.2rem .9rem;
font-size:13px;background:#f4f6fa;padding:.6rem .8rem;border:1px solid #d5d9e2}dl.meta dt{font-weight:600}
dl.meta dd{margin:0;overflow-wrap:anywhere}.board td.best{outline:2px solid #1f7a44;outline-offset:-2px}
.board .best .rate::after{content:" ★";color:#1f7a44}
.charts{display:flex;flex-wrap:wrap;gap:1rem}.charts figure{margin:0;flex:1 1 28rem;max-width:38rem}
.charts svg{max-width:100%;height:auto}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0;padding:.5rem;background:#f4f6fa}
.filters label{font-size:12px;color:#4a5368}.filters select,.filters input{font:inherit;font-size:13px}
th.sortable{cursor:pointer;user-select:none}th.sortable::after{content:" ↕";color:#9aa3b5}
th.sorted-asc::after{content:" ↑";color:#1d2330}th.sorted-desc::after{content:" ↓";color:#1d2330}
.delta-up{color:#1f7a44;font-weight:600}.delta-down{color:#b42318;font-weight:600}
.count{color:#4a5368;font-size:13px}
.ts-legend{font-size:12px;color:#4a5368;margin:.5rem 0}.ts-legend summary{cursor:pointer;font-weight:600}
dl.ts-codes{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.1rem .8rem;margin:.3rem 0}
dl.ts-codes dt{font-weight:600;font-family:ui-monospace,monospace}dl.ts-codes dd{margin:0}
.ts-change{padding:.5rem .8rem;margin:.5rem 0;border:1px solid}.ts-change.regression{background:#fdecea;
border-color:#b42318}.ts-change.improvement{background:#e9f6ee;border-color:#1f7a44}
.ts-change.known_failure{background:#fff4d6;border-color:#e3b341}
"""


def page(title: str, body: str, root: str, script: str = "", nav: bool = True) -> str:
    """A whole HTML document; `root` is the relative path back to the report directory."""
    tail = f"<script>{script}</script>" if script else ""
    links = (f"<nav><a href='{root}index.html'>pytest-toolsandbox report</a><a href='{root}all.html'>all items</a>"
             "</nav>" if nav else "")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{links}<h1>{escape(title)}</h1>{body}{tail}</body></html>\n")


def number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"
