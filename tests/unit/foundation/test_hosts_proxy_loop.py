"""`invoke hosts` says a proxy_jump loop once (before: listed without a word; a run then failed at connect time)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_invoke


def test_invoke_hosts_warns_of_a_proxy_jump_loop(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yml"
    inventory.write_text("all:\n  hosts:\n    a:\n      ansible_host: 10.213.0.11\n      proxy_jump: b\n"
                         "    b:\n      ansible_host: 10.213.0.12\n      proxy_jump: a\n"
                         "    c:\n      ansible_host: 10.213.0.13\n")
    done = run_invoke("hosts", "--inventory", str(inventory))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"warning: {inventory}:3: proxy_jump loop through a -> b -> a; fix proxy_jump",
        f"warning: {inventory}:6: proxy_jump loop through b -> a -> b; fix proxy_jump"]
    assert "c" in done.stdout
