"""Every pattern of the table against its real example line, with Python's re and with grep -E."""

import re
import shutil
import subprocess

import pytest

from reprokit.triage import formats
from reprokit.triage.parser import parse_lines

LINE_PATTERNS = [p for p in formats.PATTERNS if p.family != "exception_text"]


@pytest.mark.parametrize("pattern", LINE_PATTERNS, ids=lambda p: p.kind)
def test_example_line_parses_to_its_kind(pattern):
    events, stats = parse_lines([pattern.example])
    assert [e.kind for e in events] == [pattern.kind]
    assert stats.unknown_lines == 0


@pytest.mark.parametrize("pattern", formats.PATTERNS, ids=lambda p: p.kind)
def test_example_matches_with_python_re(pattern):
    assert pattern.compiled.search(pattern.example) is not None


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep is not installed")
@pytest.mark.parametrize("pattern", formats.PATTERNS, ids=lambda p: p.kind)
def test_example_matches_with_grep_extended_regex(pattern, tmp_path):
    """The benchmark's grep -cE runs these very regexes: they must mean the same to POSIX ERE."""
    log = tmp_path / "example.log"
    log.write_text(pattern.example + "\nan unrelated line\n", encoding="utf-8")
    done = subprocess.run(["grep", "-cE", pattern.regex, str(log)], capture_output=True, text=True,
                          env={"LC_ALL": "C"}, check=False)
    assert done.stdout.strip() == "1", done.stderr


@pytest.mark.parametrize("pattern", formats.SERVER_PATTERNS, ids=lambda p: p.kind)
def test_server_pattern_matches_start_with_its_lead(pattern):
    """The parser only looks at sglang lines whose message starts with a lead: no match may escape it."""
    events, _ = parse_lines([pattern.example])
    message = events[0].text.split("\n", 1)[0]
    assert pattern.compiled.match(message) is not None
    assert re.match(pattern.lead, message) is not None


@pytest.mark.parametrize("fmt", formats.LINE_FORMATS + formats.CONTINUATION_FORMATS + formats.WRAPPER_FORMATS,
                         ids=lambda f: f.name)
def test_line_format_example_is_recognised(fmt):
    assert fmt.head(fmt.example) is not None


def test_kinds_are_unique_and_families_partition_the_table():
    kinds = [p.kind for p in formats.PATTERNS]
    assert len(kinds) == len(set(kinds))
    families = (formats.SERVER_PATTERNS, formats.AUTOTUNER_PATTERNS, formats.PROGRESS_PATTERNS, formats.ERROR_PATTERNS,
                formats.EXCEPTION_TEXT_PATTERNS)
    assert sum(len(f) for f in families) == len(formats.PATTERNS)


def test_a_pattern_with_wrong_field_names_is_refused():
    with pytest.raises(ValueError, match="2 groups but 1 field names"):
        formats.LogPattern("bad", r"(a)(b)", ("a",), "ab", "test")
    with pytest.raises(ValueError, match="needs a lead"):
        formats.LogPattern("bad", r"a", (), "a", "test")


def test_server_patterns_left_out_of_the_fast_scan_are_never_on_sglang_lines():
    """vLLM-only patterns are not in the sglang trigger: their lines always carry vLLM's own prefix."""
    from reprokit.triage.parser import _SCAN, _SGLANG_SHAPED_TEXT

    left_out = [p for p in formats.SERVER_PATTERNS if not p.on_sglang_lines]
    assert {p.kind for p in left_out} == {"engine_core_failed", "vllm_server_starting", "vllm_graph_capture_finished",
                                          "vllm_engine_initialized", "vllm_engine_stats", "vllm_request",
                                          "triton_server_started", "ray_serve_app_ready", "vllm_http_routes",
                                          "tgi_router_connected", "tgi_waiting_for_shard", "tgi_shard_failed_to_start",
                                          "tgi_shard_signaled", "stop_requested"}
    for pattern in left_out:
        assert _SGLANG_SHAPED_TEXT.match(pattern.example) is None
    for pattern in formats.SERVER_PATTERNS:
        if pattern.on_sglang_lines:
            message = parse_lines([pattern.example])[0][0].text
            assert _SCAN.trigger.search(("] " + message).encode()) is not None, pattern.kind
