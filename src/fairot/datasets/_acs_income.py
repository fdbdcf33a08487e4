"""American Community Survey (PUMS) income, as in Section 6 of the regression paper."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_raw_file, file_key, load_descr, make_bunch

__all__ = ["load_acs_income"]

# Two-digit FIPS codes of the PUMS state files (psam_pXX.csv), as folktables names them.
STATE_FIPS = {
    "AL": "01", "AK": "02", "AZ": "04", "AR": "05", "CA": "06", "CO": "08", "CT": "09",
    "DE": "10", "DC": "11", "FL": "12", "GA": "13", "HI": "15", "ID": "16", "IL": "17",
    "IN": "18", "IA": "19", "KS": "20", "KY": "21", "LA": "22", "ME": "23", "MD": "24",
    "MA": "25", "MI": "26", "MN": "27", "MS": "28", "MO": "29", "MT": "30", "NE": "31",
    "NV": "32", "NH": "33", "NJ": "34", "NM": "35", "NY": "36", "NC": "37", "ND": "38",
    "OH": "39", "OK": "40", "OR": "41", "PA": "42", "RI": "44", "SC": "45", "SD": "46",
    "TN": "47", "TX": "48", "UT": "49", "VT": "50", "VA": "51", "WA": "53", "WV": "54",
    "WI": "55", "WY": "56", "PR": "72",
}  # fmt: skip
PUMS_URL = "https://www2.census.gov/programs-surveys/acs/data/pums/{year}/1-Year/csv_p{state}.zip"

# The regression paper's nine predictors (Section 6.1), entered as their numeric ACS codes.
PREDICTORS = ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX"]
INCOME, RACE = "PINCP", "RAC1P"
MIN_AGE_EXCLUSIVE = 18
# Blank PUMS cells (e.g. WKHP of someone who did not work last year) become -1, folktables'
# convention, so that tree ensembles that reject NaN can use the frame as is.
MISSING_CODE = -1.0
TARGET_NAME = "log_income"
RACE_NAMES_3 = {1: "White", 2: "Black", 6: "Asian"}

MSG_STATE = "state must be a two-letter US state code such as 'CA', got {value!r}."
MSG_YEAR = "year must be an integer >= 2014 (1-Year PUMS in the folktables layout), got {value!r}."
MSG_N_GROUPS = "n_groups must be 2 (White vs non-White) or 3 (White/Black/Asian), got {value!r}."
MSG_COLUMNS = "{path} lacks the PUMS column(s) {missing}; is it a PUMS person file of 2014-2018?"


def pums_file(year: int, state: str) -> RemoteFile:
    """Describe the 1-Year PUMS person file of one state (``psam_pXX.csv``)."""
    fips = STATE_FIPS[state]
    return RemoteFile(
        name=f"psam_p{fips}.csv",
        subdir=f"acs/{year}/1-Year",
        url=PUMS_URL.format(year=year, state=state.lower()),
        sha256=None,  # the Census Bureau publishes no checksum
        archive_member=f"psam_p{fips}.csv",
    )


@functools.lru_cache(maxsize=2)
def _filtered_frame(key: tuple) -> pd.DataFrame:
    path = key[0]
    wanted = [*PREDICTORS, INCOME, RACE]
    header = pd.read_csv(path, nrows=0).columns
    missing = [c for c in wanted if c not in header]
    if missing:
        raise ValueError(MSG_COLUMNS.format(path=path, missing=missing))
    frame = pd.read_csv(path, usecols=wanted, dtype=float)[wanted]
    # Section 6.1: adults older than 18 with a positive class-of-worker code and income.
    keep = (frame["AGEP"] > MIN_AGE_EXCLUSIVE) & (frame["COW"] > 0) & (frame[INCOME] > 0)
    return frame[keep].reset_index(drop=True)


def load_acs_income(
    year: int = 2018,
    state: str = "CA",
    *,
    n_groups: int = 2,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
) -> Bunch:
    """Load ACS PUMS income prediction (log personal income) with race groups.

    Reads the 1-Year PUMS person file of one state (``psam_p06.csv`` for California, the file
    folktables downloads) from ``<data_home>/acs/<year>/1-Year/``, downloading it from the US
    Census Bureau when it is missing. As in Section 6.1 of the regression paper [1]_: adults
    older than 18 (``AGEP > 18``) with ``COW > 0`` and ``PINCP > 0``; target
    ``log(PINCP + 1)``; nine predictors AGEP, COW, SCHL, MAR, OCCP, POBP, RELP, WKHP and SEX,
    entered as their numeric ACS codes (the paper's choice; one-hot encode the nominal ones
    yourself for a linear model); race (RAC1P) only defines the groups and is not a predictor.
    No survey weights. The paper reports 207,019 rows (California 2018) and 172,850 for its
    three-group subset.

    Parameters
    ----------
    year : int, default=2018
        Survey year (1-Year file).
    state : str, default="CA"
        Two-letter state code.
    n_groups : {2, 3}, default=2
        2: ``"White"`` (RAC1P = 1) vs ``"non-White"``. 3: ``"White"``, ``"Black"``, ``"Asian"``
        (RAC1P = 1, 2, 6); rows of other races are dropped.
    data_home : str or path-like, default=None
        Folder holding ``acs/<year>/1-Year/psam_pXX.csv``; default ``$FAIROT_DATA_HOME``, else
        ``~/fairot_data``.
    download_if_missing : bool, default=True
        Download ``csv_pXX.zip`` from the Census Bureau and extract the person file when it is
        missing.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        With fields

        data : DataFrame of shape (n_samples, 9)
            The nine predictors (float); blank cells are -1 (folktables' convention).
        target : Series of shape (n_samples,)
            ``log(PINCP + 1)``, named ``"log_income"``.
        sensitive : DataFrame of shape (n_samples, 1)
            Column ``race``.
        split : None
            No official split (the paper draws a stratified 40/30/30 split, seed 42).
        feature_names : list of str
            The nine predictors.
        target_names : list of str
            ``["log_income"]``.
        DESCR : str
            Description, provenance and licence.

    Raises
    ------
    FileNotFoundError
        When the file is missing and ``download_if_missing=False``.
    OSError
        When the download fails (e.g. offline); the message names the file and the folder.

    References
    ----------
    .. [1] Regression paper (``seeds/001``), Section 6.1.
    .. [2] US Census Bureau, American Community Survey 1-Year Public Use Microdata Sample.
       Public domain. F. Ding, M. Hardt, J. Miller and L. Schmidt, "Retiring Adult: New Datasets
       for Fair Machine Learning", NeurIPS 2021 (folktables).

    Examples
    --------
    The census file is not shipped (it is large); without it and without downloading, the error
    names what to put where:

    >>> import tempfile
    >>> from fairot.datasets import load_acs_income
    >>> try:
    ...     load_acs_income(data_home=tempfile.mkdtemp(), download_if_missing=False)
    ... except FileNotFoundError as error:
    ...     print("psam_p06.csv" in str(error))
    True
    """
    if not isinstance(state, str) or state.upper() not in STATE_FIPS:
        raise ValueError(MSG_STATE.format(value=state))
    if isinstance(year, bool) or not isinstance(year, (int, np.integer)) or year < 2014:
        raise ValueError(MSG_YEAR.format(value=year))
    if isinstance(n_groups, bool) or n_groups not in (2, 3):
        raise ValueError(MSG_N_GROUPS.format(value=n_groups))

    remote = pums_file(int(year), state.upper())
    path = fetch_raw_file(remote, data_home=data_home, download_if_missing=download_if_missing)
    frame = _filtered_frame(file_key(Path(path))).copy()

    race = frame[RACE]
    if n_groups == 2:
        groups = pd.Series(np.where(race == 1, "White", "non-White"), index=frame.index)
    else:
        frame = frame[race.isin(list(RACE_NAMES_3))].reset_index(drop=True)
        groups = frame[RACE].astype(int).map(RACE_NAMES_3)
    data = frame[PREDICTORS].fillna(MISSING_CODE)
    target = np.log1p(frame[INCOME]).rename(TARGET_NAME)
    return make_bunch(
        data=data,
        target=target,
        sensitive=pd.DataFrame({"race": groups}),
        split=None,
        descr=load_descr("acs_income"),
    )
