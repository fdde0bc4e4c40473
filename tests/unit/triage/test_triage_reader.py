"""The reader: line ends, colour codes, the line cap, gzip (whole, cut, concatenated), bad paths."""

import gzip
import io
import random

import pytest

from reprokit.errors import ConfigError
from reprokit.triage.reader import ReadStats, _GzipReader, iter_regions, open_log


def read_all(data: bytes, chunk_bytes: int = 1 << 20, max_line_bytes: int = 1 << 20) -> tuple[bytes, ReadStats]:
    stats = ReadStats()
    regions = iter_regions(io.BytesIO(data), stats, chunk_bytes=chunk_bytes, max_line_bytes=max_line_bytes)
    return b"".join(buffer[start:end] for buffer, start, end in regions), stats


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 7, 1 << 20])
def test_crlf_and_lone_cr_become_newlines_across_chunk_boundaries(chunk_bytes):
    text, stats = read_all(b"a\r\nb\rc\n\r\nd", chunk_bytes=chunk_bytes, max_line_bytes=max(64, chunk_bytes))
    assert text == b"a\nb\nc\n\nd\n"
    assert stats.ends_mid_line is True


def test_ansi_colour_codes_are_removed():
    text, _ = read_all(b"\x1b[32m[02-19 11:00:05 TP0]\x1b[0m Load weight end.\n\x1b[1;36m(Worker pid=1)\x1b[0;0m x\n")
    assert text == b"[02-19 11:00:05 TP0] Load weight end.\n(Worker pid=1) x\n"


def test_a_line_over_the_cap_keeps_its_head_and_is_counted():
    data = b"short\n" + b"x" * 100 + b"\nafter\n"
    text, stats = read_all(data, chunk_bytes=8, max_line_bytes=16)
    assert text == b"short\n" + b"x" * 16 + b"\nafter\n"
    assert (stats.truncated_lines, stats.dropped_bytes) == (1, 84)


def test_a_line_over_the_cap_at_the_end_of_the_file():
    text, stats = read_all(b"x" * 40, chunk_bytes=8, max_line_bytes=16)
    assert text == b"x" * 16 + b"\n"
    assert (stats.truncated_lines, stats.dropped_bytes) == (1, 24)


def test_chunk_larger_than_the_cap_is_refused():
    with pytest.raises(ValueError, match="must not exceed"):
        list(iter_regions(io.BytesIO(b""), ReadStats(), chunk_bytes=32, max_line_bytes=16))


def test_invalid_utf8_and_nul_bytes_pass_through_as_bytes():
    data = b"\xff\xfe\x00ok\n\x00\n"
    text, stats = read_all(data)
    assert text == data
    assert stats.ends_mid_line is False


def test_gzip_is_recognised_by_its_magic_bytes(tmp_path):
    path = tmp_path / "server.log"  # no .gz suffix: the bytes decide
    path.write_bytes(gzip.compress(b"one\ntwo\n"))
    with open_log(path) as (stream, is_gzip):
        assert is_gzip is True
        stats = ReadStats()
        assert [b[s:e] for b, s, e in iter_regions(stream, stats)] == [b"one\ntwo\n"]


def test_concatenated_gzip_members_are_read_one_after_another():
    reader = _GzipReader(io.BytesIO(gzip.compress(b"a\n") + gzip.compress(b"b\n") + b"\x00" * 8))
    assert reader.read(100) + reader.read(100) == b"a\nb\n"


def test_a_cut_gzip_file_yields_what_decompressed_then_reports_the_cut(tmp_path):
    rng = random.Random(0)
    lines = b"".join(b"line %d %f\n" % (i, rng.random()) for i in range(50_000))
    compressed = gzip.compress(lines)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    with open_log(path) as (stream, _):
        stats = ReadStats()
        text = b"".join(b[s:e] for b, s, e in iter_regions(stream, stats))
    assert len(text) > len(lines) // 3
    assert lines.startswith(text[: text.rfind(b"\n", 0, len(text) - 1) + 1])
    assert stats.read_error is not None and "cut short" in stats.read_error


def test_a_missing_file_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.log: cannot read log file \(No such file or directory\)"):
        with open_log(tmp_path / "nope.log"):
            pass


def test_a_directory_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        with open_log(tmp_path):
            pass
