"""Issue 38: the co-design app takes its PUBLIC proxy from the same files and URLs as the CLI.
A database URL is typed into the page's proxy source field (or given to `workbench dashboard
--proxy`, which hands it to the kernels by environment): it never enters the browser's address,
the field is cleared once read, and the page records it without its password."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import ipywidgets as widgets
import pytest
from sources_helpers import DATABASE, load_postgres, proxy

from workbench.cli.dashboard import (
    PROXY_ENV,
    dashboard_query,
    parameters_from_args,
    proxy_environment,
    proxy_location,
)
from workbench.sources import public_name

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
ROWS = 3_000
SECRET = "hunter2-s3cret"


@pytest.fixture()
def draft(tmp_path: Path) -> Path:
    """A draft copy of the lean spec (its autosave goes beside it)."""
    return Path(shutil.copy(LEAN, tmp_path / "lean_draft.json"))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The first rows of the proxy as Parquet (pyarrow) and as a DuckDB table."""
    import duckdb

    folder = tmp_path_factory.mktemp("proxies")
    frame = proxy().head(ROWS)
    frame.astype({"birth_sex": "category"}).to_parquet(folder / "births.parquet", index=False)
    with duckdb.connect(str(folder / "births.duckdb")) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE births AS SELECT * FROM frame")
    return {"parquet": str(folder / "births.parquet"),
            "duckdb": f"duckdb:///{folder / 'births.duckdb'}?table=births&password={SECRET}"}


def _texts(widget: Any) -> list[str]:
    """Every string a widget tree syncs to the page (values, descriptions, placeholders)."""
    out = []
    for name in ("value", "description", "placeholder", "tooltip"):
        value = getattr(widget, name, None)
        if isinstance(value, str):
            out.append(value)
    for child in getattr(widget, "children", ()) or ():
        out += _texts(child)
    return out


@pytest.fixture(scope="module")
def opened(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The page opened on the Parquet proxy (built once: the app's readouts take a while)."""
    from workbench.widgets.dashboards.codesign import codesign_dashboard

    folder = tmp_path_factory.mktemp("opened")
    return codesign_dashboard(Path(shutil.copy(LEAN, folder / "lean_draft.json")),
                              files["parquet"])


def test_a_parquet_proxy_opens_the_app_and_is_named(opened: Any):
    root = opened
    assert len(root.autosaver.app.session.proxy) == ROWS
    assert root.autosaver.app.lab is not None  # the readouts are on
    assert "public proxy <code>births.parquet</code>" in root.children[0].value
    assert root.proxy_source.shown == "births.parquet"


def _url(kind: str, files: dict[str, str], request: pytest.FixtureRequest) -> tuple[str, str]:
    """A database URL holding a password, and that password."""
    if kind == "duckdb":
        return files["duckdb"], SECRET
    cluster = request.getfixturevalue("postgres_cluster")
    load_postgres(cluster, proxy())
    first = quote(f"SELECT * FROM births WHERE id <= {ROWS}")
    return cluster.url(DATABASE, query=f"query={first}"), cluster.password


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
def test_a_url_typed_into_the_proxy_field_is_read_and_kept_without_its_password(
        draft: Path, files: dict[str, str], kind: str, request: pytest.FixtureRequest):
    from workbench.widgets.dashboards.codesign import codesign_dashboard

    url, secret = _url(kind, files, request)
    assert secret in url
    root = codesign_dashboard(draft, None)
    assert root.autosaver.app.session.proxy is None and root.proxy_source.shown is None
    root.autosaver.app.metadata.title_box.value = "Edited before the proxy"
    source = root.proxy_source
    source.field.value = url
    source.button.click()
    app = root.autosaver.app  # rebuilt on the new proxy, the autosaved draft reopened
    assert app.session.proxy is not None and len(app.session.proxy) == ROWS
    assert app.session.draft["metadata"]["title"] == "Edited before the proxy"
    assert source.field.value == "" and source.shown == public_name(url)
    assert public_name(url) in source.status.value and secret not in public_name(url)
    assert not [t for t in _texts(root) if secret in t]
    saved = list(draft.parent.glob("*.autosave.json")) + list(draft.parent.rglob("*.json"))
    assert not [p for p in saved if secret in p.read_text()]


def test_a_bad_url_is_refused_without_its_password_and_keeps_the_app(
        opened: Any, files: dict[str, str]):
    root = opened
    before = root.autosaver.app
    bad = files["duckdb"].replace("table=births", "table=no_such_table")
    root.proxy_source.field.value = bad
    root.proxy_source.button.click()
    status = root.proxy_source.status.value
    assert "the table does not exist" in status and SECRET not in status
    assert root.autosaver.app is before and root.proxy_source.shown == "births.parquet"
    assert root.proxy_source.field.value == ""


def test_dashboard_proxy_url_travels_by_environment_not_the_page_address(monkeypatch):
    url = f"postgresql://reader:{SECRET}@db.example/registry?table=births"
    args = argparse.Namespace(dashboard="codesign", path=None, proxy=url, dryrun=None)
    query = dashboard_query(parameters_from_args(args))
    assert "proxy" not in query and SECRET not in query
    assert proxy_environment(args) == {PROXY_ENV: url}
    monkeypatch.setenv(PROXY_ENV, url)
    assert proxy_location({}) == url  # the kernel reads it from its environment
    assert proxy_location({"proxy": url}) is None  # a URL in the page address is not taken
    file_args = argparse.Namespace(dashboard="codesign", path=None, proxy="p.parquet",
                                   dryrun=None)
    assert "proxy=" in dashboard_query(parameters_from_args(file_args))
    assert proxy_environment(file_args) == {}


def test_the_proxy_field_asks_for_a_location_when_blank(draft: Path):
    from workbench.widgets.dashboards.codesign import codesign_dashboard

    root = codesign_dashboard(draft, None)
    assert not root.proxy_source.open("   ")
    assert "give a proxy file or a database URL" in root.proxy_source.status.value
    assert isinstance(root.proxy_source.widget, widgets.HBox)
