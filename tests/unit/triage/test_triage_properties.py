"""Properties: whatever the bytes, the parser never raises, counts every line, and does not depend on
how the file is cut into reads; interleaved ranks are counted exactly; memory stays bounded."""

import random
import re
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from triage_logs import RUNNER, lines_bytes, parse_bytes, sglang, skip_record

from reprokit.triage import formats, triage_files

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
SGLANG_SHAPED = re.compile(rb"\[(?:[0-9]{4}-|[0-9][0-9][-:])")  # '[2026-', '[02-19 ', '[10:05:' (not '[11/21/2024-')
EXAMPLES = [p.example for p in formats.PATTERNS]
EXAMPLES += [f.example for f in formats.LINE_FORMATS + formats.CONTINUATION_FORMATS]
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# pieces of real lines, glued with noise: exercises the formats, not only random bytes
log_pieces = st.one_of(
    st.sampled_from(EXAMPLES).map(lambda s: s.encode()),
    st.binary(max_size=40),
    st.sampled_from([b"\n", b"\r", b"\r\n", b"\x00", b"\x1b[32m", b"\x1b[0m", b"\xff\xfe", b"[2", b"] ",
                     b"(Worker_TP1 pid=7) "]),
)
log_bytes = st.lists(log_pieces, max_size=40).map(b"".join)


def reference_lines(data: bytes) -> list[bytes]:
    """The lines as the reader promises them: CR and CRLF are newlines, ANSI removed, a last unterminated line kept."""
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [ANSI.sub(b"", line) for line in lines]


@PROPERTY_SETTINGS
@given(log_bytes)
def test_never_raises_and_counts_every_line(data):
    events, stats = parse_bytes(data)
    lines = reference_lines(data)
    assert stats.lines == len(lines)
    assert sum(stats.lines_by_format.values()) == stats.lines
    ray = formats.LINE_FORMATS_BY_NAME["ray_glog"].compiled  # sglang-shaped, but read as Ray's logger
    assert stats.lines_by_format["sglang"] == sum(
        1 for line in lines if SGLANG_SHAPED.match(line) and not ray.match(line.decode("utf-8", "replace")))
    assert 0 <= stats.unknown_lines <= stats.lines
    assert all(1 <= e.line_no <= stats.lines for e in events)


@PROPERTY_SETTINGS
@given(log_bytes, st.sampled_from([1, 2, 5, 64, 300]))
def test_the_result_does_not_depend_on_how_the_file_is_read(data, chunk_bytes):
    whole_events, whole = parse_bytes(data, chunk_bytes=512, max_line_bytes=512)
    cut_events, cut = parse_bytes(data, chunk_bytes=chunk_bytes, max_line_bytes=512)
    def summary(events):
        return [(e.kind, e.line_no, e.rank, e.at, e.text, e.continuation_lines) for e in events]

    assert summary(cut_events) == summary(whole_events)
    assert (cut.lines, cut.lines_by_format, cut.read.truncated_lines) == (
        whole.lines, whole.lines_by_format, whole.read.truncated_lines)


@PROPERTY_SETTINGS
@given(st.lists(st.sampled_from(EXAMPLES), min_size=1, max_size=20), st.data())
def test_noise_of_colour_codes_and_line_ends_changes_no_event(lines, data):
    clean_events, _ = parse_bytes(lines_bytes(lines))
    colours, ends = st.sampled_from([b"", b"\x1b[1;36m", b"\x1b[0m"]), st.sampled_from([b"\n", b"\r\n"])
    noisy = b"".join(data.draw(colours) + line.encode() + data.draw(ends) for line in lines)
    noisy_events, _ = parse_bytes(noisy)
    seen = [(e.kind, e.line_no, e.fields) for e in noisy_events]
    assert seen == [(e.kind, e.line_no, e.fields) for e in clean_events]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 8), st.lists(st.integers(0, 23), min_size=1, max_size=6, unique=True), st.randoms())
def test_interleaved_ranks_give_exact_grouped_counts(tmp_path_factory, ranks, tactics, rng):
    """vLLM workers write their records whole; the order between workers is anyone's."""
    records = [(rank, tactic) for rank in range(ranks) for tactic in tactics]
    rng.shuffle(records)
    lines = []
    for rank, tactic in records:
        prefix = f"(Worker_DP{rank}_EP{rank} pid={100 + rank}) "
        lines += [prefix + line for line in skip_record(tactic, stage=1 + tactic % 2)]
        if rng.random() < 0.3:
            lines.append(sglang("Decode batch, #running-req: 1", "TP0"))
    path = tmp_path_factory.mktemp("ranks") / "vllm.log"
    path.write_bytes(lines_bytes(lines))
    rows = triage_files([path]).to_json()["autotune_failures"]
    assert sorted((row["tactic"], row["count"], tuple(row["ranks"])) for row in rows) == sorted(
        (t, ranks, tuple(f"DP{r} EP{r}" for r in range(ranks))) for t in tactics)
    assert all(row["unattributed"] == 0 for row in rows)


def test_ranks_interleaved_line_by_line_in_sglang_are_counted_unattributed(tmp_path):
    """sglang's FlashInfer lines carry no rank: the counts stay exact, the ranks stay unknown."""
    rng = random.Random(7)
    records = [skip_record(t) for t in (2, 3) for _ in range(8)]
    lines = [sglang("Prefill batch, #new-seq: 1", f"TP{r} EP{r}") for r in range(8)]
    for record in rng.sample(records, len(records)):
        lines += record + [sglang("Decode batch, #running-req: 3", f"TP{rng.randrange(8)} EP0")]
    path = tmp_path / "sglang.log"
    path.write_bytes(lines_bytes(lines))
    rows = triage_files([path]).to_json()["autotune_failures"]
    assert [(r["tactic"], r["count"], r["unattributed"], r["ranks"]) for r in rows] == [(2, 8, 8, []), (3, 8, 8, [])]


def test_one_file_per_rank_attributes_its_failures_to_that_rank(tmp_path):
    paths = []
    for rank in range(3):
        path = tmp_path / f"rank{rank}.log"
        path.write_bytes(lines_bytes([sglang("Running FlashInfer autotune...", f"TP{rank} EP{rank}")] + skip_record(2)))
        paths.append(path)
    rows = triage_files(paths).to_json()["autotune_failures"]
    assert [(r["count"], r["unattributed"], r["ranks"]) for r in rows] == [(3, 0, ["TP0 EP0", "TP1 EP1", "TP2 EP2"])]


def test_a_10_mb_line_is_truncated_in_bounded_memory(tmp_path):
    path = tmp_path / "huge.log"
    path.write_bytes(b"x" * (10 * 2**20) + b"\n" + lines_bytes([sglang("The server is fired up and ready to roll!")]))
    tracemalloc.start()
    report = triage_files([path]).to_json()
    peak_bytes = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak_bytes < 8 * 2**20
    assert (report["counts"]["lines"], report["counts"]["truncated_lines"], report["verdict"]) == (2, 1, "READY")


def test_a_file_cut_anywhere_is_still_parsed(tmp_path):
    """Cut the fatal fixture at every 97th byte: the verdict only ever moves from NOT_READY to FATAL."""
    from test_triage_fixtures import FATAL

    data = FATAL.read_bytes()
    fatal_from = data.index(b"Scheduler hit an exception")
    path = tmp_path / "cut.log"
    for cut in range(0, len(data) + 1, 97):
        path.write_bytes(data[:cut])
        report = triage_files([path]).to_json()
        assert report["verdict"] == ("FATAL" if cut > fatal_from + 60 else report["verdict"])
        assert report["verdict"] in ("FATAL", "NOT_READY", "INCONCLUSIVE")
        if report["fatal"] and cut < len(data) - 200:
            assert report["fatal"]["ended_by_eof"] is True


def test_runner_repr_and_tuple_tactics_are_read(tmp_path):
    tuple_tactic = skip_record(0)[0].replace(f"{RUNNER} 0,", f"{RUNNER} (128, 1, 2),")
    events, _ = parse_bytes(lines_bytes([tuple_tactic]))
    assert events[0].fields["tactic"] == "(128, 1, 2)"
