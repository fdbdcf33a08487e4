"""Real ACS 2018/2019 PUMS person records: the NIST Diverse Communities Data Excerpts."""

from __future__ import annotations

import functools
import io
import json
import os
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_raw_file, file_key, load_descr, make_bunch, read_raw_bytes

__all__ = ["load_acs_excerpts"]

# SDNist at the last commit whose CSVs are not Git LFS pointers (see ../shared/data/SOURCES.md).
_SDNIST = (
    "https://raw.githubusercontent.com/usnistgov/SDNist/"
    "894ca7a3959792c99e0acbb93f9b9117cfc90c57/BenchmarkData/ACSDataExcerpts/"
)
_SHA256 = {
    "national2018.csv": "d3f9b74f95d4bd55add179957812c3cd46756be1fd58f565a9ef53522cb4ce3a",
    "national2019.csv": "9e039c8e47c9e998d60f66fd50ec620fc2d0703decdc21f3069c9844fbef979b",
    "ma2018.csv": "067b99e8180a6b8149d03fa31b5a29aa6d9ff66a9173e6425915d46a4bb77cad",
    "tx2018.csv": "f6a6d7ba4f845b168a6e1d8ee869c11ea156abe4221f2abb1d2bddb50fe7d0fa",
    "data_dictionary.json": "16a170c50b89ea15b41826ca439ac971345f1a545e17278e2bdfa891fe7b56e8",
}
_FOLDERS = {"national": "national", "ma": "massachusetts", "tx": "texas"}
EXCERPTS = {
    ("national", 2018): "national2018.csv",
    ("national", 2019): "national2019.csv",
    ("massachusetts", 2018): "ma2018.csv",
    ("texas", 2018): "tx2018.csv",
}


def _remote(name: str) -> RemoteFile:
    folder = next((f for prefix, f in _FOLDERS.items() if name.startswith(prefix)), "")
    url = _SDNIST + (f"{folder}/{name}" if folder else name)
    return RemoteFile(name=name, subdir="acs_nist", url=url, sha256=_SHA256[name], shipped=True)


DATA_DICTIONARY = _remote("data_dictionary.json")

# Columns of the excerpts, in file order, by how they are typed. The data dictionary marks the
# ``N`` code (not in universe, e.g. income under age 15) for exactly the NULLABLE ones.
COLUMNS = [
    "PUMA", "AGEP", "SEX", "MSP", "HISP", "RAC1P", "NOC", "NPF", "HOUSING_TYPE", "OWN_RENT",
    "DENSITY", "INDP", "INDP_CAT", "EDU", "PINCP", "PINCP_DECILE", "POVPIP", "DVET", "DREM",
    "DPHY", "DEYE", "DEAR", "PWGTP", "WGTP",
]  # fmt: skip
NULLABLE = [
    "MSP", "NOC", "NPF", "INDP", "INDP_CAT", "EDU", "PINCP_DECILE", "POVPIP", "DVET", "DREM",
    "DPHY",
]  # fmt: skip
CONTINUOUS = ["DENSITY", "PINCP"]
MISSING_MARKER = "N"
INCOME, RACE, WEIGHT = "PINCP", "RAC1P", "PWGTP"
# Not predictors: the income and what is computed from it, the race that defines the groups,
# the survey weights and the area identifier (DENSITY carries the area's information).
NOT_PREDICTORS = {INCOME, "PINCP_DECILE", "POVPIP", RACE, WEIGHT, "WGTP", "PUMA"}
FEATURE_SETS = {
    "all": [c for c in COLUMNS if c not in NOT_PREDICTORS],
    # What stands in for the regression paper's nine predictors (Section 6.1): EDU is a recode
    # of SCHL, MSP is close to MAR, INDP (industry) replaces OCCP; COW, POBP, RELP and WKHP are
    # not in the excerpts.
    "regression-paper": ["AGEP", "SEX", "EDU", "MSP", "INDP"],
}
RACE_NAMES = {
    1: "White",
    2: "Black",
    3: "American Indian",
    4: "Alaska Native",
    5: "American Indian and Alaska Native",
    6: "Asian",
    7: "Native Hawaiian and Pacific Islander",
    8: "Some other race",
    9: "Two or more races",
}
PAPER_RACES_3 = (1, 2, 6)
SUBSETS = ("all", "acs-income", "regression-paper")

MSG_EXCERPT = (
    "no excerpt for year={year!r}, region={region!r}; the NIST excerpts shipped with fairot are: "
    "{available}."
)
MSG_SUBSET = "subset must be one of {choices}; got {value!r}."
MSG_FEATURES = "features must be 'all' or 'regression-paper'; got {value!r}."
MSG_TARGET = "target must be 'income' or 'log_income'; got {value!r}."
MSG_LOG_NEEDS_SUBSET = (
    "target='log_income' needs positive incomes: use subset='acs-income' or "
    "'regression-paper' (subset='all' keeps missing and negative PINCP)."
)
MSG_N_GROUPS = (
    "n_groups must be None (every RAC1P value), 2 (White vs non-White) or 3 "
    "(White/Black/Asian); got {value!r}."
)
MSG_COLUMNS = "{path} lacks the excerpt column(s) {missing}; is it a NIST ACS data excerpt?"


def _dtypes() -> dict[str, str]:
    kinds = {"PUMA": "string"}
    for column in COLUMNS[1:]:
        if column in CONTINUOUS:
            kinds[column] = "float64"
        else:
            kinds[column] = "Int64" if column in NULLABLE else "int64"
    return kinds


@functools.lru_cache(maxsize=4)
def _raw_frame(key: tuple, name: str) -> pd.DataFrame:
    path = Path(key[0])
    content = read_raw_bytes(path, _remote(name))
    header = pd.read_csv(io.BytesIO(content), nrows=0).columns
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ValueError(MSG_COLUMNS.format(path=path, missing=missing))
    return pd.read_csv(
        io.BytesIO(content),
        usecols=COLUMNS,
        dtype=_dtypes(),
        na_values=[MISSING_MARKER],
        keep_default_na=False,
    )[COLUMNS]


def _keep(frame: pd.DataFrame, subset: str) -> pd.Series:
    if subset == "acs-income":
        # folktables' ACSIncome filter without WKHP > 0: the excerpts have no WKHP.
        return (frame["AGEP"] > 16) & (frame[INCOME] > 100) & (frame[WEIGHT] >= 1)
    if subset == "regression-paper":
        # Section 6.1: AGEP > 18, COW > 0, PINCP > 0. INDP is recorded for exactly the people
        # COW is (16+ who worked in the last five years, 9920 = unemployed), so it stands in.
        return (frame["AGEP"] > 18) & frame["INDP"].notna() & (frame[INCOME] > 0)
    return pd.Series(True, index=frame.index)


def _race_groups(race: pd.Series, n_groups: int | None) -> pd.Series:
    if n_groups == 2:
        return pd.Series(np.where(race == 1, "White", "non-White"), index=race.index)
    return race.map(RACE_NAMES).astype(object)


def load_acs_excerpts(
    year: int = 2018,
    region: Literal["national", "massachusetts", "texas"] = "national",
    *,
    subset: Literal["all", "acs-income", "regression-paper"] = "all",
    features: Literal["all", "regression-paper"] = "all",
    target: Literal["income", "log_income"] = "income",
    n_groups: int | None = None,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
) -> Bunch:
    """Load real ACS PUMS person records of the NIST Diverse Communities Data Excerpts.

    Four excerpts of the American Community Survey 1-Year PUMS, selected and recoded by NIST
    [1]_, ship with fairot: ``national`` 2018 (27,111 rows from about 20 PUMAs across the US) and
    2019 (27,253), ``massachusetts`` 2018 (7,244) and ``texas`` 2018 (8,775), 24 columns each.
    The literal ``N`` (not in universe, e.g. income under age 15) is read as missing: pandas
    ``NA`` in the nullable ``Int64`` code columns, ``NaN`` in the float ``PINCP``.

    Parameters
    ----------
    year : {2018, 2019}, default=2018
        Survey year (2019 only for ``region="national"``).
    region : {"national", "massachusetts", "texas"}, default="national"
        Which excerpt.
    subset : {"all", "acs-income", "regression-paper"}, default="all"
        Rows to keep. ``"acs-income"``: folktables' ACSIncome filter ``AGEP > 16``,
        ``PINCP > 100``, ``PWGTP >= 1`` (its fourth condition, ``WKHP > 0``, cannot be applied:
        the excerpts have no WKHP); 19,579 rows of the 2018 national excerpt.
        ``"regression-paper"``: the filter of Section 6.1 of the regression paper [2]_,
        ``AGEP > 18``, ``COW > 0`` and ``PINCP > 0``, with ``INDP`` recorded standing in for
        ``COW > 0`` (both are recorded for exactly the people aged 16 or more who worked in the
        last five years); 15,168 rows of the 2018 national excerpt.
    features : {"all", "regression-paper"}, default="all"
        Columns of ``data``. ``"all"``: the 17 columns other than PINCP and what is computed from
        it (PINCP_DECILE, POVPIP), RAC1P, the weights and PUMA. ``"regression-paper"``: AGEP,
        SEX, EDU, MSP, INDP, the excerpts' stand-ins for the paper's AGEP, SEX, SCHL, MAR and
        OCCP (COW, POBP, RELP and WKHP are not in the excerpts). Codes are kept as numbers,
        missing ones as ``NA``.
    target : {"income", "log_income"}, default="income"
        ``PINCP`` in dollars, or ``log(PINCP + 1)`` as in the paper (needs a ``subset`` that
        keeps positive incomes only).
    n_groups : {None, 2, 3}, default=None
        ``sensitive["race"]``: ``None``, every RAC1P value by name; 2, ``"White"`` vs
        ``"non-White"``; 3, ``"White"``, ``"Black"``, ``"Asian"`` (RAC1P 1, 2, 6) with the rows
        of other races dropped, as in the paper.
    data_home : str or path-like, default=None
        Folder holding ``acs_nist/<file>.csv`` to use instead of the shipped copies; default
        ``$FAIROT_DATA_HOME``, else ``~/fairot_data``.
    download_if_missing : bool, default=True
        Download from NIST's SDNist repository when neither a local nor a shipped copy exists.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        With fields

        data : DataFrame of shape (n_samples, n_features)
            The predictors (``Int64`` codes, ``float64`` DENSITY).
        target : Series of shape (n_samples,)
            ``"PINCP"`` or ``"log_income"`` (float).
        sensitive : DataFrame of shape (n_samples, 1)
            Column ``race``. Race is not a predictor.
        sample_weight : Series of shape (n_samples,)
            The person weight ``PWGTP`` (``int64``), for ``sample_weight=``.
        frame : DataFrame of shape (n_samples, 24)
            Every column of the kept rows, typed as above.
        split : None
            No official split.
        feature_names, target_names : list of str
            Columns of ``data``; the target's name.
        data_dictionary : dict
            NIST's description of every column and code.
        DESCR : str
            Description, provenance, licence and citation.

    References
    ----------
    .. [1] Task et al., "NIST Diverse Communities Data Excerpts", National Institute of
       Standards and Technology, 2023, doi:10.18434/mds2-2895. Public domain (US government
       work; ACS microdata of the US Census Bureau).
    .. [2] Regression paper (``seeds/001``), Section 6.1.

    Examples
    --------
    >>> from fairot.datasets import load_acs_excerpts
    >>> acs = load_acs_excerpts(subset="acs-income")
    >>> acs.frame.shape, int(acs.sample_weight.sum())
    ((19579, 24), 2007774)
    >>> int(load_acs_excerpts().frame["PINCP"].isna().sum())  # the "N" of under-15s
    4337
    """
    key = (region, year) if not isinstance(year, bool) else None
    if key not in EXCERPTS:
        available = ", ".join(f"({y}, {r!r})" for r, y in EXCERPTS)
        raise ValueError(MSG_EXCERPT.format(year=year, region=region, available=available))
    if subset not in SUBSETS:
        raise ValueError(MSG_SUBSET.format(choices=", ".join(map(repr, SUBSETS)), value=subset))
    if features not in FEATURE_SETS:
        raise ValueError(MSG_FEATURES.format(value=features))
    if target not in ("income", "log_income"):
        raise ValueError(MSG_TARGET.format(value=target))
    if target == "log_income" and subset == "all":
        raise ValueError(MSG_LOG_NEEDS_SUBSET)
    if n_groups is not None and (isinstance(n_groups, bool) or n_groups not in (2, 3)):
        raise ValueError(MSG_N_GROUPS.format(value=n_groups))

    name = EXCERPTS[key]
    kwargs = {"data_home": data_home, "download_if_missing": download_if_missing}
    path = fetch_raw_file(_remote(name), **kwargs)
    # The cache holds the parsed frame; copy so that callers never mutate it.
    frame = _raw_frame(file_key(path), name).copy()
    frame = frame[_keep(frame, subset)]
    if n_groups == 3:
        frame = frame[frame[RACE].isin(PAPER_RACES_3)]
    frame = frame.reset_index(drop=True)

    income = frame[INCOME]
    y = np.log1p(income).rename("log_income") if target == "log_income" else income.copy()
    bunch = make_bunch(
        data=frame[FEATURE_SETS[features]].copy(),
        target=y,
        sensitive=pd.DataFrame({"race": _race_groups(frame[RACE], n_groups)}),
        split=None,
        descr=load_descr("acs_excerpts"),
    )
    bunch.sample_weight = frame[WEIGHT].copy()
    bunch.frame = frame
    dictionary_path = fetch_raw_file(DATA_DICTIONARY, **kwargs)
    bunch.data_dictionary = json.loads(read_raw_bytes(dictionary_path, DATA_DICTIONARY))
    return bunch
