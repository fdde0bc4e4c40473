from pathlib import Path

import pytest

from reprokit.config.yamlfile import dotted, load_yaml
from reprokit.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "doc.yml"
    path.write_text(text)
    return path


def test_lines_are_recorded_for_keys_and_items(tmp_path):
    doc = load_yaml(write(tmp_path, "a:\n  b: 1\n  c:\n    - x\n    - y\nd: 2\n"))
    assert doc.data == {"a": {"b": 1, "c": ["x", "y"]}, "d": 2}
    assert doc.lines[("a", "b")] == 2
    assert doc.lines[("a", "c", 1)] == 5
    assert doc.lines[("d",)] == 6
    assert doc.line_of(("a", "c", 1, "deeper")) == 5


def test_duplicate_key_names_both_lines(tmp_path):
    path = write(tmp_path, "all:\n  hosts:\n    gpu1: {}\n    gpu1: {}\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    assert str(err.value) == f"{path}:4: duplicate key 'all.hosts.gpu1' (first defined on line 3); keep one of them"


def test_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "kit: x\nsteps: [a, b\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    message = str(err.value)
    assert message.startswith(f"{path}:3: YAML syntax error: expected ',' or ']'")
    assert "\n" not in message


def test_missing_file_and_binary_file(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.yml: file not found"):
        load_yaml(tmp_path / "nope.yml")
    bad = tmp_path / "bin.yml"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match=r"bin\.yml: not UTF-8 text"):
        load_yaml(bad)


def test_merge_keys_are_refused(tmp_path):
    path = write(tmp_path, "base: &b {x: 1}\nother:\n  <<: *b\n")
    with pytest.raises(ConfigError, match=r"doc\.yml:3: YAML merge keys"):
        load_yaml(path)


def test_dotted():
    assert dotted(("steps", 2, "with", "tp")) == "steps[2].with.tp"
    assert dotted(()) == "(document)"


def test_an_inventory_at_the_size_cap_fails_small_naming_the_file_and_line(tmp_path):
    """An 8 MiB inventory of hosts (no alias in it) is refused by its value count before any node is built."""
    import tracemalloc

    from reprokit.config.yamlfile import MAX_FILE_BYTES, MAX_NODES

    host = "    gpu{:06d}: {{ansible_host: 10.0.0.1, gpu_arch: sm_120}}\n"
    count = (MAX_FILE_BYTES - 20) // len(host.format(0))
    path = write(tmp_path, "all:\n  hosts:\n" + "".join(host.format(i) for i in range(count)))
    assert MAX_FILE_BYTES - 100 < path.stat().st_size <= MAX_FILE_BYTES
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as err:
            load_yaml(path)
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # values: the document, all, hosts, then per host its mapping and two scalars; the 100001st is on host 33332's line
    assert str(err.value) == (f"{path}:{3 + (MAX_NODES - 2) // 3}: more than {MAX_NODES} values in one file; a kit or"
                              " inventory holds far fewer: split it or remove what is not needed")
    assert peak_bytes < 64 << 20  # composed first, the same file took 518 MB


def test_the_value_cap_counts_values_not_keys(tmp_path):
    from reprokit.config.yamlfile import MAX_NODES

    # the document, a, and MAX_NODES - 1 values: one past the cap, on the last line (were keys counted, half-way)
    over = tmp_path / "over.yml"
    over.write_text("a:\n" + "".join(f"  k{i}: {i}\n" for i in range(MAX_NODES - 1)))
    with pytest.raises(ConfigError, match=rf"over\.yml:{MAX_NODES}: more than {MAX_NODES} values in one file"):
        load_yaml(over)
