"""UCI Statlog German Credit, as used in the COT paper's Table 1."""

from __future__ import annotations

import functools
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import (
    RemoteFile,
    fetch_raw_file,
    file_key,
    load_descr,
    make_bunch,
    one_hot_standardize,
    read_raw_bytes,
)

__all__ = ["load_german_credit"]

GERMAN_DATA = RemoteFile(
    name="german.data",
    subdir="german_credit",
    url="https://archive.ics.uci.edu/ml/machine-learning-databases/statlog/german/german.data",
    sha256="b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    shipped=True,
)

# The 20 attributes of german.doc, in order, then the class.
COLUMNS = [
    "checking_status",
    "duration_months",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment_since",
    "installment_rate",
    "personal_status_sex",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "other_installment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable",
    "telephone",
    "foreign_worker",
    "credit_risk",
]
NUMERIC = [
    "duration_months",
    "credit_amount",
    "installment_rate",
    "residence_since",
    "age",
    "existing_credits",
    "people_liable",
]
CATEGORICAL = [c for c in COLUMNS[:-1] if c not in NUMERIC]

# The code tables of german.doc, shortened; "DM" amounts as written there.
CODES = {
    "A11": "< 0 DM",
    "A12": "0 to 200 DM",
    "A13": ">= 200 DM or salary assignment",
    "A14": "no checking account",
    "A30": "no credits or all paid duly",
    "A31": "all credits at this bank paid duly",
    "A32": "existing credits paid duly",
    "A33": "past payment delays",
    "A34": "critical account or credits elsewhere",
    "A40": "car (new)",
    "A41": "car (used)",
    "A42": "furniture/equipment",
    "A43": "radio/television",
    "A44": "domestic appliances",
    "A45": "repairs",
    "A46": "education",
    "A47": "vacation",
    "A48": "retraining",
    "A49": "business",
    "A410": "others",
    "A61": "< 100 DM",
    "A62": "100 to 500 DM",
    "A63": "500 to 1000 DM",
    "A64": ">= 1000 DM",
    "A65": "unknown or none",
    "A71": "unemployed",
    "A72": "< 1 year",
    "A73": "1 to 4 years",
    "A74": "4 to 7 years",
    "A75": ">= 7 years",
    "A91": "male divorced/separated",
    "A92": "female divorced/separated/married",
    "A93": "male single",
    "A94": "male married/widowed",
    "A95": "female single",
    "A101": "none",
    "A102": "co-applicant",
    "A103": "guarantor",
    "A121": "real estate",
    "A122": "savings agreement or life insurance",
    "A123": "car or other",
    "A124": "unknown or none",
    "A141": "bank",
    "A142": "stores",
    "A143": "none",
    "A151": "rent",
    "A152": "own",
    "A153": "for free",
    "A171": "unemployed or unskilled non-resident",
    "A172": "unskilled resident",
    "A173": "skilled employee or official",
    "A174": "management, self-employed or highly qualified",
    "A191": "none",
    "A192": "yes",
    "A201": "yes",
    "A202": "no",
}
AGE_CUT = 30
YOUNG, OLD = "<30", ">=30"
TARGET_NAME = "good_credit"
MSG_UNKNOWN_CODE = "german.data holds codes absent from german.doc: {codes}."


@functools.lru_cache(maxsize=4)
def _raw_frame(key: tuple) -> pd.DataFrame:
    content = read_raw_bytes(Path(key[0]), GERMAN_DATA)
    frame = pd.read_csv(io.BytesIO(content), sep=" ", header=None, names=COLUMNS)
    for name in CATEGORICAL:
        unknown = sorted(set(frame[name]) - CODES.keys())
        if unknown:
            raise ValueError(MSG_UNKNOWN_CODE.format(codes=unknown))
        frame[name] = frame[name].map(CODES)
    return frame


def load_german_credit(
    *,
    preprocess: bool = True,
    include_sensitive: bool = True,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
) -> Bunch:
    """Load the UCI Statlog German Credit data set with the COT paper's age groups.

    1,000 loan applicants described by 20 attributes (``german.data``; the categorical codes
    A11...A202 are replaced by the readable labels of ``german.doc``). The sensitive attribute is
    age, split into two groups: younger than 30 and 30 or older, as in the COT paper [1]_.

    Parameters
    ----------
    preprocess : bool, default=True
        When ``True``, ``data`` holds float columns: the 13 categorical attributes one-hot encoded
        (none dropped) and the 7 numeric ones standardised with the mean and standard deviation of
        all 1,000 rows (the paper's setup). When ``False``, the raw columns.
    include_sensitive : bool, default=True
        Keep ``age`` (in years) among the features, as the paper's model scores ``g_θ(a, x)``.
    data_home : str or path-like, default=None
        Folder holding ``german_credit/german.data`` to use instead of the shipped copy; default
        ``$FAIROT_DATA_HOME``, else ``~/fairot_data``.
    download_if_missing : bool, default=True
        Download from UCI when neither a local nor a shipped copy exists.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        With fields

        data : DataFrame of shape (1000, n_features)
            The features.
        target : Series of shape (1000,)
            **1 = good credit risk** (class 1 of ``german.data``, 700 rows), 0 = bad (class 2, 300
            rows); ``int64``, named ``"good_credit"``. The positive class is the favourable one.
        sensitive : DataFrame of shape (1000, 1)
            Column ``age_group``: ``"<30"`` or ``">=30"``.
        split : None
            The data set has no official train/test split.
        feature_names : list of str
            Columns of ``data``.
        target_names : list of str
            ``["good_credit"]``.
        DESCR : str
            Description, provenance and licence.

    References
    ----------
    .. [1] COT paper (``seeds/000``), Section "Results", "German Credit Dataset" and Table 1.
    .. [2] H. Hofmann, "Statlog (German Credit Data)", UCI Machine Learning Repository, 1994,
       doi:10.24432/C5NC77. CC BY 4.0.

    Examples
    --------
    >>> from fairot.datasets import load_german_credit
    >>> credit = load_german_credit()
    >>> credit.sensitive["age_group"].value_counts().sort_index().tolist()
    [371, 629]
    """
    path = fetch_raw_file(GERMAN_DATA, data_home=data_home, download_if_missing=download_if_missing)
    raw = _raw_frame(file_key(path)).copy()
    target = (raw["credit_risk"] == 1).astype("int64").rename(TARGET_NAME)
    age_group = np.where(raw["age"] < AGE_CUT, YOUNG, OLD)
    sensitive = pd.DataFrame({"age_group": age_group}, index=raw.index)
    features = [c for c in COLUMNS[:-1] if include_sensitive or c != "age"]
    data = raw[features]
    if preprocess:
        data = one_hot_standardize(
            data, categorical=CATEGORICAL, numeric=[c for c in NUMERIC if c in features]
        )
    return make_bunch(
        data=data,
        target=target,
        sensitive=sensitive,
        split=None,
        descr=load_descr("german_credit"),
    )
