"""``invoke fit-table --new`` against a package index served on 127.0.0.1: the index's release list (PEP 691 JSON and
PEP 503 HTML), only the missing cells computed, the data and the page rewritten, ``--check`` failing with the diff."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reprokit.commands.fit_table import main, new_releases
from reprokit.errors import HostError
from reprokit.fix import fit_table, release_index

FILES = [  # (file name, yanked)
    ("flashinfer_python-0.4.0-py3-none-any.whl", False),   # older than the table's first release
    ("flashinfer_python-0.6.3-py3-none-any.whl", False),
    ("flashinfer_python-0.6.18-py3-none-any.whl", False),
    ("flashinfer_python-0.6.18.tar.gz", False),
    ("flashinfer_python-0.6.99.post1-py3-none-any.whl", False),  # a post-release the table lacks
    ("flashinfer_python-0.7.5rc1-py3-none-any.whl", False),  # pre-release: no row
    ("flashinfer_python-0.7.6.dev2-py3-none-any.whl", False),  # dev release: no row
    ("flashinfer_python-0.7.7-py3-none-any.whl", True),  # every file yanked: no row
    ("not-a-distribution.txt", False),
]


class Index(BaseHTTPRequestHandler):
    html_only = False

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/") != "/simple/flashinfer-python":
            self.send_error(404)
            return
        if not self.html_only and release_index.JSON_TYPE in self.headers.get("Accept", ""):
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "flashinfer-python",
                               "files": [{"filename": n, "url": f"/files/{n}", "hashes": {}, "yanked": y}
                                         for n, y in FILES]}).encode()
            kind = release_index.JSON_TYPE
        else:
            yanked = ' data-yanked=""'
            links = "".join(f'<a href="/files/{n}"{yanked if y else ""}>{n}</a><br>' for n, y in FILES)
            body = f"<!DOCTYPE html><html><body>{links}</body></html>".encode()
            kind = "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=[False, True], ids=["pep691-json", "pep503-html"])
def index(request) -> Iterator[str]:
    handler = type("Handler", (Index,), {"html_only": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/simple"
    server.shutdown()
    server.server_close()


def test_the_index_lists_finals_and_post_releases(index: str) -> None:
    versions = release_index.release_versions(release_index.project_files(index))
    assert versions == ["0.4.0", "0.6.3", "0.6.18", "0.6.99.post1"]


def test_an_index_that_does_not_answer_is_one_line() -> None:
    with pytest.raises(HostError, match=r"^package index http://127.0.0.1:9/flashinfer-python/: .*check --index-url"):
        release_index.project_files("http://127.0.0.1:9")


def test_new_computes_only_the_missing_cells_and_check_fails_with_the_diff(index: str, tmp_path: Path, monkeypatch,
                                                                           capsys) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", index)  # restored after the test; the wheel is fetched from this index
    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path / "cache"))
    table, page = tmp_path / "fit-table.json", tmp_path / "fit-table.md"
    shutil.copy(fit_table.DATA_FILE, table)
    page.write_text(fit_table.render_markdown(fit_table.load(table)))
    cells_before = set(fit_table.load(table)["cells"])

    assert new_releases(index, "sm120", "nvfp4", None, True, table, page) == 1
    out = capsys.readouterr().out
    assert "3 releases on the index, 1 cells computed: 0.6.99.post1/sm120/nvfp4" in out.splitlines()[0]
    cells = fit_table.load(table)["cells"]
    assert set(cells) - cells_before == {"0.6.99.post1/sm120/nvfp4"}  # 0.6.3 and 0.6.18 were there: not recomputed
    new = cells["0.6.99.post1/sm120/nvfp4"]
    assert new["status"] == "unreadable" and "flashinfer-python==0.6.99.post1" in new["reason"]
    assert "+| 0.6.99.post1 | unreadable:" in out and "b/fit-table.md" in out
    assert "| 0.6.99.post1 | unreadable:" in page.read_text()

    assert new_releases(index, "sm120", "nvfp4", None, True, table, page) == 0  # nothing new: no diff, exit 0
    assert "3 releases on the index, 0 cells computed" in capsys.readouterr().out


def test_missing_writes_the_job_list_of_a_host_without_the_index(index: str, tmp_path: Path, capsys) -> None:
    table, todo = tmp_path / "fit-table.json", tmp_path / "todo.json"
    real = fit_table.load()["cells"]
    have = [fit_table.cell_key("0.6.3", arch, dtype) for arch, dtype in fit_table.TABLE_CELLS]
    have.append(fit_table.cell_key("0.6.18", "sm120", "nvfp4"))
    fit_table.write({"schema": fit_table.SCHEMA, "cells": {key: real[key] for key in have}}, table)

    assert main(["--missing", str(todo), "--index-url", index, "--out", str(table)]) == 0
    expected = [[version, arch, dtype] for arch, dtype in fit_table.TABLE_CELLS for version in ("0.6.18", "0.6.99.post1")
                if (version, arch) != ("0.6.18", "sm120")]
    assert json.loads(todo.read_text()) == expected  # table order: a release's post-releases right after it
    assert capsys.readouterr().out == (
        f"fit-table --missing: 3 releases on {index}, 11 cells missing (sm120 nvfp4 1, sm121 nvfp4 2, sm90 nvfp4 2, "
        f"sm90 fp8 2, sm90 bf16 2, sm100 nvfp4 2): {todo}\n")
    assert set(fit_table.load(table)["cells"]) == set(have)  # nothing computed, the table untouched


def test_merge_takes_cells_computed_elsewhere_and_counts_what_is_missing(index: str, tmp_path: Path, capsys) -> None:
    table, page, elsewhere = tmp_path / "fit-table.json", tmp_path / "fit-table.md", tmp_path / "cells.json"
    real = fit_table.load()["cells"]
    here = {fit_table.cell_key("0.6.3", arch, dtype): real[fit_table.cell_key("0.6.3", arch, dtype)]
            for arch, dtype in fit_table.TABLE_CELLS}
    here["0.6.18/sm120/nvfp4"] = {**real["0.6.18/sm120/nvfp4"], "status": "unreadable", "reason": "nvcc killed"}
    fit_table.write({"schema": fit_table.SCHEMA, "cells": here}, table)
    computed = {key: real[key] for key in ("0.6.18/sm120/nvfp4", "0.6.18/sm121/nvfp4")}
    computed["0.6.3/sm120/nvfp4"] = {**real["0.6.3/sm120/nvfp4"], "failing_tactics": {}}  # readable here: kept
    fit_table.write({"schema": fit_table.SCHEMA, "cells": computed}, elsewhere)

    assert main(["--merge", str(elsewhere), "--index-url", index, "--out", str(table), "--docs", str(page)]) == 0
    assert capsys.readouterr().out == f"fit-table --merge: 2 cells taken, 8 in the table, 10 missing against {index}\n"
    merged = fit_table.load(table)
    assert merged["cells"]["0.6.18/sm120/nvfp4"] == real["0.6.18/sm120/nvfp4"]  # the unreadable one replaced
    assert merged["cells"]["0.6.3/sm120/nvfp4"] == real["0.6.3/sm120/nvfp4"]
    assert merged["generation"] == {"cells": 8, "missing_against_the_index": 10, "cells_merged": 2}
    assert page.read_text() == fit_table.render_markdown(merged)
    assert "Last generation: cells 8, missing against the index 10, cells merged 2." in page.read_text()
