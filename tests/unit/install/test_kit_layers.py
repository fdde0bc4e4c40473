"""Kits in layers (built-in < user < ./kits < -K), their models, where records go, and what completion offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprokit.cli import completion
from reprokit.config import layers
from reprokit.config.kit import find_kit
from reprokit.errors import ConfigError
from reprokit.plan.planner import load_model_config

REPO = Path(__file__).resolve().parents[3]
SMEM = (REPO / "kits" / "smem-probe.yml").read_text()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def test_a_later_layer_replaces_a_kit_and_says_where_it_came_from(home):
    user = home / "config" / "reprokit" / "kits"
    user.mkdir(parents=True)
    (user / "smem-probe.yml").write_text(SMEM)
    assert {name: source for name, (_, source) in layers.kit_path().kits().items()} == {
        name: "user" if name == "smem-probe" else "built-in" for name in sorted(p.stem for p in (REPO / "kits").glob("*.yml"))}
    (home / "work" / "kits").mkdir()
    (home / "work" / "kits" / "smem-probe.yml").write_text(SMEM)
    assert find_kit("smem-probe", layers.kit_path())[1] == "project"
    given = home / "given"
    given.mkdir()
    (given / "smem-probe.yml").write_text(SMEM)
    assert find_kit("smem-probe", layers.kit_path(None, given)) == (given / "smem-probe.yml", "-K")


def test_models_come_from_the_layers_and_an_unknown_one_lists_them(home):
    models = home / "work" / "kits" / "models"
    models.mkdir(parents=True)
    (models / "tiny.yml").write_text("hidden_size: 64\n")
    assert load_model_config("tiny", layers.kit_path()) == {"hidden_size": 64}
    assert load_model_config("glm-5", layers.kit_path())["hidden_size"] > 0  # the built-in one
    with pytest.raises(ConfigError, match=r"kits/models/nope.yml: unknown model 'nope'; known models: glm-5, tiny$"):
        load_model_config("nope", layers.kit_path())


def test_a_new_kit_goes_to_the_user_layer_outside_a_project_and_to_kits_in_one(home):
    """The layers' top, where new-kit writes: -K when given, else the project's ./kits, else the user's layer."""
    from reprokit.commands.kits import write_new_kit

    user = home / "config" / "reprokit" / "kits"
    assert (layers.kit_path().top, layers.kit_path().top_source) == (user, "user")
    assert write_new_kit("my-probe", "smem-probe", layers.kit_path(), []) == 0
    assert find_kit("my-probe", layers.kit_path()) == (user / "my-probe.yml", "user")
    assert list((home / "work").iterdir()) == []
    (home / "work" / "inventory.yml").write_text("all: {}\n")  # a project: its ./kits, made on the first write
    assert (layers.kit_path().top, layers.kit_path().top_source) == (Path("kits"), "project")
    assert (layers.kit_path(None, home / "given").top, layers.kit_path(None, home / "given").top_source) == (
        home / "given", "-K")


def test_the_images_built_are_remembered_in_the_checkout_or_the_users_data_dir(home, monkeypatch):
    assert layers.images_state_dir() == REPO / ".reprokit" / "images"  # this checkout (not installed)
    monkeypatch.setattr(layers, "SHIPPED_DIR", REPO)  # as if installed: a shipped/ with kits/ next to the package
    assert layers.is_installed() and layers.images_state_dir() == home / "data" / "reprokit" / "images"


def test_records_go_to_runs_in_a_project_and_to_the_data_dir_elsewhere(home):
    assert layers.default_runs_dir() == home / "data" / "reprokit" / "runs"
    (home / "work" / "inventory.yml").write_text("all: {}\n")
    assert layers.default_runs_dir() == Path("runs")


def test_completion_offers_kits_hosts_and_leaves_the_rest_to_invoke(home):
    (home / "work" / "inventory.yml").write_text("all:\n  children:\n    gpu:\n      hosts:\n        rtx-01: {}\n")
    tasks = ["repro", "report", "probe", "fix"]
    assert "ep8-crash" in completion.candidates(["repro", "ep"], tasks, "inventory.yml")
    assert completion.candidates(["repro"], tasks, "inventory.yml")[0] == "repro"
    assert completion.candidates(["probe", "-H"], tasks, "inventory.yml") == ["local", "rtx-01"]
    assert completion.candidates(["probe", "-g", "g"], tasks, "inventory.yml") == ["all", "gpu"]
    assert completion.candidates(["rep"], tasks, "inventory.yml") is None  # a task name: Invoke's
    assert completion.candidates(["repro", "ep8-crash", "--ho"], tasks, "inventory.yml") is None  # a flag: Invoke's
    # zsh's script passes the empty word being completed: after a whole value, the host list is not offered again
    assert completion.candidates(["probe", "-H", ""], tasks, "inventory.yml") == ["local", "rtx-01"]
    assert completion.candidates(["probe", "-H", "local", ""], tasks, "inventory.yml") is None


def test_the_completion_words_keep_an_empty_last_word_and_drop_the_program_name():
    from reprokit.cli.program import _completion_tokens, zsh_completion_script

    assert _completion_tokens("reprokit probe -H ", ["reprokit"]) == ["probe", "-H", ""]
    assert _completion_tokens("/x/bin/reprokit repro ep", ["reprokit"]) == ["repro", "ep"]
    assert _completion_tokens("repro 'ep", ["reprokit"]) == ["repro", "'ep"]  # an open quote
    script = zsh_completion_script(["reprokit", "rk"])
    assert "compctl -K _complete_reprokit + -f reprokit rk" in script and "@" not in script.replace("${line[@]}", "")


def test_the_workloads_cache_follows_xdg_cache_home_unless_reprokit_cache_is_set(home, monkeypatch):
    from reprokit.workloads.static_smem.wheel import default_cache_dir

    monkeypatch.delenv("REPROKIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    assert default_cache_dir() == home / "cache" / "reprokit"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # XDG: a relative path is ignored
    monkeypatch.setenv("HOME", str(home))
    assert default_cache_dir() == home / ".cache" / "reprokit"
    monkeypatch.setenv("REPROKIT_CACHE", str(home / "given"))
    assert default_cache_dir() == home / "given"
