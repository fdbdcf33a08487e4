"""UCI Adult (Census Income), as used in the COT paper's Table 1."""

from __future__ import annotations

import functools
import io
import os
from pathlib import Path

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

__all__ = ["load_adult"]

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
ADULT_TRAIN = RemoteFile(
    name="adult.data",
    subdir="adult",
    url=_UCI + "adult.data",
    sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    shipped=True,
)
ADULT_TEST = RemoteFile(
    name="adult.test",
    subdir="adult",
    url=_UCI + "adult.test",
    sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    shipped=True,
)

# Column order of adult.names, in snake case.
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]
NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
CATEGORICAL = [c for c in COLUMNS[:-1] if c not in NUMERIC]
SENSITIVE = ["race", "sex"]
PAPER_RACES = ("Black", "White")
TARGET_NAME = "income_over_50k"


def _parse(content: bytes, *, skip_banner: bool) -> pd.DataFrame:
    frame = pd.read_csv(
        io.BytesIO(content),
        header=None,
        names=COLUMNS,
        skiprows=1 if skip_banner else 0,
        skipinitialspace=True,
        # "?" (missing) is kept as a category of its own, as the paper's numbers need.
        keep_default_na=False,
        na_values=[],
    )
    # adult.test ends its labels with a period ("<=50K.").
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


@functools.lru_cache(maxsize=4)
def _raw_frame(train_key: tuple, test_key: tuple) -> pd.DataFrame:
    train = _parse(read_raw_bytes(Path(train_key[0]), ADULT_TRAIN), skip_banner=False)
    test = _parse(read_raw_bytes(Path(test_key[0]), ADULT_TEST), skip_banner=True)
    train["split"] = "train"
    test["split"] = "test"
    return pd.concat([train, test], ignore_index=True)


def load_adult(
    *,
    preprocess: bool = True,
    include_sensitive: bool = True,
    restrict_race: bool = True,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
) -> Bunch:
    """Load the UCI Adult data set with the COT paper's four groups (race x sex).

    The 48,842 records of ``adult.data`` (32,561, the official training set) and ``adult.test``
    (16,281) are concatenated, in file order. By default only the records whose race is Black or
    White are kept (46,447 rows), giving the four groups of the COT paper [1]_:
    {Black, White} x {Female, Male}. The label is income > 50K. Missing values (``?``) are kept as
    a category of their own; no row is dropped.

    Parameters
    ----------
    preprocess : bool, default=True
        When ``True``, ``data`` holds float columns: categorical features one-hot encoded (one 0/1
        column per value, ``?`` included, none dropped) and the numeric features (age, fnlwgt,
        education_num, capital_gain, capital_loss, hours_per_week) standardised with the mean and
        standard deviation of all returned rows (train and test, the paper's setup). When
        ``False``, ``data`` holds the raw columns (integers and strings).
    include_sensitive : bool, default=True
        Keep ``race`` and ``sex`` among the features: the paper's model scores ``g_θ(a, x)``.
    restrict_race : bool, default=True
        Keep only Black and White individuals (the paper's setup). ``False`` keeps all five race
        values.
    data_home : str or path-like, default=None
        Folder holding ``adult/adult.data`` and ``adult/adult.test`` to use instead of the copies
        shipped with fairot; default ``$FAIROT_DATA_HOME``, else ``~/fairot_data``.
    download_if_missing : bool, default=True
        Download from UCI when neither a local nor a shipped copy exists.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        With fields

        data : DataFrame of shape (n_samples, n_features)
            The features.
        target : Series of shape (n_samples,)
            1 when income > 50K, else 0 (``int64``), named ``"income_over_50k"``.
        sensitive : DataFrame of shape (n_samples, 2)
            Columns ``race`` ("Black", "White", ...) and ``sex`` ("Female", "Male"); pass it as
            ``sensitive_features`` for the four intersectional groups.
        split : Series of shape (n_samples,)
            ``"train"`` for rows of ``adult.data``, ``"test"`` for rows of ``adult.test``.
        feature_names : list of str
            Columns of ``data``.
        target_names : list of str
            ``["income_over_50k"]``.
        DESCR : str
            Description, provenance and licence.

    Raises
    ------
    FileNotFoundError
        When a raw file is missing and ``download_if_missing=False``.
    OSError
        When the download fails.

    References
    ----------
    .. [1] COT paper (``seeds/000``), Section "Results", "Adult Dataset" and Table 1.
    .. [2] B. Becker and R. Kohavi, "Adult", UCI Machine Learning Repository, 1996,
       doi:10.24432/C5XW20. CC BY 4.0.

    Examples
    --------
    >>> from fairot.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape[0], adult.sensitive.value_counts().size
    (46447, 4)
    """
    kwargs = {"data_home": data_home, "download_if_missing": download_if_missing}
    train_path = fetch_raw_file(ADULT_TRAIN, **kwargs)
    test_path = fetch_raw_file(ADULT_TEST, **kwargs)
    # The cache holds the parsed frame; copy so that callers never mutate it.
    raw = _raw_frame(file_key(train_path), file_key(test_path)).copy()
    if restrict_race:
        raw = raw[raw["race"].isin(PAPER_RACES)].reset_index(drop=True)

    target = (raw["income"] == ">50K").astype("int64").rename(TARGET_NAME)
    sensitive = raw[SENSITIVE].copy()
    split = raw["split"].rename("split")
    features = [c for c in COLUMNS[:-1] if include_sensitive or c not in SENSITIVE]
    data = raw[features]
    if preprocess:
        data = one_hot_standardize(
            data,
            categorical=[c for c in CATEGORICAL if c in features],
            numeric=NUMERIC,
        )
    return make_bunch(
        data=data, target=target, sensitive=sensitive, split=split, descr=load_descr("adult")
    )
