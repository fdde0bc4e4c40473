"""The masker's matches mapped back through line breaks, against a plain reference: every secret split anywhere by
``\\n`` or ``\\r\\n`` is masked whole, the bytes around it kept, at every read size (a secret across two reads)."""

from __future__ import annotations

import itertools

import pytest

from reprokit.output.secrets import Redactor

SECRET = "hf_Planted/0123+456789=abcdefXYZ"


@pytest.mark.parametrize("breaks", [b"\n", b"\r\n"])
def test_a_secret_split_at_any_place_is_masked_whole_and_nothing_else(tmp_path, breaks):
    raw = SECRET.encode()
    redactor = Redactor([SECRET])
    for cut in range(1, len(raw)):
        text = b"before " + raw[:cut] + breaks + raw[cut:] + b" after\nline two " + raw + b"\n"
        assert redactor.bytes(text) == b"before *** after\nline two ***\n", cut
    path = tmp_path / "artifact"
    lines = [raw[:cut] + b"\n" + raw[cut:] + b" x\r\n" for cut in range(1, len(raw))]
    for chunk_bytes in (1, 7, 64, 1 << 20):
        path.write_bytes(b"".join(lines))
        assert redactor.file(path, chunk_bytes=chunk_bytes) is True
        assert path.read_bytes() == b"*** x\r\n" * len(lines), chunk_bytes


def test_a_secrets_pieces_are_left_as_they_are(tmp_path):
    """Data made of the start of every variant, one per line, never whole: nothing to mask, the file untouched."""
    raw = SECRET.encode()
    pieces = b"".join(raw[:n] + b"\n" for n in range(1, len(raw))) * 50
    path = tmp_path / "artifact"
    path.write_bytes(pieces)
    assert Redactor([SECRET]).file(path, chunk_bytes=1000) is False and path.read_bytes() == pieces


def test_many_secrets_among_many_lines_take_either_way_back_to_the_same_bytes():
    raw = SECRET.encode()
    sparse = b"\n".join(itertools.repeat(b"ab", 200)) + raw[:5] + b"\n" + raw[5:] + b"\n" + b"cd\n" * 200
    dense = (raw[:9] + b"\r\n" + raw[9:] + b"|") * 40
    redactor = Redactor([SECRET])
    assert redactor.bytes(sparse) == b"\n".join(itertools.repeat(b"ab", 200)) + b"***\n" + b"cd\n" * 200
    assert redactor.bytes(dense) == b"***|" * 40
