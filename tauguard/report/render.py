"""Render :class:`~tauguard.report.model.ReportData` as one self-contained HTML file.

The page has no external reference at all: the stylesheet and the small script are inlined,
plots are inline SVG, fonts are the reader's system fonts. It works without JavaScript (the
script only adds a "changed tasks only" filter, opens a linked trial view, and sets
``data-tg-ready`` on ``<html>`` so tests can tell that it ran). Templates are Jinja2 with
autoescaping, so run ids, messages and tool results can never inject markup.

Pure library: imports neither tau2 nor litellm; matplotlib is imported only to draw.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from tauguard.report import plots
from tauguard.report.model import Figure, ReportData

if TYPE_CHECKING:  # jinja2 is imported lazily at run time, like matplotlib
    import jinja2

VERDICT_ORDER = ("ALLOW", "VERIFY", "REVISE", "BLOCK")


def draw_figures(data: ReportData) -> None:
    """Draw every plot of the report into ``data`` (inline SVG strings)."""
    run_ids = [r.run_id for r in data.runs]
    for panel in data.pass_panels + data.pv_panels + data.asr_panels:
        panel.svg = plots.curve_panel(panel, run_ids)
    primary = [d for d in data.deltas if d.primary and d.metric.startswith("pass^")]
    if primary:
        data.forest = Figure(key="forest", title="Δpass^k against the baseline",
                             svg=plots.forest(primary, run_ids, data.confidence))
    if data.axes:
        data.axes_figure = Figure(key="axes", title="Compliance and usefulness per guard",
                                  svg=plots.axes_scatter(data.axes, run_ids))
    if any(f.injected for f in data.faults):
        data.faults_figure = Figure(key="faults", title="Faults injected, detected and prevented",
                                    svg=plots.fault_bars(data.faults, run_ids))
    if data.verdicts:
        data.verdicts_figure = Figure(key="verdicts", title="Guard verdicts", svg=plots.verdict_bars(data.verdicts))
    if data.tactics:
        data.tactics_figure = Figure(key="tactics", title="Attack success per tactic",
                                     svg=plots.tactic_bars(data.tactics, run_ids))


def _environment() -> jinja2.Environment:
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 ships with tauguard's dependencies
        raise plots.PlotDependencyError("tauguard report needs jinja2 (a tauguard dependency): pip install 'jinja2>=3.1'") from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tauguard.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda v, d=3: "–" if v is None else f"{v:.{d}f}"
    env.filters["signed"] = lambda v: "–" if v is None else f"{v:+.3f}"
    env.filters["pval"] = lambda v: "–" if v is None else ("<0.0001" if v < 0.0001 else f"{v:.4f}")
    env.filters["money"] = lambda v: "not reported" if v is None else f"${v:,.4f}"
    env.filters["intc"] = lambda v: f"{v:,}"
    env.filters["repr"] = repr
    return env


def script_json(value: Any) -> str:
    """JSON safe inside an HTML ``<script>`` element: ``<``, ``>`` and ``&`` as JSON escapes.

    Run ids and model names are foreign text: a raw ``</script>`` would close the element and
    ``<!--<script>`` would switch the HTML parser into its "double escaped" state, where the
    element's own end tag no longer ends it and the page's script never runs. The escapes
    are plain JSON, so ``JSON.parse`` reads the same value.
    """
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return resources.files("tauguard.report").joinpath("templates", name).read_text(encoding="utf-8")


def render_html(data: ReportData) -> str:
    """The report page. Draws the figures first when they are missing."""
    if data.pass_panels and not data.pass_panels[0].svg:
        draw_figures(data)
    template = _environment().get_template("report.html.j2")
    compare_json = None
    if data.compare_json is not None:
        # Exactly what `tauguard compare --format json` prints (without --tasks: the grid has them).
        shown = {**data.compare_json, "comparisons": [
            {k: v for k, v in comp.items() if k != "tasks"} for comp in data.compare_json["comparisons"]
        ]}
        compare_json = script_json(shown)
    return template.render(
        d=data,
        css=_asset("report.css"),
        js=_asset("report.js"),
        compare_json=compare_json,
        verdict_order=VERDICT_ORDER,
        run_index={r.run_id: i for i, r in enumerate(data.runs)},
        colours=plots.OKABE_ITO,
    )
