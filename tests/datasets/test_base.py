import gzip
import hashlib
import io
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairot.datasets import _base, get_data_home
from fairot.datasets._adult import ADULT_TEST, ADULT_TRAIN
from fairot.datasets._base import RemoteFile, fetch_raw_file, one_hot_standardize, read_raw_bytes

from .datasets_raw import SHARED, SHIPPED, SOURCES_SHA256, SUBDIRS, shipped_bytes

# The real downloader, saved before the autouse fixture replaces it.
REAL_DOWNLOAD = _base._download


@pytest.mark.parametrize("name", sorted(SOURCES_SHA256))
def test_shipped_copy_matches_sources_checksum(name):
    assert hashlib.sha256(shipped_bytes(name)).hexdigest() == SOURCES_SHA256[name]


@pytest.mark.parametrize("name", sorted(SOURCES_SHA256))
def test_shipped_copy_is_byte_identical_to_shared_copy(name):
    shared = SHARED / SUBDIRS[name] / name
    if not shared.is_file():
        pytest.skip("../shared/data is not beside this checkout")
    assert shipped_bytes(name) == shared.read_bytes()


def test_get_data_home_order(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIROT_DATA_HOME", str(tmp_path / "env"))
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    assert get_data_home() == tmp_path / "env"
    monkeypatch.delenv("FAIROT_DATA_HOME")
    assert get_data_home() == Path.home() / "fairot_data"
    assert get_data_home("~/x") == Path.home() / "x"
    assert not (tmp_path / "explicit").exists()  # looking up never creates the folder


def test_shipped_copy_used_when_data_home_is_empty(data_home):
    path = fetch_raw_file(ADULT_TRAIN, download_if_missing=False)
    assert path == SHIPPED / "adult.data.gz"
    assert read_raw_bytes(path, ADULT_TRAIN) == shipped_bytes("adult.data")


def test_local_copy_takes_precedence_over_shipped(data_home):
    local = data_home / "adult" / "adult.test"
    local.parent.mkdir(parents=True)
    local.write_bytes(shipped_bytes("adult.test"))
    path = fetch_raw_file(ADULT_TEST)
    assert path == local
    assert read_raw_bytes(path, ADULT_TEST) == shipped_bytes("adult.test")


def test_local_copy_with_other_checksum_warns(data_home):
    local = data_home / "adult" / "adult.test"
    local.parent.mkdir(parents=True)
    local.write_bytes(b"|1x3 Cross validator\n")
    with pytest.warns(UserWarning, match="differs from the publisher's release"):
        read_raw_bytes(fetch_raw_file(ADULT_TEST), ADULT_TEST)


def test_damaged_shipped_copy_raises(tmp_path):
    damaged = tmp_path / "adult.data.gz"
    damaged.write_bytes(gzip.compress(b"not adult"))
    with pytest.raises(OSError, match="installation is damaged"):
        read_raw_bytes(damaged, ADULT_TRAIN)


UNSHIPPED = RemoteFile(
    name="tiny.csv",
    subdir="tiny",
    url="https://example.invalid/tiny.csv",
    sha256=hashlib.sha256(b"a,b\n1,2\n").hexdigest(),
)


def test_missing_file_without_download_names_file_and_folder(data_home):
    with pytest.raises(FileNotFoundError) as info:
        fetch_raw_file(UNSHIPPED, download_if_missing=False)
    message = str(info.value)
    assert "'tiny.csv'" in message
    assert str(data_home / "tiny") in message
    assert UNSHIPPED.url in message


def test_missing_file_is_downloaded_into_data_home(data_home, monkeypatch):
    calls = []

    def fake_download(url, destination):
        calls.append((url, destination))
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(b"a,b\n1,2\n")

    monkeypatch.setattr(_base, "_download", fake_download)
    path = fetch_raw_file(UNSHIPPED)
    assert calls == [(UNSHIPPED.url, data_home / "tiny" / "tiny.csv")]
    assert path.read_bytes() == b"a,b\n1,2\n"
    # Second call: found locally, no download.
    assert fetch_raw_file(UNSHIPPED) == path
    assert len(calls) == 1


def test_offline_download_raises_clear_oserror(data_home, monkeypatch):
    def offline(url, destination):
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(_base, "_download", offline)
    with pytest.raises(OSError, match="Could not download 'tiny.csv'") as info:
        fetch_raw_file(UNSHIPPED)
    assert str(data_home / "tiny") in str(info.value)


def test_download_with_wrong_checksum_is_discarded(data_home, monkeypatch):
    def corrupt(url, destination):
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(b"something else")

    monkeypatch.setattr(_base, "_download", corrupt)
    with pytest.raises(OSError, match="SHA-256"):
        fetch_raw_file(UNSHIPPED)
    assert not (data_home / "tiny" / "tiny.csv").exists()


def test_download_of_zip_archive_extracts_member(data_home, monkeypatch):
    archive_file = RemoteFile(
        name="inner.csv",
        subdir="zipped",
        url="https://example.invalid/outer.zip",
        archive_member="inner.csv",
    )

    def zip_download(url, destination):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("inner.csv", "x\n1\n")
            archive.writestr("readme.txt", "ignored")
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(buffer.getvalue())

    monkeypatch.setattr(_base, "_download", zip_download)
    path = fetch_raw_file(archive_file)
    assert path == data_home / "zipped" / "inner.csv"
    assert path.read_text() == "x\n1\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["inner.csv"]


def test_real_download_function_is_atomic(tmp_path, monkeypatch):
    def failing_urlopen(url, timeout):
        raise urllib.error.URLError("offline")

    monkeypatch.setattr(_base.urllib.request, "urlopen", failing_urlopen)
    destination = tmp_path / "sub" / "file.csv"
    with pytest.raises(OSError):
        REAL_DOWNLOAD("https://example.invalid/file.csv", destination)
    assert list((tmp_path / "sub").iterdir()) == []


def test_one_hot_standardize_matches_sklearn():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "x": rng.normal(3.0, 2.0, 50),
            "colour": rng.choice(["red", "blue", "?"], 50),
            "const": np.full(50, 7.0),
        }
    )
    out = one_hot_standardize(frame, categorical=["colour"], numeric=["x", "const"])
    scaled = StandardScaler().fit_transform(frame[["x", "const"]])
    np.testing.assert_allclose(out["x"], scaled[:, 0], atol=1e-12)
    np.testing.assert_allclose(out["const"], scaled[:, 1], atol=1e-12)
    encoder = OneHotEncoder(sparse_output=False).fit(frame[["colour"]])
    expected = encoder.transform(frame[["colour"]])
    got = out[[f"colour_{c}" for c in encoder.categories_[0]]].to_numpy()
    np.testing.assert_array_equal(got, expected)
    assert list(out.columns) == ["x", "colour_?", "colour_blue", "colour_red", "const"]
    assert frame["x"].iloc[0] != out["x"].iloc[0]  # input untouched, output new
