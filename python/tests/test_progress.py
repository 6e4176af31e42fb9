"""Progress callbacks, and fits ended early by Ctrl-C or by a callback that raises."""

import signal
import threading
import time
import _thread

import numpy as np
import pytest

import strads
from strads.decomposition import LatentDirichletAllocation
from strads.linear_model import Lasso, LogisticRegression

from test_topic import fitted, planted


def regression(n=200, p=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, :5] @ np.arange(1.0, 6.0) + 0.1 * rng.standard_normal(n)


def test_the_callback_sees_every_gap_check_and_the_last_is_the_model():
    X, y = regression()
    points = []
    model = Lasso(alpha=0.01, tol=1e-10, callback=points.append).fit(X, y)
    assert len(points) >= 2
    assert [p["round"] for p in points] == sorted(p["round"] for p in points)
    assert points[0]["nnz"] == 0  # the check before the first update
    assert points[-1]["duality_gap"] == pytest.approx(model.dual_gap_)
    assert points[-1]["nnz"] == np.count_nonzero(model.coef_)
    # A callback does not change the model.
    np.testing.assert_array_equal(model.coef_, Lasso(alpha=0.01, tol=1e-10).fit(X, y).coef_)

    labels = y > np.median(y)
    seen = []
    LogisticRegression(C=1.0, callback=seen.append).fit(X, labels)
    assert seen and all(0 <= p["duality_gap"] for p in seen)


def test_verbose_prints_a_line_per_check(capsys):
    X, y = regression()
    Lasso(alpha=0.01, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("strads Lasso: ") and "duality_gap=" in line for line in lines)


class Enough(Exception):
    pass


def test_a_callback_that_raises_ends_the_fit_with_its_exception():
    X, y = regression()

    def give_up(point):
        raise Enough(f"at round {point['round']}")

    with pytest.raises(Enough, match="at round 0"):
        Lasso(alpha=0.001, tol=1e-12, callback=give_up).fit(X, y)

    docs, _ = planted(documents=50)
    model = fitted(docs).train(10)
    before = model.get_topic_word_dist(0)
    with pytest.raises(Enough):
        model.train(20, callback=lambda p: (_ for _ in ()).throw(Enough("stop")))
    # The model is the one before the call.
    assert model.global_step == 10
    np.testing.assert_array_equal(model.get_topic_word_dist(0), before)

    rng = np.random.default_rng(1)
    users, items = rng.integers(0, 30, 300), rng.integers(0, 20, 300)
    keys = np.unique(users * 20 + items)
    with pytest.raises(Enough):
        strads.MF(rank=3, callback=give_up_mf).fit(users=keys // 20, items=keys % 20, ratings=np.ones(keys.size))
    with pytest.raises(ValueError, match="callback"):
        Lasso(callback=3).fit(X, y)


def give_up_mf(point):
    raise Enough(f"at iteration {point['iteration']}")


class Overran(Exception):
    pass


@pytest.fixture
def ctrl_c():
    """`ctrl_c(seconds)` sends Ctrl-C to this process after `seconds`, as a terminal would; returns
    a callback recording each progress point's iteration that raises `Overran` once a fit has
    outlived the interruption by 30 s, so a fit Ctrl-C does not end fails instead of running on.

    Python's own SIGINT handler is installed for the test: a process started in the background
    inherits SIGINT ignored, and then Python never raises KeyboardInterrupt."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timers = []

    def arm(seconds):
        timer = threading.Timer(seconds, _thread.interrupt_main)
        timer.start()
        timers.append(timer)
        deadline = time.monotonic() + seconds + 30.0
        seen = []

        def record(point):
            seen.append(point["iteration"])
            if time.monotonic() > deadline:
                raise Overran(f"still running at iteration {point['iteration']}, 30 s after Ctrl-C")

        return seen, record

    yield arm
    for timer in timers:
        timer.cancel()
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_a_long_topic_model_training(ctrl_c):
    docs, _ = planted(documents=100)
    model = fitted(docs)
    total = 1_000_000  # about a minute per 300k iterations here: far longer than the interruption
    seen, record = ctrl_c(0.3)
    with pytest.raises(KeyboardInterrupt):
        model.train(total, workers=2, callback=record)
    assert seen and seen[-1] < total
    assert model.global_step == 0


def test_ctrl_c_interrupts_a_long_factorization_and_decomposition(ctrl_c):
    rng = np.random.default_rng(2)
    keys = np.unique(rng.integers(0, 400 * 300, 20_000))
    seen, record = ctrl_c(0.3)
    with pytest.raises(KeyboardInterrupt):
        strads.MF(rank=20, iterations=1_000_000, validation=0.0, tol=0.0, callback=record).fit(
            users=keys // 300, items=keys % 300, ratings=rng.random(keys.size)
        )
    assert seen and seen[-1] < 1_000_000

    docs, _ = planted(documents=100)
    counts = np.zeros((len(docs), 100))
    for d, doc in enumerate(docs):
        for word in doc:
            t, w = word[1:].split("w")
            counts[d, int(t) * 25 + int(w)] += 1
    seen, record = ctrl_c(0.3)
    with pytest.raises(KeyboardInterrupt):
        LatentDirichletAllocation(4, max_iter=1_000_000, callback=record).fit(counts)
    assert seen and seen[-1] < 1_000_000


def test_fitted_models_pickle_and_predict_the_same():
    import pickle

    X, y = regression()
    for model in [Lasso(alpha=0.05).fit(X, y), LogisticRegression(C=0.5).fit(X, y > 0)]:
        again = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(again.predict(X), model.predict(X))
        np.testing.assert_array_equal(again.coef_, model.coef_)

    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 30 * 20, 300))
    mf = strads.MF(rank=3).fit(users=keys // 20, items=keys % 20, ratings=rng.random(keys.size))
    again = pickle.loads(pickle.dumps(mf))
    np.testing.assert_array_equal(again.predict(keys // 20, keys % 20), mf.predict(keys // 20, keys % 20))

    docs, _ = planted(documents=60)
    lda = fitted(docs).train(20)
    again = pickle.loads(pickle.dumps(lda))
    assert again.ll_per_word == lda.ll_per_word
    assert again.get_topic_words(0, 5) == lda.get_topic_words(0, 5)
    np.testing.assert_array_equal(again.infer(docs[0], seed=4), lda.infer(docs[0], seed=4))
    # A pickled model trains on as the original does.
    assert again.train(5).ll_per_word == lda.train(5).ll_per_word


def test_float32_and_every_sparse_layout_give_the_float64_model():
    import scipy.sparse as sp

    X, y = regression()
    X[np.abs(X) < 0.8] = 0.0
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    reference = Lasso(alpha=0.02, tol=1e-10).fit(X32.astype(np.float64), y32.astype(np.float64))
    for given in [X32, sp.csr_matrix(X32), sp.csc_matrix(X32), sp.coo_matrix(X32), sp.csr_matrix(X32.astype(np.float64))]:
        model = Lasso(alpha=0.02, tol=1e-10).fit(given, y32)
        np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(model.predict(given), reference.predict(X32.astype(np.float64)), rtol=1e-6, atol=1e-6)


def test_memory_layouts_give_the_same_model_to_the_last_bit():
    import scipy.sparse as sp

    X, y = regression(n=150, p=40, seed=5)
    X[np.abs(X) < 0.5] = 0.0
    for fit_intercept in [False, True]:
        fit = lambda data: Lasso(alpha=0.01, tol=1e-12, fit_intercept=fit_intercept).fit(data, y)
        dense = fit(np.ascontiguousarray(X))
        np.testing.assert_array_equal(fit(np.asfortranarray(X)).coef_, dense.coef_)
        rows = fit(sp.csr_matrix(X))
        np.testing.assert_array_equal(fit(sp.csc_matrix(X)).coef_, rows.coef_)
        assert fit(sp.csc_matrix(X)).intercept_ == rows.intercept_
        np.testing.assert_allclose(rows.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    # A matrix with duplicates and unsorted indices means their sums.
    messy = sp.csc_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])), shape=(3, 1))
    assert not messy.has_canonical_format
    target = np.array([1.0, 0.0, 2.0])
    np.testing.assert_allclose(
        Lasso(alpha=1e-3, fit_intercept=False, tol=1e-12).fit(messy, target).coef_,
        Lasso(alpha=1e-3, fit_intercept=False, tol=1e-12).fit(messy.toarray(), target).coef_,
        rtol=1e-9,
    )


def test_engine_failures_raise_strads_engine_error_with_the_rust_message():
    from strads import _strads

    X, y = regression()
    settings = dict(
        loss="squared", alpha=0.1, l1_ratio=1.0, fit_intercept=False, positive=False, warm_coef=None,
        warm_intercept=0.0, tol=1e-6, max_iter=None, n_workers=0, scheduler="block", seed=0, path=None,
        path_top=None, callback=None,
    )
    with pytest.raises(strads.EngineError, match="at least 1"):
        _strads.fit_linear_dense(X, y, settings)
    assert issubclass(strads.EngineError, RuntimeError)


def test_default_workers_are_every_core_except_for_tiny_corpora():
    import os

    from strads.topic import default_workers

    cores = os.cpu_count() or 1
    assert default_workers(49_999, 1000) == 1
    assert default_workers(50_000, 1000) == min(cores, 1000)
    assert default_workers(10**6, 1) == 1
    small, _ = planted(documents=50)
    assert fitted(small).train(10).ll_per_word == fitted(small).train(10, workers=1).ll_per_word
    large, _ = planted(documents=1300)  # 52,000 tokens
    assert fitted(large).train(2).ll_per_word == fitted(large).train(2, workers=min(cores, 1300)).ll_per_word

    rng = np.random.default_rng(4)
    keys = np.unique(rng.integers(0, 40 * 30, 500))
    data = dict(users=keys // 30, items=keys % 30, ratings=rng.random(keys.size))
    np.testing.assert_array_equal(
        strads.MF(rank=3).fit(**data).user_factors, strads.MF(rank=3, n_workers=cores).fit(**data).user_factors
    )
