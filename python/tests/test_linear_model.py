"""strads.linear_model against scikit-learn's solvers, the optimality conditions and its own checks."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import linear_model as sk
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from strads.linear_model import ElasticNet, ElasticNetCV, Lasso, LassoCV, LogisticRegression, enet_path, lasso_path


def correlated(n=300, p=80, rho=0.8, support=10, seed=0, sparse=False):
    """Blocks of features correlated at rho, a sparse true model, noisy targets."""
    rng = np.random.default_rng(seed)
    shared = rng.standard_normal((n, p // 8)).repeat(8, axis=1)
    X = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.standard_normal((n, p))
    if sparse:
        X[rng.random((n, p)) < 0.7] = 0.0
    w = np.zeros(p)
    w[rng.choice(p, support, replace=False)] = rng.standard_normal(support) * 2
    y = X @ w + 1.5 + 0.3 * rng.standard_normal(n)
    return (sp.csr_matrix(X) if sparse else X), y


def squared_objective(X, y, w, b, alpha, l1_ratio):
    r = y - X @ w - b
    return r @ r / (2 * len(y)) + alpha * (l1_ratio * np.abs(w).sum() + 0.5 * (1 - l1_ratio) * w @ w)


def squared_kkt(X, y, w, b, alpha, l1_ratio, intercept=True):
    """The largest violation of the optimality conditions of the elastic net (and the intercept's)."""
    r = y - X @ w - b
    g = np.asarray(X.T @ r).ravel() / len(y) - alpha * (1 - l1_ratio) * w
    l1 = alpha * l1_ratio
    nonzero = w != 0
    violation = np.where(nonzero, np.abs(g - l1 * np.sign(w)), np.maximum(np.abs(g) - l1, 0))
    return max(violation.max(), abs(r.mean()) if intercept else 0.0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_squared_loss_reaches_scikit_learns_optimum(sparse, l1_ratio):
    X, y = correlated(sparse=sparse)
    alpha_max = np.abs(X.T @ (y - y.mean())).max() / (len(y) * l1_ratio)
    for ratio in [0.1, 0.01]:
        alpha = ratio * alpha_max
        ours = (Lasso(alpha=alpha, tol=1e-10) if l1_ratio == 1 else ElasticNet(alpha=alpha, l1_ratio=l1_ratio, tol=1e-10)).fit(X, y)
        theirs = sk.ElasticNet(alpha=alpha, l1_ratio=l1_ratio, tol=1e-12, max_iter=100_000).fit(X, y)
        mine = squared_objective(X, y, ours.coef_, ours.intercept_, alpha, l1_ratio)
        best = squared_objective(X, y, theirs.coef_, theirs.intercept_, alpha, l1_ratio)
        assert abs(mine - best) <= 1e-8 * best, (ratio, mine, best)
        assert squared_kkt(X, y, ours.coef_, ours.intercept_, alpha, l1_ratio) <= 1e-4 * alpha
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4 * np.abs(theirs.coef_).max())
        assert ours.dual_gap_ <= 1e-10
        assert ours.n_iter_ >= 1
        np.testing.assert_allclose(ours.predict(X), X @ ours.coef_ + ours.intercept_)


def test_without_intercept_the_intercept_is_zero():
    X, y = correlated(seed=2)
    model = Lasso(alpha=0.05, fit_intercept=False, tol=1e-10).fit(X, y)
    assert model.intercept_ == 0.0
    theirs = sk.Lasso(alpha=0.05, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(model.coef_, theirs.coef_, atol=1e-5)


def test_workers_and_seeds_give_the_same_model():
    X, y = correlated(n=2000, p=200, seed=3)
    one = Lasso(alpha=0.01, n_workers=1, random_state=7).fit(X, y)
    again = Lasso(alpha=0.01, n_workers=1, random_state=7).fit(X, y)
    two = Lasso(alpha=0.01, n_workers=2, random_state=7).fit(X, y)
    np.testing.assert_array_equal(one.coef_, again.coef_)
    # The block scheduler takes the one-worker path on any number of workers.
    np.testing.assert_array_equal(one.coef_, two.coef_)
    for scheduler in ["dynamic", "shotgun", "cyclic", "sequential"]:
        model = Lasso(alpha=0.01, scheduler=scheduler, n_workers=2, tol=1e-8, max_iter=None).fit(X, y)
        alpha = 0.01
        assert squared_kkt(X, y, model.coef_, model.intercept_, alpha, 1.0) <= 1e-3 * alpha, scheduler


def logistic_kkt(X, y01, w, b, C, l1_ratio):
    s = np.where(y01 == 1, 1.0, -1.0)
    z = X @ w + b
    u = s / (1 + np.exp(s * z))  # minus the loss' derivative
    g = C * np.asarray(X.T @ u).ravel() - (1 - l1_ratio) * w
    nonzero = w != 0
    violation = np.where(nonzero, np.abs(g - l1_ratio * np.sign(w)), np.maximum(np.abs(g) - l1_ratio, 0))
    return max(violation.max(), C * abs(u.sum()))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_logistic_regression_meets_its_optimality_conditions(sparse, l1_ratio):
    X, y = correlated(seed=4, sparse=sparse)
    labels = (y > np.median(y)).astype(int)
    for C in [0.05, 1.0]:
        model = LogisticRegression(C=C, l1_ratio=l1_ratio, tol=1e-10, max_iter=None).fit(X, labels)
        assert model.coef_.shape == (1, X.shape[1])
        # In units of the penalty weight (1): as the Rust tests, 1e-3 of it.
        assert logistic_kkt(X, labels, model.coef_[0], model.intercept_[0], C, l1_ratio) <= 1e-3
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])


def test_three_classes_one_against_the_rest_predict_as_well_as_scikit_learn():
    X, y = correlated(n=600, seed=5)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    ours = LogisticRegression(C=0.5).fit(X, labels)
    theirs = sk.LogisticRegression(C=0.5, max_iter=10_000).fit(X, labels)
    assert list(ours.classes_) == [0, 1, 2]
    assert ours.coef_.shape == (3, X.shape[1])
    assert ours.score(X, labels) >= theirs.score(X, labels) - 0.02


def test_grid_search_in_a_pipeline_chooses_scikit_learns_alpha():
    X, y = correlated(n=400, seed=6)
    grid = {"lasso__alpha": [0.003, 0.03, 0.3, 3.0]}
    ours = GridSearchCV(make_pipeline(StandardScaler(), Lasso(tol=1e-8)), grid, cv=3).fit(X, y)
    theirs = GridSearchCV(make_pipeline(StandardScaler(), sk.Lasso(tol=1e-10, max_iter=100_000)), grid, cv=3).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-5)


@pytest.mark.parametrize("sparse", [False, True])
def test_paths_follow_scikit_learns_grid_and_solutions(sparse):
    X, y = correlated(seed=7, sparse=sparse)
    alphas, coefs, gaps = lasso_path(X, y, n_alphas=15, tol=1e-10)
    theirs_alphas, theirs_coefs, _ = sk.lasso_path(X, y, alphas=15, tol=1e-12, max_iter=100_000)
    np.testing.assert_allclose(alphas, theirs_alphas, rtol=1e-12)
    assert coefs.shape == theirs_coefs.shape == (X.shape[1], 15)
    assert np.all(gaps <= 1e-10)
    for k, alpha in enumerate(alphas):
        assert squared_kkt(X, y, coefs[:, k], 0.0, alpha, 1.0, intercept=False) <= 1e-4 * alpha
        mine = squared_objective(X, y, coefs[:, k], 0.0, alpha, 1.0)
        best = squared_objective(X, y, theirs_coefs[:, k], 0.0, alpha, 1.0)
        assert mine <= best * (1 + 1e-8), (k, mine, best)
    # A given grid, in any order, comes back largest first, each weight fitted on its own.
    grid = [0.01, 0.3, 0.1]
    alphas, coefs, _ = enet_path(X, y, l1_ratio=0.5, alphas=grid, tol=1e-10)
    np.testing.assert_array_equal(alphas, [0.3, 0.1, 0.01])
    for k, alpha in enumerate(alphas):
        theirs = sk.ElasticNet(alpha=alpha, l1_ratio=0.5, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(X, y)
        mine = squared_objective(X, y, coefs[:, k], 0.0, alpha, 0.5)
        assert mine <= squared_objective(X, y, theirs.coef_, 0.0, alpha, 0.5) * (1 + 1e-8)


def test_cross_validation_chooses_scikit_learns_weight():
    X, y = correlated(n=250, seed=8)
    ours = LassoCV(cv=5, tol=1e-10).fit(X, y)
    theirs = sk.LassoCV(cv=5, tol=1e-12, max_iter=100_000).fit(X, y)
    assert ours.alpha_ == pytest.approx(theirs.alpha_, rel=1e-12)
    np.testing.assert_allclose(ours.alphas_, theirs.alphas_, rtol=1e-12)
    np.testing.assert_allclose(ours.mse_path_, theirs.mse_path_, rtol=1e-4)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4 * np.abs(theirs.coef_).max())
    ours = ElasticNetCV(l1_ratio=[0.3, 0.9], alphas=20, cv=3, tol=1e-10).fit(X, y)
    theirs = sk.ElasticNetCV(l1_ratio=[0.3, 0.9], alphas=20, cv=3, tol=1e-12, max_iter=100_000).fit(X, y)
    assert (ours.l1_ratio_, ours.alpha_) == (theirs.l1_ratio_, pytest.approx(theirs.alpha_, rel=1e-12))
    assert ours.mse_path_.shape == theirs.mse_path_.shape == (2, 20, 3)
    np.testing.assert_allclose(ours.mse_path_, theirs.mse_path_, rtol=1e-4)


def test_features_far_from_zero_mean_need_no_centring():
    X, y = correlated(n=300, p=16, seed=9)
    labels = (y > np.median(y)).astype(int)
    shifted = X + 100.0
    # tol 1e-9: with features around 100 the relative gap bottoms out near 7e-10 (README).
    lasso = Lasso(alpha=0.05, tol=1e-9, max_iter=50).fit(shifted, y)
    centred = Lasso(alpha=0.05, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(lasso.coef_, centred.coef_, atol=1e-6)
    assert lasso.intercept_ == pytest.approx(centred.intercept_ - 100.0 * centred.coef_.sum(), abs=1e-5)
    logistic = LogisticRegression(C=0.1, tol=1e-10, max_iter=50).fit(shifted, labels)
    reference = LogisticRegression(C=0.1, tol=1e-10, max_iter=None).fit(X, labels)
    np.testing.assert_allclose(logistic.coef_, reference.coef_, atol=1e-5)
    expected = reference.intercept_ - 100.0 * reference.coef_.sum()
    np.testing.assert_allclose(logistic.intercept_, expected, atol=1e-3)


def test_bad_settings_raise_value_errors():
    X, y = correlated(n=50, p=16)
    for model in [
        Lasso(alpha=-1.0),
        Lasso(scheduler="fastest"),
        Lasso(n_workers=0),
        Lasso(tol=0.0),
        ElasticNet(l1_ratio=0.0),
        LogisticRegression(C=0.0),
    ]:
        target = (y > 0).astype(int) if isinstance(model, LogisticRegression) else y
        with pytest.raises(ValueError):
            model.fit(X, target)
    X[3, 2] = np.nan
    with pytest.raises(ValueError):
        Lasso().fit(X, y)


@parametrize_with_checks(
    [Lasso(), ElasticNet(), LogisticRegression(), LassoCV(alphas=10, cv=3, tol=1e-8), ElasticNetCV(alphas=10, cv=3, tol=1e-8)]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_positive_coefficients_reach_scikit_learns_constrained_optimum(sparse, fit_intercept):
    from sklearn.linear_model import ElasticNet as SkElasticNet
    from sklearn.linear_model import Lasso as SkLasso

    rng = np.random.default_rng(11)
    X = rng.standard_normal((120, 30))
    X[np.abs(X) < 0.6] = 0.0
    y = X @ rng.standard_normal(30) + 0.3 * rng.standard_normal(120)
    data = sp.csc_matrix(X) if sparse else X
    for ours, theirs in [
        (Lasso(alpha=0.02, positive=True, tol=1e-12, fit_intercept=fit_intercept),
         SkLasso(alpha=0.02, positive=True, tol=1e-14, max_iter=100_000, fit_intercept=fit_intercept)),
        (ElasticNet(alpha=0.05, l1_ratio=0.6, positive=True, tol=1e-12, fit_intercept=fit_intercept),
         SkElasticNet(alpha=0.05, l1_ratio=0.6, positive=True, tol=1e-14, max_iter=100_000, fit_intercept=fit_intercept)),
    ]:
        ours.fit(data, y)
        theirs.fit(X, y)
        assert ours.coef_.min() >= 0.0
        # The constraint binds here: the free fit has negative coefficients.
        free = type(ours)(**{**ours.get_params(), "positive": False}).fit(data, y)
        assert free.coef_.min() < 0.0
        np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-6, atol=1e-8)
        assert ours.intercept_ == pytest.approx(theirs.intercept_, rel=1e-6, abs=1e-8)

    path_alphas, coefs, _ = lasso_path(X, y, positive=True, n_alphas=10, tol=1e-10)
    assert coefs.min() >= 0.0
    from sklearn.linear_model import lasso_path as sk_lasso_path

    _, sk_coefs, _ = sk_lasso_path(X, y, positive=True, alphas=path_alphas, tol=1e-12, max_iter=100_000)
    np.testing.assert_allclose(coefs, sk_coefs, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_sample_weights_reach_scikit_learns_weighted_optimum(sparse, fit_intercept, l1_ratio):
    X, y = correlated(sparse=sparse, seed=5)
    weights = np.random.default_rng(6).uniform(0.0, 3.0, len(y))
    weights[::7] = 0.0
    dense = X.toarray() if sparse else X
    # The weighted objective, weights rescaled to sum to n as scikit-learn rescales them.
    w = weights * len(y) / weights.sum()
    mean = np.average(y, weights=w) if fit_intercept else 0.0
    alpha = 0.05 * np.abs(dense.T @ (w * (y - mean))).max() / (len(y) * l1_ratio)

    def objective(coef, intercept):
        r = y - dense @ coef - intercept
        return (w * r * r).sum() / (2 * len(y)) + alpha * (l1_ratio * np.abs(coef).sum() + 0.5 * (1 - l1_ratio) * coef @ coef)

    ours = ElasticNet(alpha=alpha, l1_ratio=l1_ratio, fit_intercept=fit_intercept, tol=1e-11).fit(X, y, sample_weight=weights)
    theirs = sk.ElasticNet(alpha=alpha, l1_ratio=l1_ratio, fit_intercept=fit_intercept, tol=1e-13, max_iter=100_000)
    theirs.fit(dense, y, sample_weight=weights)
    mine, best = objective(ours.coef_, ours.intercept_), objective(theirs.coef_, theirs.intercept_)
    assert abs(mine - best) <= 1e-8 * best, (mine, best)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5 * np.abs(theirs.coef_).max())
    assert ours.intercept_ == pytest.approx(theirs.intercept_, rel=1e-6, abs=1e-8)
    # Integer weights are repeated rows.
    counts = np.random.default_rng(7).integers(0, 4, len(y))
    repeated = np.repeat(np.arange(len(y)), counts)
    by_weight = Lasso(alpha=alpha, fit_intercept=fit_intercept, tol=1e-12).fit(X, y, sample_weight=counts)
    by_rows = Lasso(alpha=alpha, fit_intercept=fit_intercept, tol=1e-12).fit(X[repeated], y[repeated])
    np.testing.assert_allclose(by_weight.coef_, by_rows.coef_, rtol=1e-6, atol=1e-9)
    assert by_weight.intercept_ == pytest.approx(by_rows.intercept_, rel=1e-6, abs=1e-9)


def test_bad_sample_weights_raise():
    X, y = correlated(n=50, p=16, support=4)
    for bad, message in [
        (np.ones(49), "sample_weight"),
        (np.r_[np.ones(49), -1.0], ">= 0|[Nn]egative"),
        (np.r_[np.ones(49), np.nan], "NaN|finite"),
        (np.zeros(50), "all zero|non-zero"),
    ]:
        with pytest.raises(ValueError, match=message):
            Lasso(alpha=0.1).fit(X, y, sample_weight=bad)
    # A scalar weighs every row alike: the unweighted model.
    np.testing.assert_array_equal(Lasso(alpha=0.1).fit(X, y, sample_weight=3.0).coef_, Lasso(alpha=0.1).fit(X, y).coef_)


def test_weighted_cross_validation_scores_folds_by_weight():
    X, y = correlated(n=200, p=40, seed=8)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, len(y))
    model = LassoCV(alphas=8, cv=3, tol=1e-10).fit(X, y, sample_weight=weights)
    # The chosen weight's fit on all rows is the weighted Lasso at that weight.
    single = Lasso(alpha=model.alpha_, tol=1e-10).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(model.coef_, single.coef_, rtol=1e-7, atol=1e-10)
    # Each fold's error is the weighted mean of its squared errors, as scikit-learn scores it.
    from sklearn.model_selection import KFold

    _, first_test = next(KFold(3).split(X))
    train = np.setdiff1d(np.arange(len(y)), first_test)
    fold = Lasso(alpha=model.alphas_[0], tol=1e-10).fit(X[train], y[train], sample_weight=weights[train])
    error = np.average((fold.predict(X[first_test]) - y[first_test]) ** 2, weights=weights[first_test])
    assert model.mse_path_[0, 0] == pytest.approx(error, rel=1e-6)


def test_warm_start_begins_at_the_previous_fit_and_reaches_the_same_model():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((200, 60))
    y = X[:, :6] @ rng.standard_normal(6) + 0.2 * rng.standard_normal(200)
    cold = Lasso(alpha=0.01, tol=1e-10).fit(X, y)
    model = Lasso(alpha=0.05, tol=1e-10, warm_start=True).fit(X, y)
    first_rounds = model.n_iter_
    model.set_params(alpha=0.01).fit(X, y)
    np.testing.assert_allclose(model.coef_, cold.coef_, rtol=1e-7, atol=1e-9)
    assert model.intercept_ == pytest.approx(cold.intercept_, rel=1e-7)
    # Refitting at the same alpha starts at the optimum: one round of updates at most.
    model.fit(X, y)
    assert model.n_iter_ <= 1 < cold.n_iter_, (model.n_iter_, cold.n_iter_, first_rounds)
    # Without warm_start, a refit starts from zero again.
    again = Lasso(alpha=0.01, tol=1e-10).fit(X, y).fit(X, y)
    assert again.n_iter_ == cold.n_iter_

    labels = np.array(["a", "b", "c"])[rng.integers(0, 3, 200)]
    clf = LogisticRegression(C=0.5, tol=1e-10, warm_start=True).fit(X, labels)
    reference = LogisticRegression(C=0.5, tol=1e-10).fit(X, labels)
    before = clf.n_iter_.copy()
    clf.fit(X, labels)
    assert np.all(clf.n_iter_ <= 1) and np.all(before > 1)
    np.testing.assert_allclose(clf.coef_, reference.coef_, rtol=1e-6, atol=1e-8)
