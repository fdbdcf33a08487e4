import io
import math
import re
import zipfile

import numpy as np
import pytest

from fairot.datasets import _base, load_acs_income
from fairot.datasets._acs_income import MSG_COLUMNS, MSG_N_GROUPS, MSG_STATE, MSG_YEAR

# A few PUMS person records in the file's own layout: extra columns, a string SERIALNO, the
# wanted columns out of order, blank cells for "not applicable".
HEADER = "RT,SERIALNO,ST,PWGTP,RAC1P,AGEP,COW,SCHL,MAR,OCCP,POBP,RELP,WKHP,SEX,PINCP,ADJINC"
RECORDS = [
    # (line, kept by the paper's filter)
    ("P,2018GQ0000001,06,10,1,30,1,21,1,0110,6,0,40,1,50000,1013097", True),
    ("P,2018GQ0000002,06,11,1,18,1,16,5,4720,6,2,20,2,9000,1013097", False),  # AGEP = 18
    ("P,2018GQ0000003,06,12,2,19,,16,5,,6,2,,2,1200,1013097", False),  # COW blank
    ("P,2018GQ0000004,06,13,2,45,0,16,1,4720,6,0,40,1,1200,1013097", False),  # COW = 0
    ("P,2018GQ0000005,06,14,6,45,3,22,1,1010,210,0,45,2,0,1013097", False),  # PINCP = 0
    ("P,2018GQ0000006,06,15,1,52,2,19,3,5240,6,1,30,2,-4000,1013097", False),  # PINCP < 0
    ("P,2018GQ0000007,06,16,2,61,1,18,2,9130,36,1,,1,23000,1013097", True),  # WKHP blank
    ("P,2018GQ0000008,06,17,6,33,4,24,1,1020,210,0,50,2,134000,1013097", True),
    ("P,2018GQ0000009,06,18,8,27,1,19,5,4020,303,2,38,1,31000,1013097", True),
    ("P,2018GQ0000010,06,19,9,74,6,21,2,0430,17,16,8,2,71000,1013097", True),
]
PREDICTORS = ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX"]


def write_pums(folder, records=RECORDS, header=HEADER):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [header] + [line for line, _ in records]
    (folder / "psam_p06.csv").write_text("\n".join(lines) + "\n")


def kept_fields():
    names = HEADER.split(",")
    return [dict(zip(names, line.split(","), strict=True)) for line, keep in RECORDS if keep]


def test_parsing_filtering_and_two_groups(data_home):
    write_pums(data_home / "acs" / "2018" / "1-Year")
    bunch = load_acs_income()
    kept = kept_fields()
    assert len(bunch.target) == 5
    assert bunch.feature_names == PREDICTORS
    assert (bunch.data.dtypes == np.float64).all()
    for column in PREDICTORS:
        expected = [float(r[column]) if r[column] else -1.0 for r in kept]
        np.testing.assert_array_equal(bunch.data[column], expected)
    np.testing.assert_allclose(bunch.target, [math.log(float(r["PINCP"]) + 1) for r in kept])
    assert bunch.target.name == "log_income"
    expected_race = ["White" if r["RAC1P"] == "1" else "non-White" for r in kept]
    assert bunch.sensitive["race"].tolist() == expected_race
    assert "RAC1P" not in bunch.data.columns and "PINCP" not in bunch.data.columns
    assert bunch.split is None
    assert "folktables" in bunch.DESCR


def test_three_groups_drop_other_races(data_home):
    write_pums(data_home / "acs" / "2018" / "1-Year")
    bunch = load_acs_income(n_groups=3)
    names = {"1": "White", "2": "Black", "6": "Asian"}
    kept = [r for r in kept_fields() if r["RAC1P"] in names]
    assert bunch.sensitive["race"].tolist() == [names[r["RAC1P"]] for r in kept]
    np.testing.assert_array_equal(bunch.data["AGEP"], [float(r["AGEP"]) for r in kept])
    assert bunch.data.index.equals(bunch.target.index)


def test_missing_file_offline_error(data_home):
    with pytest.raises(FileNotFoundError) as info:
        load_acs_income(download_if_missing=False)
    message = str(info.value)
    assert "psam_p06.csv" in message
    assert str(data_home / "acs" / "2018" / "1-Year") in message


def test_missing_file_is_downloaded_from_census(data_home, monkeypatch):
    calls = []

    def fake_download(url, destination):
        calls.append(url)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("psam_p06.csv", "\n".join([HEADER] + [r for r, _ in RECORDS]))
            archive.writestr("ACS2018_PUMS_README.pdf", "not data")
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(buffer.getvalue())

    monkeypatch.setattr(_base, "_download", fake_download)
    bunch = load_acs_income()
    assert calls == [
        "https://www2.census.gov/programs-surveys/acs/data/pums/2018/1-Year/csv_pca.zip"
    ]
    assert len(bunch.target) == 5
    assert (data_home / "acs" / "2018" / "1-Year" / "psam_p06.csv").is_file()


def test_offline_download_failure(data_home, monkeypatch):
    def offline(url, destination):
        raise OSError("Network is unreachable")

    monkeypatch.setattr(_base, "_download", offline)
    with pytest.raises(OSError, match="Could not download 'psam_p06.csv'"):
        load_acs_income()


def test_file_without_pums_columns(data_home):
    write_pums(data_home / "acs" / "2018" / "1-Year", records=[], header="AGEP,COW,PINCP")
    with pytest.raises(ValueError, match="lacks the PUMS column"):
        load_acs_income()
    assert "{missing}" in MSG_COLUMNS


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"state": "XX"}, MSG_STATE.format(value="XX")),
        ({"year": 2010}, MSG_YEAR.format(value=2010)),
        ({"year": "2018"}, MSG_YEAR.format(value="2018")),
        ({"n_groups": 4}, MSG_N_GROUPS.format(value=4)),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_acs_income(**kwargs)
