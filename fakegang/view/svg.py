"""Line charts as inline SVG, drawn on the server: no charting script to ship or load.

The pages need a handful of small curves (a campaign's rounds, α and weights over episodes)
whose points are links; SVG `<a>` elements give that for free, print and zoom cleanly, and need
no JavaScript. Hand-rolled because it is ~100 lines, where a charting library would add a
vendored script of hundreds of kilobytes for the same few lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass
class Point:
    x: float
    y: float
    href: str | None = None
    title: str = ""
    css: str = ""


@dataclass
class Series:
    name: str
    points: list[Point] = field(default_factory=list)
    color: str | None = None
    dash: bool = False


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    step = (hi - lo) / n
    return [lo + i * step for i in range(n + 1)]


def line_chart(
    series: list[Series],
    *,
    width: int = 720,
    height: int = 280,
    x_label: str = "",
    y_label: str = "",
    y_range: tuple[float, float] | None = None,
    css_class: str = "chart",
) -> str:
    """An SVG line chart; points with an `href` are links (class `point`)."""
    pts = [p for s in series for p in s.points]
    if not pts:
        return '<p class="empty">nothing to draw yet</p>'
    left, right, top, bottom = 52, 150, 14, 40
    xs = [p.x for p in pts]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    if y_range:
        y_lo, y_hi = y_range
    else:
        ys = [p.y for p in pts]
        y_lo, y_hi = min(ys), max(ys)
        pad = (y_hi - y_lo) * 0.08 or 0.5
        y_lo, y_hi = y_lo - pad, y_hi + pad
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return round(left + (x - x_lo) / (x_hi - x_lo) * plot_w, 1)

    def sy(y: float) -> float:
        return round(top + (1 - (y - y_lo) / (y_hi - y_lo)) * plot_h, 1)

    out = [
        f'<svg class="{css_class}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" class="frame"/>',
    ]
    for t in _ticks(y_lo, y_hi, 4):
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{sy(t)}" y2="{sy(t)}"/>'
            f'<text class="tick" x="{left - 6}" y="{sy(t) + 4}" text-anchor="end">{t:.2f}</text>'
        )
    integer_x = all(float(x).is_integer() for x in xs)
    x_ticks = sorted(set(xs)) if integer_x and len(set(xs)) <= 20 else _ticks(x_lo, x_hi, 5)
    for t in x_ticks:
        label = f"{t:.0f}" if integer_x else f"{t:.1f}"
        out.append(
            f'<text class="tick" x="{sx(t)}" y="{top + plot_h + 16}" '
            f'text-anchor="middle">{label}</text>'
        )
    out.append(
        f'<text class="axis" x="{left + plot_w / 2}" y="{height - 6}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="axis" transform="rotate(-90)" x="{-(top + plot_h / 2)}" y="14" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    for i, s in enumerate(series):
        color = s.color or PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if s.dash else ""
        path = " ".join(f"{sx(p.x)},{sy(p.y)}" for p in s.points)
        out.append(
            f'<polyline class="line" fill="none" stroke="{color}" stroke-width="2"{dash} '
            f'points="{path}"/>'
        )
        for p in s.points:
            dot = (
                f'<circle class="point {escape(p.css)}" cx="{sx(p.x)}" cy="{sy(p.y)}" r="5" '
                f'fill="{color}" stroke="{color}"><title>{escape(p.title)}</title></circle>'
            )
            if p.href:
                dot = f'<a href="{escape(p.href)}" class="point-link">{dot}</a>'
            out.append(dot)
        ly = top + 14 + i * 18
        out.append(
            f'<line x1="{left + plot_w + 10}" x2="{left + plot_w + 30}" y1="{ly - 4}" '
            f'y2="{ly - 4}" stroke="{color}" stroke-width="2"{dash}/>'
            f'<text class="legend" x="{left + plot_w + 36}" y="{ly}">{escape(s.name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)
