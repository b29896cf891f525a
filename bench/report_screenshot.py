"""docs/report.png: two parts of the report of the README's runs (top; Δpass^k), by headless chromium.

Usage: python bench/report_screenshot.py REACT_RUN LEDGER_RUN ACTION_GUARD_RUN [--out docs/report.png]

The runs are the README's feedback-table runs (all 278 base tasks of airline, retail and telecom,
``--faults realistic -k 4 --seed 300``), so the picture shows the figures the README's table gives
(SIMULATION). Needs ``chromium`` (``apt-get install -y chromium``); the page is rendered offline
(``--disable-background-networking``: the report embeds everything it shows).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH = 1000
TOP = 1150  # the header, the runs and the first pass^k plots
DELTA = 1100  # from the Δpass^k section's heading: forest plot and table


_TO_DELTA = """<script>
(function () {
  var d = document.getElementById("delta");
  if (!d) return;
  var y = d.getBoundingClientRect().top + window.scrollY - 8;
  document.body.style.transform = "translateY(-" + y + "px)";
})();
</script>"""


def _stack(parts: list[Path], out: Path) -> None:
    """The screenshots one under the other, cut by a dashed line (Pillow)."""
    from PIL import Image, ImageDraw

    images = [Image.open(p).convert("RGB") for p in parts]
    sheet = Image.new("RGB", (WIDTH, sum(i.height for i in images) + 12 * (len(images) - 1)), "white")
    y = 0
    for n, image in enumerate(images):
        if n:
            draw = ImageDraw.Draw(sheet)
            for x in range(0, WIDTH, 16):
                draw.line([(x, y + 5), (x + 8, y + 5)], fill=(90, 90, 90), width=2)
            y += 12
        sheet.paste(image, (0, y))
        y += image.height
    sheet.save(out, optimize=True)


def main(argv: list[str]) -> int:
    """Build the report, screenshot its top, write the PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs=3, help="react, ledger and action-guard runs (the baseline first)")
    parser.add_argument("--out", default="docs/report.png")
    args = parser.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        print("error: no chromium found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        title = "react vs ledger vs action-guard: airline + retail + telecom, realistic faults, k = 4"
        subprocess.run([sys.executable, "-m", "tauguard", "report", *args.runs, "-o", str(page), "--title", title],
                       check=True)
        parts = []
        # the second part: the same page moved up to the Δpass^k section's heading (a copy with a script)
        html = page.read_text(encoding="utf-8")
        moved = Path(tmp) / "delta.html"
        moved.write_text(html.replace("</body>", _TO_DELTA + "</body>"), encoding="utf-8")
        for height, shown in ((TOP, page), (DELTA, moved)):
            shot = Path(tmp) / f"shot{len(parts)}.png"
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                            "--hide-scrollbars", "--virtual-time-budget=5000", f"--window-size={WIDTH},{height}",
                            f"--screenshot={shot}", shown.as_uri()], check=True, capture_output=True, timeout=300)
            parts.append(shot)
        _stack(parts, Path(args.out))
    print(f"wrote {args.out} (SIMULATION: the report of sim runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
