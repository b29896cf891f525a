"""`tauguard report`: one self-contained HTML page comparing runs (plots, tables, trial views).

- :mod:`tauguard.report.collect`: the page's data, from the library (compare, metrics, summary, check);
- :mod:`tauguard.report.curves`: k-metric curves with adjusted Wald CI bands;
- :mod:`tauguard.report.trials`: per-trial conversations with guard events inline;
- :mod:`tauguard.report.plots`: matplotlib figures as inline SVG;
- :mod:`tauguard.report.render`: the Jinja2 page.

Imports neither tau2 nor litellm; matplotlib and jinja2 are imported only when rendering.
"""

from __future__ import annotations

import os

from tauguard.report.collect import ReportError, ReportOptions, build_report
from tauguard.report.model import ReportData

__all__ = ["ReportData", "ReportError", "ReportOptions", "build_report", "render_html", "write_report"]


def render_html(data: ReportData) -> str:
    """The report page as one HTML string (see :func:`tauguard.report.render.render_html`)."""
    from tauguard.report.render import render_html as _render

    return _render(data)


def write_report(data: ReportData, path: str | os.PathLike[str]) -> int:
    """Render and write the page atomically to a regular file (see :mod:`tauguard.output_file`);
    returns its size in bytes."""
    from tauguard.output_file import write_output

    return write_output(path, render_html(data), "-o/--output")
