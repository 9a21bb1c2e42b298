"""The page: the template files of ``mixbayes/report/template`` (HTML, CSS, JavaScript, read
as package data) with the data inlined as JSON. Nothing is fetched when the page opens."""

from __future__ import annotations

import html
import json
import re
from importlib import resources

_MARKER = re.compile(r"\{\{(TITLE|VERSION|CSS|JS|DATA)\}\}")


def template(name):
    """The text of one template file (``report.html``, ``report.css``, ``report.js``)."""
    return resources.files("mixbayes.report").joinpath("template", name).read_text("utf-8")


def assemble(payload, title):
    """One self-contained HTML page showing ``payload``, titled ``title``."""
    from .. import __version__

    # JSON inside <script>: no "<" may end the element or open a comment, so escape it (and
    # its neighbours) as \\u escapes, which JSON.parse reads back unchanged
    data = json.dumps(payload, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    parts = dict(TITLE=html.escape(title), VERSION=html.escape(__version__),
                 CSS=template("report.css"), JS=template("report.js"), DATA=data)
    # one pass: a marker inside the inserted text is never replaced again
    return _MARKER.sub(lambda match: parts[match.group(1)], template("report.html"))
