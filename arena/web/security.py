"""What every answer tells the browser about how it may be used: a Content-Security-Policy
with no inline script or style, never framed (clickjacking), never sniffed into another
type, no full address sent to other sites.  And the page an error gets outside the JSON
API: the site's own layout, not the server's bare text.

The pages need nothing inline: their scripts and styles are static files; what a
template computes (a bar's width, a gauge's mark) is an SVG attribute, which the policy
does not govern; data for a script travels in ``<script type="application/json">``
blocks, which are never run.  The API's documentation page (Swagger UI, from
``swagger-ui-bundle``) is ours too (``templates/swagger_ui.html``), its start-up code a
static file.
"""

from __future__ import annotations

from flask import Flask, Response, render_template, request
from werkzeug.exceptions import HTTPException

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self' data:",  # the empty favicon of every page, Swagger UI's icons
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "X-Content-Type-Options": "nosniff",
    # a link followed to another site tells it the arena's origin, never the page (a
    # person's seat link carries its secret after the #, a private event's page its id)
    "Referrer-Policy": "strict-origin-when-cross-origin",
}


def _secure(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def error_page(exc: HTTPException) -> Response | HTTPException:
    """A page's error (a 404 for an address no route takes, a 405...) in the site's
    layout, with the error's own status and headers.  Should the page itself fail (a
    database gone for the layout's account menu), the plain answer is given instead."""
    template = "404.html" if exc.code == 404 else "error.html"
    # Werkzeug's own words ("If you entered the URL manually...") are the template's
    message = exc.description if exc.description != type(exc).description else None
    try:
        body = render_template(template, message=message, error=exc)
    except Exception:  # an error page that fails falls back to the plain one
        return exc
    response = Response(body, status=exc.code or 500, mimetype="text/html")
    for name, value in exc.get_headers():  # Allow, Retry-After...
        if name.lower() != "content-type":
            response.headers[name] = value
    return response


def init_app(app: Flask) -> None:
    app.after_request(_secure)


def wants_page(path: str | None = None) -> bool:
    """Whether an error at ``path`` (default: this request's) is answered with a page:
    everything but the JSON API (which answers JSON errors) and the static files."""
    path = request.path if path is None else path
    return not path.startswith(("/api/", "/static/")) and path != "/api"
