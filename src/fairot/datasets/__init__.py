"""Real data sets of the seed papers, as pandas frames with their sensitive groups.

Adult, German Credit and Communities & Crime (UCI, CC BY 4.0) and the NIST ACS data excerpts
(real ACS 2018/2019 PUMS records, public domain) ship inside the package, compressed and checked
by SHA-256; a state's full ACS PUMS file (folktables' source) is read from the data home or
downloaded. Each loader follows scikit-learn's ``fetch_*`` conventions (``data_home``,
``download_if_missing``) and returns a :class:`~sklearn.utils.Bunch` with ``data``, ``target``,
``sensitive``, ``split``, ``feature_names`` and ``DESCR``. See ``docs/datasets.md``.
:func:`load_baseline_split` splits the built-in ones into train and test as the audits and the
reproductions do.
"""

from ._acs_excerpts import load_acs_excerpts
from ._acs_income import load_acs_income
from ._adult import load_adult
from ._base import get_data_home
from ._communities_crime import load_communities_crime
from ._german_credit import load_german_credit
from ._splits import (
    BUILTIN_DATASETS,
    BUILTIN_REGRESSION_DATASETS,
    BaselineSplit,
    load_baseline_split,
)

__all__ = [
    "BUILTIN_DATASETS",
    "BUILTIN_REGRESSION_DATASETS",
    "BaselineSplit",
    "get_data_home",
    "load_acs_excerpts",
    "load_acs_income",
    "load_adult",
    "load_baseline_split",
    "load_communities_crime",
    "load_german_credit",
]
