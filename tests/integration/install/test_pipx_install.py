"""reprokit installed like a tool: ``./dev install`` (the README's one command) into a temporary home, the installed
``reprokit`` run from an empty directory with no checkout on the path.

``./dev install`` builds the wheel offline (``./dev wheel``: ``pip wheel --no-deps --no-build-isolation`` with the
dev lock's setuptools, from a copy of the build inputs, so the checkout gets no build/ folder) and has Debian's pipx
install it with no index, from a folder of the runtime lock's wheels (downloaded with their hashes checked): the same
wheels as CI's, ansible-core included. HOME, PIPX_HOME and PIPX_BIN_DIR are the temporary home's, so nothing of the
user's is touched. Where pipx is missing and cannot be installed (not root, no apt-get), a fresh venv of the same
wheel stands in for it, which is what pipx makes. One install serves every test of the module.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.docker_env import BASE_REF, DOCKER, REASON, REGISTRY, docker, start_test_host

pytestmark = pytest.mark.slow
SHIPPED = ("kits", "docker", "ansible")
CHECKOUT_KITS = sorted(p.stem for p in (REPO / "kits").glob("*.yml"))
# ./dev's own venv is the one running these tests (its stamp matches the dev lock: ./dev leaves it as it is)
DEV_ENV = {"REPROKIT_VENV": sys.prefix, "PYTHON": sys.executable}


def _debian_tool(name: str) -> str | None:
    """``name`` on the PATH, installed from Debian's package of that name first where it is missing and we can."""
    if shutil.which(name) is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", name], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       capture_output=True, timeout=300)
    return shutil.which(name)


def _checkout_state() -> list[str]:
    """What git sees in the checkout, ignored files included (caches aside): ./dev install must leave it as it was."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if "__pycache__" not in line and ".pytest_cache" not in line)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([str(REPO / "dev"), "wheel", str(dist)], env=dict(os.environ, **DEV_ENV), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (built,) = dist.glob("reprokit-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """HOME, the environment and the ``reprokit`` command of the installed tool."""
    home = tmp_path_factory.mktemp("home")
    bin_dir = home / ".local" / "bin"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("XDG_", "PYTHON", "VIRTUAL_ENV", "INVOKE_", "REPROKIT_", "ANSIBLE_", "PIPX_"))}
    # The download cache stays this machine's (the FlashInfer release the static analysis reads, as every other test
    # fills it); config and data are the empty home's.
    env.update(XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"))
    env.update(HOME=str(home), PIPX_HOME=str(home / ".local" / "pipx"), PIPX_BIN_DIR=str(bin_dir),
               PATH=os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]), NO_COLOR="1", COLUMNS="200")
    pipx = _debian_tool("pipx")
    before = _checkout_state()
    if pipx:
        # pip's downloads (the lock's wheels, pipx's own shared pip) through this machine's pip cache, not the home's
        cached = dict(env, PIP_CACHE_DIR=str(Path.home() / ".cache" / "pip"), **DEV_ENV)
        proc = subprocess.run([str(REPO / "dev"), "install"], env=cached, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        venv = home / ".local" / "pipx" / "venvs" / "reprokit"
    else:
        dist = tmp_path_factory.mktemp("dist-venv")
        subprocess.run([str(REPO / "dev"), "wheel", str(dist)], env=dict(os.environ, **DEV_ENV), check=True, timeout=600)
        wheels = tmp_path_factory.mktemp("wheels")  # the runtime lock's wheels, their hashes checked on the way in
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--require-hashes",
                        "--no-deps", "--only-binary=:all:", "-d", str(wheels), "-r", str(REPO / "requirements.lock")],
                       check=True, timeout=600)
        venv = home / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", f"--find-links={wheels}",
                        *dist.glob("reprokit-*.whl")], check=True, timeout=600)
        bin_dir.mkdir(parents=True)
        (bin_dir / "reprokit").symlink_to(venv / "bin" / "reprokit")
    work = home / "work"  # the empty directory every command runs in
    work.mkdir()
    return {"home": home, "env": env, "venv": venv, "work": work, "pipx": pipx, "checkout_before": before,
            "checkout_after": _checkout_state(), "reprokit": str(bin_dir / "reprokit")}


def reprokit(installed, *args: str, cwd: Path | None = None, timeout: float = 300,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([installed["reprokit"], *args], cwd=cwd or installed["work"], env={**installed["env"], **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def test_dev_install_puts_the_tool_in_the_given_pipx_home_and_leaves_the_checkout_as_it_was(installed, tmp_path):
    if not installed["pipx"]:
        pytest.skip("pipx is missing and cannot be installed here: ./dev install needs it (a venv stood in)")
    home = installed["home"]
    assert Path(installed["reprokit"]).resolve() == (installed["venv"] / "bin" / "reprokit").resolve()
    assert sorted(p.name for p in (home / ".local").iterdir()) == ["bin", "pipx"]  # PIPX_BIN_DIR, PIPX_HOME
    new = set(installed["checkout_after"]) - set(installed["checkout_before"])
    assert [line for line in new if re.search(r"(^|/)(build|dist)/|\.egg-info|\.whl$", line)] == []  # no build left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = reprokit(installed, "kits", cwd=empty)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.split("└")[0]  # the kits' table, before the step kinds'
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if line.startswith("│")]
    kits = [(row[0], row[1].split()[0]) for row in rows if row[0]]  # kit, source (a row's first line)
    assert kits == [(name, "built-in") for name in CHECKOUT_KITS], proc.stdout
    assert list(empty.iterdir()) == []


def test_the_wheel_ships_the_kits_roles_dockerfiles_and_tables_and_no_tests(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in SHIPPED:
        tracked = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=REPO, capture_output=True, text=True,
                                 check=True).stdout.split("\0")
        files = sorted(f for f in tracked if f and not any(part.startswith(".") for part in Path(f).parts))
        assert files and {f"reprokit/shipped/{f}" for f in files} <= names, folder  # whatever git holds there, no dotfile
    assert {"reprokit/shipped/ansible/site.yml", "reprokit/shipped/docker/workload.Dockerfile",
            "reprokit/shipped/docker/serve.Dockerfile", "reprokit/data/fit-table.json"} <= names
    tables = sorted(p.name for p in (REPO / "reprokit" / "data" / "tactics").glob("*.json"))
    assert tables and {f"reprokit/data/tactics/{t}" for t in tables} <= names
    roles = sorted(p.name for p in (REPO / "ansible" / "roles").iterdir() if p.is_dir())
    assert {f"reprokit/shipped/ansible/roles/{r}/tasks/main.yml" for r in roles} <= names
    templates = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "reprokit").rglob("templates/**/*") if p.is_file())
    assert templates and set(templates) <= names  # report.html's, the runs index's and the kinds' sections
    assert [n for n in names if n.startswith("tests/") or "/tests/" in n or "doubles" in n or "/test_" in n] == []
    assert [n for n in names if "__pycache__" in n or n.endswith(".pyc")] == []


def test_kits_lists_every_built_in_kit_from_the_package(installed):
    proc = reprokit(installed, "kits", "--json")
    assert proc.returncode == 0, proc.stderr
    kits = json.loads(proc.stdout)["kits"]
    assert [k["kit"] for k in kits] == CHECKOUT_KITS
    assert {k["source"] for k in kits} == {"built-in"}
    assert {str(Path(k["path"]).parent.relative_to(installed["venv"]).as_posix()).split("/", 3)[-1] for k in kits} == {
        "reprokit/shipped/kits"}
    user = installed["home"] / ".config" / "reprokit" / "kits"  # the user's layer wins over the built-in one
    user.mkdir(parents=True)
    (user / "smem-probe.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text())
    try:
        listed = {k["kit"]: k["source"] for k in json.loads(reprokit(installed, "kits", "--json").stdout)["kits"]}
    finally:
        shutil.rmtree(installed["home"] / ".config")
    assert listed == {name: "user" if name == "smem-probe" else "built-in" for name in CHECKOUT_KITS}
    assert list(installed["work"].iterdir()) == []


def test_an_untracked_kit_left_in_the_checkout_does_not_ship(tmp_path):
    """The wheel is built from the tracked files: a scratch kit in kits/ that git does not know stays out of it."""
    scratch = REPO / "kits" / f"zz-scratch-{os.getpid()}.yml"
    scratch.write_text((REPO / "kits" / "smem-probe.yml").read_text().replace("kit: smem-probe", f"kit: {scratch.stem}", 1))
    try:
        proc = subprocess.run([str(REPO / "dev"), "wheel", str(tmp_path)], env=dict(os.environ, **DEV_ENV),
                              capture_output=True, text=True, timeout=600)
    finally:
        scratch.unlink()
    assert proc.returncode == 0, proc.stderr
    (built,) = tmp_path.glob("reprokit-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    shipped_kits = sorted(n.rsplit("/", 1)[-1][:-4] for n in names
                          if n.startswith("reprokit/shipped/kits/") and n.endswith(".yml") and n.count("/") == 3)
    assert shipped_kits == CHECKOUT_KITS  # every tracked kit, and not the scratch one
    docs = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert docs and {f"reprokit/shipped/docs/{name}" for name in docs} <= names  # what the help points at ships


@pytest.mark.parametrize(("argv", "code"), [
    (["kits"], 0), (["hosts"], 0), (["runs", "--runs-dir", "nowhere"], 2), (["repro"], 2), (["triage"], 2),
    (["fit-table", "--docs-only"], 2), (["check-record", "nosuchrun"], 2), (["--bogus"], 2),
])
def test_a_default_run_from_an_empty_home_ends_in_one_line_not_a_traceback(installed, argv, code):
    proc = reprokit(installed, *argv)
    assert (proc.returncode, "Traceback" in proc.stderr) == (code, False), proc.stderr
    if code == 2:
        assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) <= 2, proc.stderr  # the line, the usage
    assert list(installed["work"].iterdir()) == []


def test_every_tasks_help_from_an_empty_home_names_reprokit(installed):
    listed = reprokit(installed, "--list", "--list-format=json")
    names = sorted(t["name"] for t in json.loads(listed.stdout)["tasks"])
    for name in names:
        proc = reprokit(installed, name, "--help")
        assert (proc.returncode, proc.stderr) == (0, ""), name
        assert proc.stdout.startswith(f"Usage: reprokit {name}"), proc.stdout[:200]


def test_version_names_the_installed_ansible_core_and_the_kits_pins(installed):
    proc = reprokit(installed, "--version")
    lock = (REPO / "requirements.lock").read_text()
    ansible = re.search(r"^ansible-core==(\S+)", lock, re.M).group(1)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"reprokit 0.1.0 (ansible-core {ansible}; Python ")
    assert [line.split()[0] for line in lines[2:]] == CHECKOUT_KITS
    assert "  smem-probe" in proc.stdout and "cuda 12.9.1, torch 2.9.1" in proc.stdout


def test_help_starts_with_reprokits_tasks_and_hides_invokes_shell_options(installed):
    out = reprokit(installed, "--help").stdout
    assert out.splitlines()[0].startswith("Usage: reprokit [--dry] TASK")
    assert out.index("repro ") < out.index("Options before the task:")
    for hidden in ("--prompt-for-sudo-password", "--write-pyc", "--hide", "--pty", "--echo"):
        assert hidden not in out
    for shown in ("--list", "--version", "--complete", "--print-completion-script"):
        assert shown in out


def test_repro_from_an_empty_directory_is_inconclusive_with_the_record_in_the_data_dir(installed):
    proc = reprokit(installed, "repro", "ep8-crash", "-q")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    said = re.search(r"^can't tell here: (\d+) of (\d+) expectations held, (\d+) could not be judged here"
                     r" \(INCONCLUSIVE, exit 3\)$", proc.stdout, re.M)
    assert said, proc.stdout
    runs = installed["home"] / ".local" / "share" / "reprokit" / "runs"
    (record,) = [p for p in runs.iterdir() if (p / "manifest.json").is_file()]
    manifest = json.loads((record / "manifest.json").read_text())
    assert (manifest["kit"]["name"], manifest["verdict"]["verdict"]) == ("ep8-crash", "INCONCLUSIVE")
    judged = [j["status"] for j in json.loads((record / "verdict.json").read_text())["expectations"]]
    assert [int(n) for n in said.groups()] == [judged.count("PASS"), len(judged), judged.count("INCONCLUSIVE")]
    assert manifest["kit"]["path"].startswith(f"{installed['venv']}/lib/")  # the package's kit, not the checkout's
    assert f"record: {record}" in proc.stdout
    assert list(installed["work"].iterdir()) == []  # nothing written where it ran


def test_hosts_reads_an_ini_inventory_with_group_vars(installed, tmp_path):
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "hosts.ini").write_text("[gpu]\nrtx-[01:02] ansible_host=10.213.0.11\n[gpu:vars]\nruntime=native\n")
    (tmp_path / "group_vars" / "gpu.yml").write_text("gpu_arch: sm120\ngpu_count: 8\n")
    proc = reprokit(installed, "hosts", "-i", "hosts.ini", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    hosts = {h["name"]: (h["gpu_arch"], h["gpu_count"], h["runtime"], h["groups"]) for h in json.loads(proc.stdout)["hosts"]}
    assert hosts == {"local": (None, None, "native", []), "rtx-01": ("sm120", 8, "native", ["gpu"]),
                     "rtx-02": ("sm120", 8, "native", ["gpu"])}


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_provision_check_finds_site_yml_and_its_roles_in_the_package(installed, tmp_path):
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    host = start_test_host(key.with_suffix(".pub"), prefix="rk-install")
    try:
        (tmp_path / "hosts.ini").write_text(
            f"[testhosts]\nh1 ansible_host=127.0.0.1 ansible_port={host.port} ansible_user=admin"
            f" ansible_ssh_private_key_file={key}\n[testhosts:vars]\nruntime=docker\ndocker_install_source=distro\n")
        (tmp_path / "known_hosts").write_text(host.known_hosts_line())
        flags = ("-i", "hosts.ini", "--known-hosts", "known_hosts", "--tags", "reprokit")
        dry = reprokit(installed, "--dry", "provision", "-H", "h1", "--check", *flags, cwd=tmp_path)
        site = next(installed["venv"].glob("lib/python3*/site-packages/reprokit/shipped/ansible/site.yml"))
        assert dry.stdout.startswith("would run: ansible-playbook -i ") and f" {site} " in dry.stdout, dry.stdout + dry.stderr
        proc = reprokit(installed, "provision", "-H", "h1", "--check", *flags, cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
        assert "h1: provisioned (check mode, nothing was changed):" in proc.stdout
    finally:
        host.remove()


def test_bash_completion_offers_tasks_kits_and_inventory_hosts(installed, tmp_path):
    script = reprokit(installed, "--print-completion-script", "bash").stdout
    (tmp_path / "inventory.yml").write_text("all:\n  hosts:\n    rtx-01:\n      ansible_host: 10.213.0.11\n")

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        program = (f'{script}\nCOMP_WORDS=({" ".join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n'
                   f'_complete_reprokit reprokit {words[-1]!r}\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n')
        proc = subprocess.run(["bash", "-c", program], cwd=tmp_path, env=installed["env"], capture_output=True,
                              text=True, timeout=120)
        return sorted(proc.stdout.split())

    assert complete("reprokit rep") == ["report", "repro"]
    assert complete("reprokit repro ep8") == ["ep8-crash", "ep8-crash-fixed", "ep8-crash-vllm", "ep8-crash-vllm-fixed"]
    assert complete("reprokit repro ep8-crash -H rt") == ["rtx-01"]
    assert complete("reprokit probe --host ") == ["local", "rtx-01"]
    assert complete("reprokit fix --kit smem") == ["smem-probe"]
    # kit names from every layer: the user's and the project's ./kits too
    user = installed["home"] / ".config" / "reprokit" / "kits"
    user.mkdir(parents=True)
    try:
        (user / "my-user-kit.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text())
        (tmp_path / "kits").mkdir()
        (tmp_path / "kits" / "my-project-kit.yml").write_text((REPO / "kits" / "smem-probe.yml").read_text())
        assert complete("reprokit repro my-") == ["my-project-kit", "my-user-kit"]
    finally:
        shutil.rmtree(installed["home"] / ".config")


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_build_from_an_empty_directory_makes_the_image_from_the_installed_package(installed, tmp_path):
    """The serve image: the Dockerfile and lock of the wheel, the workloads of the installed package; the base is the
    local registry's Debian (--base, as a mirror's copy), pushed back there."""
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = reprokit(installed, "build", "--kit", "ep8-crash", "--image", "serve", "--base", f"SGLANG_IMAGE={BASE_REF}",
                    "--push", REGISTRY, "--json", cwd=empty, timeout=900,
                    env={"REPROKIT_DOCKER": DOCKER})  # the test engine's client, with BuildKit
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (image,) = json.loads(proc.stdout)["images"]
    revision = image["revision"]
    assert re.fullmatch(r"0\.1\.0-[0-9a-f]{12}", revision), revision  # the version and a hash of the context
    assert image["tag"] == f"reprokit/serve:ep8-crash-{revision}"
    assert image["repo_digest"].startswith(f"{REGISTRY}/reprokit/serve@sha256:")
    assert image["bases"] == {"SGLANG_IMAGE": BASE_REF}
    try:
        labels = json.loads(docker("image", "inspect", image["image_id"]).stdout)[0]["Config"]["Labels"]
        assert (labels["org.opencontainers.image.revision"], labels["io.reprokit.kit"]) == (revision, "ep8-crash")
        # The image holds exactly the installed package's workloads (and its __init__.py), byte for byte.
        listing = docker("run", "--rm", image["repo_digest"], "sh", "-c",
                         "cd /opt/reprokit && find reprokit -type f | sort | xargs sha256sum").stdout
        in_image = {path: digest for digest, path in (line.split() for line in listing.splitlines())}
        package = next(installed["venv"].glob("lib/python3*/site-packages/reprokit"))
        shipped = {f"reprokit/{p.relative_to(package).as_posix()}": p for p in [package / "__init__.py",
                   *(package / "workloads").rglob("*")] if p.is_file() and "__pycache__" not in p.parts}
        assert sorted(in_image) == sorted(shipped) and len(shipped) > 20
        assert in_image == {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in shipped.items()}
    finally:
        docker("rmi", "-f", image["tag"], f"{REGISTRY}/{image['tag']}", check=False)
    state = installed["home"] / ".local" / "share" / "reprokit" / "images" / "local.json"
    assert json.loads(state.read_text())["ep8-crash"]["serve"]["reference"] == image["repo_digest"]
    assert list(empty.iterdir()) == [] and not list(installed["venv"].rglob(".reprokit"))  # nothing in the package


def test_new_kit_outside_a_project_goes_to_the_users_layer_and_is_listed_from_there(installed, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    user = installed["home"] / ".config" / "reprokit" / "kits"
    try:
        proc = reprokit(installed, "new-kit", "my-probe", "--kind", "smem-probe", cwd=empty)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"{user}/my-probe.yml: written to the user's kits (step kind smem-probe); next:")
        # the kind needs sglang's pin: the built-in kits give it
        proc = reprokit(installed, "new-kit", "my-moe", "--kind", "triton-moe-configs", "--json", cwd=empty)
        assert json.loads(proc.stdout) == {"kit": "my-moe", "path": str(user / "my-moe.yml"), "kind": "triton-moe-configs",
                                           "source": "user"}, proc.stderr
        listed = {k["kit"]: (k["source"], k["path"]) for k in json.loads(reprokit(installed, "kits", "--json", cwd=empty).stdout)["kits"]}
        assert {name: where for name, where in listed.items() if where[0] != "built-in"} == {
            "my-moe": ("user", str(user / "my-moe.yml")), "my-probe": ("user", str(user / "my-probe.yml"))}
        assert sorted(listed) == sorted([*CHECKOUT_KITS, "my-moe", "my-probe"])
        assert sorted(p.name for p in user.iterdir()) == ["my-moe.yml", "my-probe.yml"]
        assert list(empty.iterdir()) == []
    finally:
        shutil.rmtree(installed["home"] / ".config", ignore_errors=True)


def test_lock_refuses_to_rewrite_the_installed_packages_lock(installed):
    shipped = next(installed["venv"].glob("lib/python3*/site-packages/reprokit/shipped/docker/images.lock.yml")).resolve()
    before = shipped.read_bytes()
    proc = reprokit(installed, "lock")
    assert (proc.returncode, proc.stderr.strip()) == (
        2, f"error: {shipped}: the lock of an installed reprokit is the wheel's and is not rewritten; run"
           " `./dev invoke lock` in a checkout, then `./dev install` again")
    assert shipped.read_bytes() == before


ZSH_SETUPS = {"compctl": "", "compinit": "autoload -Uz compinit && compinit -u; "}  # with and without compsys


@pytest.mark.parametrize("setup", sorted(ZSH_SETUPS))
def test_zsh_completion_offers_tasks_kits_and_hosts_in_a_real_terminal(installed, tmp_path, setup):
    """The README's ``eval "$(reprokit --print-completion-script zsh)"`` in a zsh inside tmux: Tab twice lists the
    candidates on the screen. Invoke's own script lists nothing without compinit (it reads ``$words``)."""
    zsh, tmux = _debian_tool("zsh"), _debian_tool("tmux")
    if not (zsh and tmux):
        pytest.skip("zsh or tmux is missing and cannot be installed here (apt-get install zsh tmux)")
    (tmp_path / "inventory.yml").write_text("all:\n  hosts:\n    rtx-01:\n      ansible_host: 10.213.0.11\n")
    (tmp_path / ".zshrc").write_text(f'{ZSH_SETUPS[setup]}eval "$(reprokit --print-completion-script zsh)"\n')
    socket = f"reprokit-zsh-{os.getpid()}-{setup}"
    env = {key: installed["env"][key] for key in ("PATH", "HOME", "XDG_CACHE_HOME")}
    env.update(ZDOTDIR=str(tmp_path), TERM="xterm")

    def tmux_(*args: str) -> str:
        return subprocess.run([tmux, "-L", socket, *args], check=True, capture_output=True, text=True, env=env,
                              timeout=30).stdout

    def listed(line: str, expected: list[str]) -> list[str]:
        tmux_("send-keys", "-t", "z", "C-u")
        tmux_("send-keys", "-t", "z", line, "Tab")
        time.sleep(3)  # the first Tab inserts the common prefix; the second lists what is left
        tmux_("send-keys", "-t", "z", "Tab")
        for _ in range(60):  # until the listing is on the screen (or 30 s): the lines below the last command line
            screen = tmux_("capture-pane", "-p", "-t", "z").splitlines()
            prompts = [i for i, ln in enumerate(screen) if "reprokit " in ln]
            listing = screen[prompts[-1] + 1:] if prompts else []
            if set(expected) <= {w for ln in listing for w in ln.split()}:
                break
            time.sleep(0.5)
        candidates = [ln for ln in listing if ln.strip()]
        return sorted(w for ln in candidates for w in ln.split())

    tmux_("new-session", "-d", "-s", "z", "-x", "200", "-y", "40", "-c", str(tmp_path), f"{zsh} -i")
    try:
        assert listed("reprokit rep", ["report", "repro"]) == ["report", "repro"]
        assert listed("reprokit repro ep8", ["ep8-crash-vllm-fixed"]) == [
            "ep8-crash", "ep8-crash-fixed", "ep8-crash-vllm", "ep8-crash-vllm-fixed"]
        assert listed("reprokit probe --host ", ["rtx-01"]) == ["local", "rtx-01"]
    finally:
        subprocess.run([tmux, "-L", socket, "kill-server"], capture_output=True, env=env, timeout=30)
