"""Fixtures of the datasets tests."""

import pytest


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    """Every test runs with an empty data home (FAIROT_DATA_HOME) and downloads forbidden."""
    home = tmp_path / "fairot_data"
    monkeypatch.setenv("FAIROT_DATA_HOME", str(home))

    def no_download(url, destination):
        raise AssertionError(f"tests never download (asked for {url})")

    monkeypatch.setattr("fairot.datasets._base._download", no_download)
    return home
