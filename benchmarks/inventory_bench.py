"""What reading an inventory through Ansible costs (reprokit.config.ansible_inventory).

Prints, for a 64-host inventory in each form (one YAML file; INI; a directory with group_vars/ and host_vars/):
  1. a load through `ansible-inventory --list` (median of N, new mtimes each time so the cache cannot answer);
  2. a repeated load in the same process (the per-mtime cache);
  3. the built-in YAML reader, used where ansible-core is not installed;
  4. `invoke hosts --json` end to end, against `invoke kits --json` (the same start-up, no inventory).
Goal (issue 15): Ansible's parser without making a CLI call noticeably slower (< 2 s per command).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.config import ansible_inventory  # noqa: E402
from reprokit.config.inventory import _load_yaml_inventory  # noqa: E402
from reprokit.hosts.axes import load_inventory  # noqa: E402

HOSTS = 64


def write_forms(root: Path) -> dict[str, Path]:
    yaml_file = root / "inventory.yml"
    lines = ["all:", "  vars:", "    ansible_user: ops", "  children:", "    blackwell:", "      vars:",
             "        gpu_arch: sm120", "        gpu_count: 8", "      hosts:"]
    lines += [f"        rtx{i:02d}:\n          ansible_host: 10.1.0.{i}" for i in range(HOSTS)]
    yaml_file.write_text("\n".join(lines) + "\n")
    ini = root / "hosts.ini"
    ini.write_text("[blackwell]\n" + "".join(f"rtx{i:02d} ansible_host=10.1.0.{i}\n" for i in range(HOSTS))
                   + "[blackwell:vars]\ngpu_arch=sm120\ngpu_count=8\n[all:vars]\nansible_user=ops\n")
    directory = root / "inv"
    (directory / "group_vars").mkdir(parents=True)
    (directory / "host_vars").mkdir()
    (directory / "hosts").write_text("[blackwell]\n" + "".join(f"rtx{i:02d}\n" for i in range(HOSTS)))
    (directory / "group_vars" / "blackwell.yml").write_text("gpu_arch: sm120\ngpu_count: 8\n")
    for i in range(HOSTS):
        (directory / "host_vars" / f"rtx{i:02d}.yml").write_text(f"ansible_host: 10.1.0.{i}\n")
    return {"YAML file": yaml_file, "INI file": ini, "directory + group_vars/host_vars": directory}


def timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def touch_all(path: Path) -> None:
    for p in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.utime(p, None)
        time.sleep(0.001)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        forms = write_forms(Path(tmp))
        print(f"{HOSTS} hosts; median of {args.repeat}; this machine's load at the time applies")
        for name, path in forms.items():
            def cold(path=path):
                touch_all(path)
                assert len(load_inventory(path).hosts) == HOSTS + 1

            cold_s = timed(cold, args.repeat)
            cached_s = timed(lambda path=path: load_inventory(path), args.repeat)
            print(f"  {name:34s} ansible-inventory {cold_s:6.3f} s   cached {cached_s * 1000:7.2f} ms")
        builtin_s = timed(lambda: _load_yaml_inventory(forms["YAML file"]), args.repeat)
        print(f"  {'built-in YAML reader (no ansible)':34s} {builtin_s * 1000:7.2f} ms")
        env = dict(os.environ)

        def cli():
            subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "hosts", "--json", "-i",
                            str(forms["INI file"])], check=True, capture_output=True, env=env)

        def baseline():
            subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "kits", "--json"], check=True,
                           capture_output=True, env=env)

        cli_s, base_s = timed(cli, args.repeat), timed(baseline, args.repeat)
        print(f"  invoke hosts --json (INI, end to end): {cli_s:.3f} s; invoke kits --json (no inventory): {base_s:.3f} s")
        print(f"  ansible-inventory version: {subprocess.run(['ansible-inventory', '--version'], capture_output=True, text=True).stdout.split(chr(10))[0]}"
              f"; cache entries now {len(ansible_inventory._cache)}")


if __name__ == "__main__":
    main()
