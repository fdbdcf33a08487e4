"""solve_rate_program on Dask arrays against the in-memory solver on the same numbers."""

import re

import numpy as np
import pytest

from fairot.classification import solve_rate_program
from fairot.classification.rate_rows import MSG_EMPTY_UNIT, MSG_NOT_FINITE, MSG_SHAPES
from fairot.dask._rate_program import DaskRows

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask.callbacks import Callback  # noqa: E402

N = 20_000
CHUNK = 2_500  # 8 partitions
#: Small enough for two levels of subsamples (20 000 -> ~2 500 -> ~310 rows) and extra passes.
WORKING_SET = 300


def _problem(n_units, seed=4):
    """Margins tied to the units (so the budget binds), positive weights."""
    rng = np.random.default_rng(seed)
    q = np.exp(rng.normal(size=(N, n_units)))
    q /= q.sum(axis=1, keepdims=True)
    eta = 1.0 / (1.0 + np.exp(-(rng.normal(size=N) + 2.0 * (q[:, 0] - q[:, -1]))))
    return 2 * eta - 1, q, rng.uniform(0.2, 2.0, N)


def _dask(a, q, w):
    return (
        da.from_array(a, chunks=CHUNK),
        da.from_array(q, chunks=(CHUNK, q.shape[1])),
        da.from_array(w, chunks=CHUNK),
    )


CASES = [
    # demographic parity, three groups, difference and ratio budgets
    (3, [0, 0, 0], {"max_difference": 0.02}),
    (3, [0, 0, 0], {"min_ratio": 0.85}),
    # equalized odds: (group, label) cells, the TPR and the FPR families
    (4, [0, 0, 1, 1], {"max_difference": 0.01}),
    (4, [0, 0, 1, 1], {"min_ratio": 0.9}),
]


def _assert_same(program, expected):
    np.testing.assert_allclose(program.multipliers, expected.multipliers, rtol=0, atol=1e-9)
    np.testing.assert_allclose(program.rates, expected.rates, rtol=0, atol=1e-9)
    np.testing.assert_allclose(program.objective, expected.objective, rtol=0, atol=1e-9)
    np.testing.assert_allclose(program.levels, expected.levels, rtol=0, atol=1e-9)
    np.testing.assert_allclose(program.unit_shares, expected.unit_shares, rtol=0, atol=1e-12)
    decisions = program.decisions.compute()
    np.testing.assert_allclose(decisions, expected.decisions, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(decisions.round(), expected.decisions.round())
    assert (program.n_passes, program.working_set_size) == (
        expected.n_passes,
        expected.working_set_size,
    )


@pytest.mark.parametrize(("n_units", "families", "budget"), CASES)
def test_dask_equals_in_memory(n_units, families, budget):
    a, q, w = _problem(n_units)
    expected = solve_rate_program(
        a, q, families, sample_weight=w, working_set_size=WORKING_SET, **budget
    )
    with dask.config.set(scheduler="synchronous"):
        program = solve_rate_program(
            *_dask(a, q, w)[:2],
            families,
            sample_weight=_dask(a, q, w)[2],
            working_set_size=WORKING_SET,
            **budget,
        )
    assert isinstance(program.decisions, da.Array)
    assert program.decisions.chunks == ((CHUNK,) * (N // CHUNK),)
    _assert_same(program, expected)
    # The program of every row, solved at once in memory: the same optimum.
    whole = solve_rate_program(a, q, families, sample_weight=w, working_set_size=N, **budget)
    np.testing.assert_allclose(program.objective, whole.objective, rtol=0, atol=1e-9)
    np.testing.assert_allclose(program.rates, whole.rates, rtol=0, atol=1e-8)


def test_some_case_needs_more_than_one_pass():
    """The loop's disagreeing rows are exercised on Dask too (not only the first pass)."""
    passes = []
    for n_units, families, budget in CASES:
        a, q, w = _problem(n_units)
        with dask.config.set(scheduler="synchronous"):
            passes.append(
                solve_rate_program(
                    *_dask(a, q, w)[:2],
                    families,
                    sample_weight=_dask(a, q, w)[2],
                    working_set_size=100,
                    **budget,
                ).n_passes
            )
    assert max(passes) > 1


class _LargestResult(Callback):
    """Rows of the largest array any task returned (a tuple's arrays counted one by one)."""

    def __init__(self):
        super().__init__()
        self.rows = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        values = result if isinstance(result, tuple) else (result,)
        for value in values:
            if isinstance(value, np.ndarray) and value.ndim >= 1:
                self.rows = max(self.rows, value.shape[0])


def test_no_process_holds_all_rows(monkeypatch):
    """Tasks hold one partition at most; the driver gathers the working set only."""
    a, q, w = _problem(4)
    gathered = []
    take = DaskRows.take

    def spy(self, index):
        gathered.append(index.shape[0])
        return take(self, index)

    monkeypatch.setattr(DaskRows, "take", spy)
    largest = _LargestResult()
    with dask.config.set(scheduler="synchronous"), largest:
        program = solve_rate_program(
            *_dask(a, q, w)[:2],
            [0, 0, 1, 1],
            sample_weight=_dask(a, q, w)[2],
            working_set_size=WORKING_SET,
            max_difference=0.01,
        )
    assert 0 < largest.rows <= CHUNK
    assert gathered and max(gathered) < N // 8
    assert program.working_set_size == max(gathered)


def test_unweighted_and_direct_on_a_distributed_client(client):
    """No sample_weight, and few enough rows to solve at once; on the LocalCluster."""
    a, q, _ = _problem(3)
    a, q = a[:3000], q[:3000]
    expected = solve_rate_program(a, q, [0, 0, 0], max_difference=0.03)
    program = solve_rate_program(
        da.from_array(a, chunks=700),
        da.from_array(q, chunks=(700, 3)),
        [0, 0, 0],
        max_difference=0.03,
    )
    _assert_same(program, expected)


def test_dask_errors_are_the_in_memory_ones():
    a, q, w = _problem(3)
    da_a, da_q, da_w = _dask(a, q, w)
    with dask.config.set(scheduler="synchronous"):
        bad = a.copy()
        bad[N - 1] = np.nan
        with pytest.raises(ValueError, match=MSG_NOT_FINITE.format(name="margins")):
            solve_rate_program(da.from_array(bad, chunks=CHUNK), da_q, [0, 0, 0], min_ratio=0.8)
        shapes = MSG_SHAPES.format(n=N - 1, rows=N, units=3, families=3)
        with pytest.raises(ValueError, match=re.escape(shapes)):
            solve_rate_program(da_a[:-1], da_q, [0, 0, 0], min_ratio=0.8)
        shapes = MSG_SHAPES.format(n=N, rows=N, units=3, families=2)
        with pytest.raises(ValueError, match=re.escape(shapes)):
            solve_rate_program(da_a, da_q, [0, 0], min_ratio=0.8)
        empty = q.copy()
        empty[:, 1] = 0.0
        with pytest.raises(ValueError, match=MSG_EMPTY_UNIT.format(unit=1)[:20]):
            solve_rate_program(
                da_a,
                da.from_array(empty, chunks=(CHUNK, 3)),
                [0, 0, 0],
                sample_weight=da_w,
                max_difference=0.1,
            )


def test_a_dask_series_beside_in_memory_probabilities():
    """Only the margins partitioned (a Dask Series): the probabilities follow its partitions."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    a, q, _ = _problem(2)
    a, q = a[:5000], q[:5000]
    expected = solve_rate_program(a, q, [0, 0], min_ratio=0.9, working_set_size=400)
    with dask.config.set(scheduler="synchronous"):
        program = solve_rate_program(
            dd.from_pandas(pd.Series(a), npartitions=3),
            q,
            [0, 0],
            min_ratio=0.9,
            working_set_size=400,
        )
    _assert_same(program, expected)
