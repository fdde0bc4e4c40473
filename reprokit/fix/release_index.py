"""The releases of flashinfer-python on a package index, read from its Simple API (PEP 691 JSON, else PEP 503 HTML).

``invoke fit-table --new`` asks the index which releases exist and computes only the cells the table lacks: every
final release and every post-release (``0.6.18.post1``) gets a row; pre- and dev releases do not, and neither does
a release whose files are all yanked. A release announced upstream but not yet on the index (0.7.5 when this was
written) gets its row from the same command once the index lists it.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from reprokit.errors import HostError
from reprokit.fix import fit_table
from reprokit.output.say import Say, silent

DEFAULT_INDEX = "https://pypi.org/simple"
PACKAGE = "flashinfer-python"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
TIMEOUT_S = 60


class _Links(HTMLParser):
    """The file links of a PEP 503 project page, with their data-yanked attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            found = dict(attrs)
            self._pending = {"yanked": "data-yanked" in found}
            self._text = ""

    def handle_data(self, data: str) -> None:
        if hasattr(self, "_pending"):
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and hasattr(self, "_pending"):
            self.files.append({"filename": self._text.strip(), **self._pending})
            del self._pending


def project_files(index_url: str, package: str = PACKAGE) -> list[dict[str, Any]]:
    """The project's files as the index lists them: [{"filename", "yanked"}], JSON when the index speaks it."""
    url = f"{index_url.rstrip('/')}/{re.sub(r'[-_.]+', '-', package).lower()}/"
    request = urllib.request.Request(url, headers={"Accept": f"{JSON_TYPE}, text/html;q=0.1"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - an index URL the user gave
            kind = response.headers.get_content_type()
            body = response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as exc:
        raise HostError(f"package index {url}: {exc}; check --index-url or the network") from None
    if kind == JSON_TYPE:
        try:
            return [{"filename": f["filename"], "yanked": bool(f.get("yanked"))} for f in json.loads(body)["files"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise HostError(f"package index {url}: not a PEP 691 project page ({exc})") from None
    parser = _Links()
    parser.feed(body)
    return parser.files


def release_versions(files: list[dict[str, Any]], package: str = PACKAGE) -> list[str]:
    """Final and post-releases that have at least one file not yanked, oldest first."""
    alive: dict[Version, str] = {}
    for file in files:
        name = file["filename"]
        try:
            version = (parse_wheel_filename(name)[1] if name.endswith(".whl") else parse_sdist_filename(name)[1])
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if version.is_prerelease or version.is_devrelease or file["yanked"]:
            continue
        alive[version] = str(version)
    return [alive[v] for v in sorted(alive)]


def missing(versions: list[str], table: dict[str, Any], specs: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The (version, arch, dtype) cells the table does not have."""
    return [(v, a, d) for a, d in specs for v in versions if fit_table.cell_key(v, a, d) not in table["cells"]]


def update(index_url: str, specs: list[tuple[str, str]], cache_dir: Path, jobs: int | None,
           table_path: Path = fit_table.DATA_FILE, docs_path: Path = fit_table.DOCS_PAGE,
           oldest: str = fit_table.OLDEST, log: Say = silent) -> dict[str, Any]:
    """Compute only the missing cells of the releases on the index, then rewrite the data and the page."""
    versions = [v for v in release_versions(project_files(index_url)) if Version(v) >= Version(oldest)]
    table = fit_table.load(table_path)
    todo = missing(versions, table, specs)
    log(f"fit-table --new: {len(versions)} releases on {index_url}; {len(todo)} cells missing")
    for version, arch, dtype in todo:
        fit_table.generate([version], [arch], [dtype], cache_dir, jobs, table_path, log=log)
    table = fit_table.load(table_path)
    page = fit_table.render_markdown(table)
    changed = not docs_path.is_file() or docs_path.read_text() != page
    docs_path.write_text(page)
    return {"releases": versions, "computed": [fit_table.cell_key(*c) for c in todo], "page_changed": changed}
