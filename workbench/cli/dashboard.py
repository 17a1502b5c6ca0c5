"""`workbench dashboard`: serve a dashboard notebook with Voilà on 127.0.0.1 and print its URL.

The notebooks in ``notebooks/dashboards/`` read their inputs from the page's query string
(Voilà puts it in the kernel's ``QUERY_STRING``), so one URL names everything a dashboard
shows. This module owns that contract: which notebook serves which dashboard, which query
parameters it takes, their defaults, and how the server is started. It never imports
``workbench.widgets`` (the notebooks do).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks" / "dashboards"
DEFAULT_PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
DEFAULT_SPEC = REPO / "examples" / "israel_births_2014.json"
#: Where ``workbench dashboard codesign --proxy URL`` hands a database URL to the kernels.
PROXY_ENV = "WORKBENCH_DASHBOARD_PROXY"
#: Idle kernels of abandoned page loads are culled (each kernel holds about 200 MB).
#: Flags for headless Debian chromium driven by Playwright (no sandbox in containers, no
#: background requests, so nothing leaves 127.0.0.1).
HEADLESS_CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync")


def isolated_environment(tmp: Path) -> dict[str, str]:
    """Jupyter, IPython and matplotlib write their config to ``tmp``, not to ``~``; so do the
    co-design autosaves (``$WORKBENCH_DRAFTS``)."""
    env = dict(os.environ, MPLBACKEND="Agg", WORKBENCH_DRAFTS=str(tmp / "drafts"))
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        (tmp / var.lower()).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / var.lower())
    return env


CULL_FLAGS = ("--MappingKernelManager.cull_idle_timeout=10",
              "--MappingKernelManager.cull_interval=5")


@dataclass(frozen=True)
class Dashboard:
    """One dashboard: its notebook and the query parameter its PATH argument fills."""

    notebook: str
    path_parameter: str

    @property
    def notebook_path(self) -> Path:
        return NOTEBOOKS / self.notebook


DASHBOARDS: dict[str, Dashboard] = {
    "codesign": Dashboard("codesign.ipynb", "spec"),
    "spec": Dashboard("spec_review.ipynb", "spec"),
    "release": Dashboard("release_review.ipynb", "bundle"),
}


def query_parameters(query: str | None = None) -> dict[str, str]:
    """The page's query parameters (the last value of each); default: the kernel's QUERY_STRING.

    >>> query_parameters("spec=%2Fa%2Fb%20c.json&proxy=")
    {'spec': '/a/b c.json', 'proxy': ''}
    """
    text = os.environ.get("QUERY_STRING", "") if query is None else query
    return {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}


def fast_kernel_imports() -> None:
    """Skip jsonschema's optional IRI checker: importing it compiles a grammar (about 2.5 s).

    The spec schema uses no ``format`` keywords, so nothing is lost; call this in a dashboard
    kernel before anything imports :mod:`workbench.specification`.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]


def resolve_path(value: str | None, default: Path | None = None) -> Path | None:
    """A query path: absolute, or relative to the repository; blank gives ``default``.

    ``none`` (any case) means "no file", for optional inputs such as the proxy.
    """
    if value is None or not value.strip():
        return default
    if value.strip().lower() == "none":
        return None
    path = Path(value.strip()).expanduser()
    return path if path.is_absolute() else REPO / path


def dashboard_query(parameters: Mapping[str, str | os.PathLike[str] | None]) -> str:
    """The query string for the given parameters (absolute paths; None values left out)."""
    items = {}
    for key, value in parameters.items():
        if value is None:
            continue
        text = str(value)
        if isinstance(value, os.PathLike):
            text = str(Path(value).expanduser().resolve())
        items[key] = text
    return urlencode(items)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


#: The offline template: Voilà's ``lab`` template without its CDN stylesheets.
OFFLINE_TEMPLATE = "workbench-offline"
_REMOTE_LINK = re.compile(r"^\s*<link[^>]*href=\"https?://[^>]*>\s*$", re.MULTILINE)


def voila_command(notebook: Path, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The Voilà command line: localhost only, one fixed port, kernel culling, no browser,
    the offline template (no request leaves 127.0.0.1)."""
    return [
        sys.executable, "-m", "voila", str(notebook), "--no-browser",
        "--Voila.ip=127.0.0.1", f"--port={port}", "--Voila.port_retries=0",
        f"--template={OFFLINE_TEMPLATE}",
        "--VoilaConfiguration.show_tracebacks=True", *CULL_FLAGS, *extra,
    ]


def offline_template_root() -> Path:
    """A share/jupyter folder holding the offline template, made from the installed ``lab``.

    Voilà's ``lab`` template links Font Awesome from a public CDN, yet its own bundle
    (``voila.js``, served by Voilà) already carries Font Awesome and its fonts. The copy drops
    every ``<link href="http(s)://…">``, so icons and fonts come from the installed packages.
    """
    import voila

    source = Path(voila_data_path()) / "voila" / "templates" / "lab" / "index.html.j2"
    root = Path(tempfile.gettempdir()) / f"workbench-voila-{voila.__version__}-{os.getuid()}"
    folder = root / "voila" / "templates" / OFFLINE_TEMPLATE
    text = _REMOTE_LINK.sub("", source.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "index.html.j2").exists() or \
            (folder / "index.html.j2").read_text(encoding="utf-8") != text:
        (folder / "index.html.j2").write_text(text, encoding="utf-8")
        (folder / "conf.json").write_text('{"base_template": "lab"}\n', encoding="utf-8")
    return root


def voila_data_path() -> str:
    """The share/jupyter folder of Voilà's own installation, where its templates live.

    Voilà searches sys.prefix; in a virtualenv that borrows system packages, or when
    JUPYTER_DATA_DIR points elsewhere, that is not where the templates were installed.
    """
    import voila

    return str(Path(voila.__file__).resolve().parents[4] / "share" / "jupyter")


def start_voila(notebook: Path, port: int, *, env: Mapping[str, str] | None = None,
                log: Path | None = None, extra: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    """Start Voilà as its own process (stop it by its PID); output goes to ``log`` if given."""
    environment = dict(os.environ if env is None else env)
    paths = [p for p in environment.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    environment["JUPYTER_PATH"] = os.pathsep.join([str(offline_template_root()), *paths,
                                                   voila_data_path()])
    out = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(voila_command(notebook, port, extra), cwd=str(notebook.parent),
                                env=environment, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        if log is not None:
            out.close()  # type: ignore[union-attr]


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None,
                  timeout: float = 60.0, host: str = "127.0.0.1") -> bool:
    """Whether the port accepts connections within ``timeout`` (False early if the server dies)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop a server started by :func:`start_voila` (its own process group) and its kernels."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, 15)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.wait(timeout)


def parameters_from_args(args: argparse.Namespace) -> dict[str, str | Path | None]:
    """Query parameters of the dashboard from the command line."""
    board = DASHBOARDS[args.dashboard]
    params: dict[str, str | Path | None] = {}
    if args.path is not None:
        params[board.path_parameter] = Path(args.path)
    if args.proxy is not None and not _is_url(args.proxy):  # a URL: proxy_environment
        params["proxy"] = "none" if args.proxy.lower() == "none" else Path(args.proxy)
    if getattr(args, "dryrun", None) is not None:
        params["dryrun"] = Path(args.dryrun)
    return params


def _is_url(text: str) -> bool:
    """Whether a --proxy is a database URL (``workbench.sources``), not a file."""
    from workbench.sources import is_url

    return is_url(text)


def proxy_environment(args: argparse.Namespace) -> dict[str, str]:
    """A database URL given as --proxy reaches the kernels through the server's environment
    (:data:`PROXY_ENV`), never through the page's address, which would show its password."""
    proxy = getattr(args, "proxy", None)
    return {PROXY_ENV: proxy} if proxy is not None and _is_url(proxy) else {}


def proxy_location(params: Mapping[str, str], default: Path | None = DEFAULT_PROXY
                   ) -> str | Path | None:
    """The co-design page's proxy: ``?proxy=PATH`` (a file; a URL there is ignored, the page
    offers its proxy source field instead), else the server's :data:`PROXY_ENV` URL, else
    ``default``."""
    value = params.get("proxy", "")
    if value.strip() and _is_url(value):
        return None
    if not value.strip() and os.environ.get(PROXY_ENV):
        return os.environ[PROXY_ENV]
    return resolve_path(value, default)


def run_dashboard(args: argparse.Namespace) -> int:
    """Start Voilà, print the URL once the port is open, and serve until interrupted."""
    board = DASHBOARDS[args.dashboard]
    if args.dashboard == "release" and args.path is None:
        print("note: no bundle given; the page explains how to pass ?bundle=PATH",
              file=sys.stderr)
    for value in parameters_from_args(args).values():
        if isinstance(value, Path) and not value.exists():
            print(f"error: {value} does not exist", file=sys.stderr)
            return 2
    port = args.port or free_port()
    query = dashboard_query(parameters_from_args(args))
    process = start_voila(board.notebook_path, port, env={**os.environ,
                                                           **proxy_environment(args)})
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        if not wait_for_port(port, process, timeout=args.timeout):
            print("error: Voilà did not start (run the notebook in Jupyter to see why)",
                  file=sys.stderr)
            return 1
        url = f"http://127.0.0.1:{port}/" + (f"?{query}" if query else "")
        print(f"{args.dashboard} dashboard: {url}", flush=True)
        print("(stop with Ctrl-C)", flush=True)
        return int(process.wait())
    except KeyboardInterrupt:
        return 0
    finally:
        stop(process)


def _exit_on_sigterm(_signum: int, _frame: object) -> None:
    """SIGTERM ends the command like Ctrl-C, so the Voilà server is stopped too."""
    raise KeyboardInterrupt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``workbench dashboard``."""
    parser.add_argument("dashboard", choices=sorted(DASHBOARDS),
                        help="codesign: edit a draft spec on the proxy; spec: review a frozen "
                        "spec; release: review a release bundle")
    parser.add_argument("path", nargs="?",
                        help="the spec (codesign, spec; default: the Israeli example) or the "
                        "run directory / release bundle (release)")
    parser.add_argument("--proxy", help="a PUBLIC proxy: a file (CSV, Parquet, Stata, SAS, "
                        "SPSS) or a database URL, which stays out of the page's address "
                        "(default: the bundled proxy; 'none' for no proxy)")
    parser.add_argument("--dryrun", help="spec review: the file of `workbench dryrun "
                        "--write-result` (or --records), for the expected number of iterations")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for Voilà to open its port")
