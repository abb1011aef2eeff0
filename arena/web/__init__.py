"""Server-rendered pages; registered by ``create_app``."""

from __future__ import annotations

from flask import Flask


def register_web(app: Flask) -> None:
    """Register the page blueprint (templates and static files are the app's own)."""
    from arena.web.pages import bp

    app.register_blueprint(bp)
