"""Static plots as inline SVG, drawn with matplotlib (Agg backend, no display, no network).

Why matplotlib: it is already installed with tauguard (τ²-bench depends on it), renders
offline to SVG whose text stays text (``svg.fonttype = none``: selectable, searchable, small),
and needs no JavaScript, so the page prints like it looks. Plotly would inline about 3.5 MB of
JavaScript, more than the whole report may weigh.

Accessibility: every axis is labelled with its unit, runs are told apart by the Okabe–Ito
colour-blind-safe palette *and* by marker and line style, each SVG carries a ``<title>``, and
the page puts the plotted numbers in a table beside every plot.

matplotlib is imported lazily, inside :func:`_pyplot`, so importing this module is cheap.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from tauguard.report.model import CurvePanel, DeltaRow, FaultRow, TacticRow, VerdictRow

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
OKABE_ITO = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), "-"]
VERDICT_COLOURS = {"ALLOW": "#009E73", "VERIFY": "#56B4E9", "REVISE": "#E69F00", "BLOCK": "#D55E00"}


class PlotDependencyError(RuntimeError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib ships with tauguard's dependencies
        raise PlotDependencyError(
            "tauguard report needs matplotlib (a tauguard dependency): pip install 'matplotlib>=3.8'"
        ) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",  # keep text as text: small files, readable by screen readers
            "svg.hashsalt": "tauguard",  # stable ids, so the same data gives the same file
            "font.family": "sans-serif",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.axisbelow": True,  # grid lines behind bars
            "grid.color": "#dddddd",
            "grid.linewidth": 0.6,
        }
    )
    return plt


def style(i: int) -> dict[str, Any]:
    """Colour, marker and line style of the i-th run."""
    return {
        "color": OKABE_ITO[i % len(OKABE_ITO)],
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
    }


def _svg(fig: Any, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Title": title})
    _pyplot().close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: the SVG is inlined in HTML
    # Size by CSS (max-width: 100%), keeping the aspect ratio of the viewBox.
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="plot" role="img"', text, count=1)
    return text


def curve_panel(panel: CurvePanel, run_ids: Sequence[str]) -> str:
    """A k-metric against k, one line per run, CI as a shaded band."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    max_k = 1
    for curve in panel.curves:
        i = list(run_ids).index(curve.run_id)
        st = style(i)
        pts = [p for p in curve.points if p.value is not None]
        if not pts:
            continue
        ks = [p.k for p in pts]
        max_k = max(max_k, *ks)
        ax.plot(ks, [p.value for p in pts], label=curve.run_id, linewidth=1.6, markersize=4.5, **st)
        band = [p for p in pts if p.low is not None and p.high is not None]
        if band:
            ax.fill_between([p.k for p in band], [p.low for p in band], [p.high for p in band],
                            color=st["color"], alpha=0.12, linewidth=0)
    ax.set_xlabel("k (trials that must all pass)" if panel.metric != "ASR@k" else "k (attempts)")
    ax.set_ylabel(f"{panel.metric} (fraction of tasks, 0–1)")
    ax.set_xticks(range(1, max_k + 1))
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(panel.title, fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="best")
    return _svg(fig, f"{panel.metric} against k: {panel.title}")


def forest(rows: Sequence[DeltaRow], run_ids: Sequence[str], confidence: float) -> str:
    """Δpass^k at the primary k with its CI, one row per (candidate, domain slice)."""
    plt = _pyplot()
    rows = list(rows)
    fig, ax = plt.subplots(figsize=(6.4, 0.42 * len(rows) + 1.1))
    labels = []
    for y, r in enumerate(reversed(rows)):
        st = style(list(run_ids).index(r.candidate))
        ax.errorbar(r.delta, y, xerr=[[r.delta - r.ci_low], [r.ci_high - r.delta]], fmt=st["marker"],
                    color=st["color"], capsize=3, markersize=5, linewidth=1.4)
        ax.annotate(r.verdict, (max(r.ci_high, r.delta), y), xytext=(6, 0), textcoords="offset points",
                    va="center", fontsize=8)
        labels.append(f"{r.candidate} · {r.slice}")
    ax.axvline(0, color="#555555", linewidth=0.9, linestyle="--")
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_yticks(range(len(rows)), labels)
    lo = min(min(r.ci_low for r in rows), 0)
    hi = max(max(r.ci_high for r in rows), 0)
    pad = max(0.05, (hi - lo) * 0.35)
    ax.set_xlim(lo - pad * 0.3, hi + pad)
    k = rows[0].k if rows else 0
    ax.set_xlabel(f"Δpass^{k} = candidate − baseline (fraction of tasks), {confidence:.0%} adjusted Wald CI (Bonett–Price)")
    ax.grid(axis="y", visible=False)
    return _svg(fig, f"Forest plot of Δpass^{k} against the baseline")


def axes_scatter(comps: Sequence[dict[str, Any]], run_ids: Sequence[str]) -> str:
    """One point per guard: violations prevented (x) against Δpass^k on policy-consistent tasks (y), both with CIs."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    k = 0
    for c in comps:
        st = style(list(run_ids).index(c["candidate"]) if c["candidate"] in run_ids else 0)
        p, u = c["compliance"], c["usefulness"]
        if u is None:
            continue
        k = u["k"]
        ax.errorbar(p["prevented"], u["delta"], xerr=[[p["prevented"] - p["ci_low"]], [p["ci_high"] - p["prevented"]]],
                    yerr=[[u["delta"] - u["ci_low"]], [u["ci_high"] - u["delta"]]], fmt=st["marker"], color=st["color"],
                    capsize=3, markersize=6, linewidth=1.2,
                    label=f"{c['candidate_strategy']} ({len(u['lost_false_hold'])} task(s) lost to false holds)")
    ax.axhline(0, color="#555555", linewidth=0.9, linestyle="--")
    ax.axvline(0, color="#555555", linewidth=0.9, linestyle="--")
    base = comps[0]["baseline_strategy"] if comps else "baseline"
    ax.set_xlabel(f"violations prevented against {base} (count; right is more compliant)")
    ax.set_ylabel(f"Δpass^{k} on policy-consistent tasks (up is more useful)")
    # Points of close guards overlap: the legend names them, below the plot.
    ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    return _svg(fig, "Compliance gained against usefulness lost, per guard")


def _grouped_axes(groups: Sequence[str], n_runs: int) -> tuple[Any, Any, float]:
    """Horizontal bars grouped by category, one bar per run inside each group; returns fig, ax, bar height."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 0.28 * len(groups) * max(1, n_runs) + 1.2))
    height = 0.8 / max(1, n_runs)
    ax.set_yticks([g + 0.4 - height / 2 for g in range(len(groups))], list(groups))
    ax.invert_yaxis()
    return fig, ax, height


def fault_bars(rows: Sequence[FaultRow], run_ids: Sequence[str]) -> str:
    """Injected faults per class and run, with the detected part filled."""
    classes = sorted({r.fault_class for r in rows}, key=lambda c: (["A", "T", "D", "W", "PV"] + [c]).index(c))
    runs = [rid for rid in run_ids if any(r.run_id == rid for r in rows)]
    fig, ax, height = _grouped_axes(classes, len(runs))
    for j, rid in enumerate(runs):
        st = style(list(run_ids).index(rid))
        by = {r.fault_class: r for r in rows if r.run_id == rid}
        ys = [c_i + j * height for c_i in range(len(classes))]
        injected = [by[c].injected if c in by else 0 for c in classes]
        intercepted = [by[c].detected if c in by else 0 for c in classes]
        ax.barh(ys, injected, height=height * 0.9, color="white", edgecolor=st["color"], linewidth=1.2, label=rid)
        ax.barh(ys, intercepted, height=height * 0.9, color=st["color"])
    ax.set_ylabel("fault class")
    ax.set_xlabel("faults (count); filled = detected (held by the guard), outline = injected")
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    return _svg(fig, "Injected and detected faults by class and run")


def verdict_bars(rows: Sequence[VerdictRow]) -> str:
    """Stacked guard verdict counts on WRITE calls, one bar per run."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(rows) + 1.2))
    total = max((sum(r.counts.values()) for r in rows), default=0)
    for y, r in enumerate(rows):
        left = 0
        for v, colour in VERDICT_COLOURS.items():
            n = r.counts.get(v, 0)
            ax.barh(y, n, left=left, color=colour, edgecolor="white", linewidth=0.5, label=v if y == 0 else None)
            # Counts written on the segments: the verdicts do not rest on colour alone (no hatching: it
            # multiplies the SVG's size).
            if n and n >= 0.06 * total:
                ax.text(left + n / 2, y, f"{v[0]} {n}", ha="center", va="center", fontsize=7,
                        color="white" if v in ("BLOCK",) else "black")
            left += n
    ax.set_yticks(range(len(rows)), [r.run_id for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("guard decisions on WRITE calls (count)")
    ax.legend(fontsize=8, frameon=False, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _svg(fig, "Guard verdicts on WRITE calls per run")


def tactic_bars(rows: Sequence[TacticRow], run_ids: Sequence[str]) -> str:
    """Attack success rate per tactic and run."""
    tactics = sorted({r.tactic for r in rows})
    runs = [rid for rid in run_ids if any(r.run_id == rid for r in rows)]
    fig, ax, height = _grouped_axes(tactics, len(runs))
    for j, rid in enumerate(runs):
        by = {r.tactic: r for r in rows if r.run_id == rid}
        rates = [by[t].succeeded / by[t].attacked if t in by and by[t].attacked else 0 for t in tactics]
        ax.barh([t_i + j * height for t_i in range(len(tactics))], rates, height=height * 0.9,
                color=style(list(run_ids).index(rid))["color"], label=rid)
    ax.set_xlim(0, 1)
    ax.set_xlabel("attack success rate (fraction of attacked trials, 0–1; lower is better)")
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, "Attack success rate per tactic")
