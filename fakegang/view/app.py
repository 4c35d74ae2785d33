"""`fakegang view`'s web app: runs, episodes, one episode step by step, learning, campaigns.

FastAPI (already the environment server's framework) with Jinja2 templates rendered on the
server; the only script is the episode page's stepper with Cytoscape.js, both served from the
package's static folder. Every response carries a Content-Security-Policy that lets the page load
nothing but this app's own files, so no request can leave the machine even by a stray link tag.
Each request opens the database read-only (fakegang/view/db.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from fakegang.view import db
from fakegang.view.campaigns import campaign_groups
from fakegang.view.casefile import case_file, to_markdown
from fakegang.view.episode import load_episode
from fakegang.view.learning import learning_data
from fakegang.view.learning_charts import alpha_summary, baseline, weights_chart
from fakegang.view.security import install_view_security
from fakegang.view.svg import Point, Series, line_chart

HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
MODE_COLORS = {
    "learning": "#1f77b4",
    "static": "#7f7f7f",
    "prior": "#ff7f0e",
    "oracle": "#2ca02c",
}


def _json_for_script(value: Any) -> Markup:
    """JSON safe inside a `<script type="application/json">` element."""
    text = json.dumps(value, default=str)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _campaign_chart(group: dict[str, Any]) -> tuple[str, str]:
    """(grader score per round, one line per mode and campaign; win rate per round per mode)."""
    per_campaign = []
    for s in group["series"]:
        points = [
            Point(
                p["round"],
                p["grader_score"] or 0.0,
                href=f"/episode/{p['thread_id']}",
                title=(
                    f"{s['mode']} campaign {s['campaign']} round {p['round']}"
                    f"{' (' + p['regime'] + ')' if p.get('regime') else ''}: "
                    f"{'WIN' if p['won'] else 'LOSS'} grader {p['grader_score'] or 0:.2f}"
                ),
                css="won" if p["won"] else "lost",
            )
            for p in s["points"]
            if p["status"] == "finished"
        ]
        per_campaign.append(
            Series(
                f"{s['mode']} c{s['campaign']}",
                points,
                color=MODE_COLORS.get(str(s["mode"])) if len(group["series"]) <= 3 else None,
                dash=s["mode"] == "static",
            )
        )
    grader = line_chart(per_campaign, x_label="round", y_label="grader score", y_range=(0.0, 1.0))
    rates = [
        Series(
            mode,
            [Point(k + 1, v, title=f"{mode} round {k + 1}: win rate {v:.2f}")
             for k, v in enumerate(curve) if v is not None],
            color=MODE_COLORS.get(mode),
            dash=mode == "static",
        )
        for mode, curve in group["win_rate"].items()
    ]  # fmt: skip
    wins = line_chart(rates, x_label="round", y_label="win rate", y_range=(0.0, 1.0), height=220)
    return grader, wins


def create_app(
    db_path: str | Path, *, token: str | None = None, allowed_hosts: Iterable[str] | None = None
) -> FastAPI:
    """The viewer over the database at `db_path` (read-only), guarded by `token` if given and
    answering only the `allowed_hosts` names (fakegang/view/security.py) when given."""
    path = Path(db_path)
    app = FastAPI(title="fakegang view", docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next):
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.exception_handler(db.ViewError)
    async def not_found(request: Request, exc: db.ViewError):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=404)
        return templates.TemplateResponse(
            request, "error.html", {"message": str(exc), "db": path}, status_code=404
        )

    def page(request: Request, name: str, **context: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, {"db": path, **context})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/", response_class=HTMLResponse)
    def runs_page(request: Request):
        with db.read_only(path) as conn:
            runs = db.list_runs(conn)
        return page(request, "runs.html", runs=runs)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: str, task: str = "", outcome: str = ""):
        with db.read_only(path) as conn:
            run = db.run(conn, run_id)
            all_eps = db.episodes(conn, run_id)
            eps = db.episodes(conn, run_id, task=task or None, outcome=outcome or None)
        settings = db.settings_of(run)
        return page(
            request,
            "run.html",
            run=run,
            settings=settings,
            tactics=settings.get("tactics") or "classic",
            episodes=eps,
            tasks=sorted({e["task"] for e in all_eps}),
            n_all=len(all_eps),
            task=task,
            outcome=outcome,
        )

    @app.get("/episode/{thread_id}", response_class=HTMLResponse)
    def episode_page(request: Request, thread_id: str):
        data = load_episode(path, thread_id)
        return page(request, "episode.html", data=data, data_json=_json_for_script(data))

    @app.get("/episode/{thread_id}/case-file")
    def case_file_page(request: Request, thread_id: str, format: str = "html"):
        if format not in ("html", "md", "json"):
            return Response(f"unknown format {format!r}: html, md or json\n", status_code=400)
        cf = case_file(load_episode(path, thread_id))
        if format == "json":
            return JSONResponse(json.loads(json.dumps(cf, default=str)))
        if format == "md":
            return Response(to_markdown(cf), media_type="text/markdown; charset=utf-8")
        return page(request, "case_file.html", cf=cf)

    @app.get("/api/episode/{thread_id}")
    def episode_json(thread_id: str):
        return JSONResponse(json.loads(json.dumps(load_episode(path, thread_id), default=str)))

    @app.get("/learning", response_class=HTMLResponse)
    def learning_page(request: Request):
        with db.read_only(path) as conn:
            data = learning_data(conn, path)
            groups = campaign_groups(conn)
        return page(
            request,
            "learning.html",
            data=data,
            alpha=alpha_summary(data["alpha_history"]),
            weight_charts=[weights_chart(m) for m in data["memories"]],
            baseline=baseline(groups),
        )

    @app.get("/campaigns", response_class=HTMLResponse)
    def campaigns_page(request: Request):
        with db.read_only(path) as conn:
            groups = campaign_groups(conn)
        charts = [tuple(Markup(c) for c in _campaign_chart(g)) for g in groups]
        return page(request, "campaigns.html", groups=list(zip(groups, charts, strict=True)))

    if token:
        from fakegang.view.auth import ViewTokenMiddleware

        app.add_middleware(ViewTokenMiddleware, token=token)
    install_view_security(app, hosts=allowed_hosts)
    return app
