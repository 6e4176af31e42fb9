"""Sparse linear models in scikit-learn's shape, fitted by strads' scheduled coordinate descent.

``Lasso``, ``ElasticNet`` and ``LogisticRegression`` take scikit-learn's parameter names and
meanings and set its fitted attributes (``coef_``, ``intercept_``, ``n_iter_``, ``dual_gap_``,
``n_features_in_``), so they drop into a ``Pipeline`` or ``GridSearchCV``. The objectives are
scikit-learn's:

- ``Lasso`` and ``ElasticNet``: ``||y - Xw - b||^2 / (2 n) + alpha l1_ratio ||w||_1
  + alpha (1 - l1_ratio) ||w||^2 / 2``;
- ``LogisticRegression``: ``C sum log(1 + exp(-y_i (x_i w + b))) + l1_ratio ||w||_1
  + (1 - l1_ratio) ||w||^2 / 2``, one-vs-rest for more than two classes (as liblinear).

``fit`` of the squared-loss estimators takes scikit-learn's ``sample_weight``.

strads' own settings are extra keywords: ``n_workers`` (worker threads; ``None`` chooses 1 below
2 million stored values, where a second thread's wake-up costs more than it saves, and every core
above), ``scheduler`` (``"block"``, the default, or STRADS' ``"dynamic"``, ``"shotgun"``,
``"cyclic"``, ``"sequential"``). ``tol`` is the relative duality gap at which a fit stops, and
``max_iter`` caps strads' rounds (a round solves the working set in up to several passes).
"""

import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.model_selection import check_cv
from sklearn.utils import check_array, check_consistent_length, column_or_1d
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from strads import _strads
from strads._progress import progress

__all__ = ["Lasso", "ElasticNet", "LogisticRegression", "LassoCV", "ElasticNetCV", "lasso_path", "enet_path"]

# Below this many stored values one worker is faster: the second worker's share of a round (in
# the block scheduler, of the large gap checks) is smaller than the cost of waking its thread. On
# 2 cores, 2 workers took 1.10-1.22x of one worker's time on a dense 2000 x 500 array, 0.99-1.01x at
# 4000 x 500 and 0.79-0.80x at 8000 x 1000; on sparse problems 1.0-1.17x at 1M nonzeros, 0.72-0.94x at
# 2M and 0.78-0.86x at 5M (bench/results/python-weights-2026-12-08.md).
_SPLIT_VALUES = 2_000_000


def _workers(n_workers, X):
    if n_workers is None:
        stored = X.nnz if sp.issparse(X) else X.size
        return 1 if stored < _SPLIT_VALUES else max(1, os.cpu_count() or 1)
    if not isinstance(n_workers, numbers.Integral) or n_workers < 1:
        raise ValueError(f"n_workers must be None or an integer >= 1, got {n_workers!r}")
    return int(n_workers)


def _check_unit(name, value, low_open=False):
    if not isinstance(value, numbers.Real) or not (0 < value <= 1 if low_open else 0 <= value <= 1):
        interval = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")


def _check_positive(name, value):
    if not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")


def _fit(
    X,
    y,
    *,
    loss,
    alpha,
    l1_ratio,
    fit_intercept,
    tol,
    max_iter,
    n_workers,
    scheduler,
    seed,
    positive=False,
    warm=None,
    path=None,
    path_top=None,
    callback=None,
    sample_weight=None,
):
    """Runs strads on validated X (float64 or float32; CSR, CSC or dense in any layout) and y; returns its dict.

    ``sample_weight`` (checked by :func:`_weights`, or None) weighs each row's squared error; strads
    rescales the weights to sum to the number of rows, as scikit-learn does.

    ``callback`` gets a dict of each duality-gap check (round, seconds, objective, duality_gap,
    nnz, updates, lambda); Ctrl-C, or an exception the callback raises, ends the fit with it."""
    if max_iter is not None and (not isinstance(max_iter, numbers.Integral) or max_iter < 1):
        raise ValueError(f"max_iter must be None or an integer >= 1, got {max_iter!r}")
    _check_positive("tol", tol)
    settings = dict(
        loss=loss,
        alpha=float(alpha),
        l1_ratio=float(l1_ratio),
        fit_intercept=bool(fit_intercept),
        positive=bool(positive),
        warm_coef=None if warm is None else np.ascontiguousarray(warm[0], dtype=np.float64),
        warm_intercept=0.0 if warm is None else float(warm[1]),
        tol=float(tol),
        max_iter=None if max_iter is None else int(max_iter),
        n_workers=_workers(n_workers, X),
        scheduler=str(scheduler),
        seed=0 if seed is None else int(seed),
        path=None if path is None else int(path),
        path_top=None if path_top is None else float(path_top),
        callback=callback,
    )
    y = np.ascontiguousarray(y, dtype=np.float64)
    weights = None if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=np.float64)
    if sp.issparse(X):
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        values = X.data if X.data.dtype in (np.float64, np.float32) else X.data.astype(np.float64)
        # Columns go to strads as they are; rows are transposed there once.
        return _strads.fit_linear_sparse(
            np.ascontiguousarray(X.indptr, dtype=np.uint64),
            np.ascontiguousarray(X.indices, dtype=np.uint32),
            values,
            X.shape,
            X.format == "csc",
            y,
            settings,
            weights,
        )
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    return _strads.fit_linear_dense(X, y, settings, weights)


def _weights(sample_weight, X):
    """scikit-learn's checks of ``sample_weight`` (None, a number, or one finite weight >= 0 per
    row, not all zero) as a float64 array, or None for no weights."""
    if sample_weight is None:
        return None
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("sample_weight must be finite and >= 0")
    if not weights.sum() > 0:
        raise ValueError("sample_weight must not be all zero")
    return weights


def _seed(random_state):
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral) and random_state >= 0:
        return int(random_state)
    raise ValueError(f"random_state must be None or an integer >= 0, got {random_state!r}")


def _warn_unconverged(result, tol):
    if not result["converged"]:
        warnings.warn(
            f"strads stopped ({result['status']}) at a relative duality gap of {result['dual_gap']:.3g}, "
            f"above tol={tol}; raise max_iter",
            ConvergenceWarning,
        )


class ElasticNet(RegressorMixin, BaseEstimator):
    """Linear regression with combined L1 and L2 penalties, by strads' scheduled coordinate descent.

    Minimizes ``||y - Xw - b||^2 / (2 n) + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio) ||w||^2 / 2``,
    scikit-learn's ``ElasticNet`` objective.

    Parameters
    ----------
    alpha : float, default=1.0
        The weight of the penalty (> 0).
    l1_ratio : float, default=0.5
        The share of the L1 term, in (0, 1]: 1 is the Lasso.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept ``b``.
    max_iter : int or None, default=1000
        Most rounds of strads (each solves the working set in up to several passes).
    tol : float, default=1e-4
        Relative duality gap at which the fit stops.
    warm_start : bool, default=False
        Start from the previous fit's coefficients (and intercept) instead of zero.
    positive : bool, default=False
        Constrain every coefficient to be >= 0.
    random_state : int or None, default=None
        Seed of strads' random choices (None is 0): a seed and ``n_workers`` give the same model.
    n_workers : int or None, default=None
        Worker threads; None chooses 1 below 2 million stored values and every core above.
    scheduler : str, default="block"
        strads' scheduler: "block", "dynamic" (STRADS' priorities and dependency check),
        "shotgun", "cyclic" or "sequential".
    verbose : int, default=0
        Print a line at each duality-gap check.
    callback : callable or None, default=None
        Called with a dict of each duality-gap check (``round``, ``seconds``, ``objective``,
        ``duality_gap``, ``nnz``, ``updates``, ``lambda``); an exception it raises ends the fit
        and propagates, as Ctrl-C does (KeyboardInterrupt).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        strads' rounds (at least 1: the first duality-gap check).
    dual_gap_ : float
        The relative duality gap at the end.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Set when X has string feature names.
    """

    def __init__(
        self,
        alpha=1.0,
        *,
        l1_ratio=0.5,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-4,
        warm_start=False,
        positive=False,
        random_state=None,
        n_workers=None,
        scheduler="block",
        verbose=0,
        callback=None,
    ):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.callback = callback

    def fit(self, X, y, sample_weight=None):
        """Fits the model to X (array or scipy sparse matrix, n_samples x n_features) and y; a row's
        squared error counts ``sample_weight`` times (weights rescaled to sum to n_samples)."""
        _check_positive("alpha", self.alpha)
        l1_ratio = self._l1_ratio()
        _check_unit("l1_ratio", l1_ratio, low_open=True)
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], y_numeric=True)
        result = _fit(
            X,
            y,
            loss="squared",
            alpha=self.alpha,
            l1_ratio=l1_ratio,
            fit_intercept=self.fit_intercept,
            tol=self.tol,
            max_iter=self.max_iter,
            n_workers=self.n_workers,
            scheduler=self.scheduler,
            positive=self.positive,
            warm=self._warm(X.shape[1]),
            seed=_seed(self.random_state),
            callback=progress(self.callback, self.verbose, type(self).__name__),
            sample_weight=_weights(sample_weight, X),
        )
        _warn_unconverged(result, self.tol)
        self.coef_ = np.asarray(result["coef"], dtype=np.float64)
        self.intercept_ = float(result["intercept"])
        self.n_iter_ = max(1, int(result["n_iter"]))
        self.dual_gap_ = float(result["dual_gap"])
        return self

    def _l1_ratio(self):
        return self.l1_ratio

    def _warm(self, features):
        """The previous fit's model when ``warm_start`` asks to start from it and it fits these features."""
        if self.warm_start and getattr(self, "coef_", None) is not None and self.coef_.shape == (features,):
            return self.coef_, self.intercept_ if self.fit_intercept else 0.0
        return None

    @property
    def sparse_coef_(self):
        """``coef_`` as a scipy sparse row."""
        return sp.csr_matrix(self.coef_)

    def predict(self, X):
        """``X w + b``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class Lasso(ElasticNet):
    """The Lasso, by strads' scheduled coordinate descent.

    Minimizes ``||y - Xw - b||^2 / (2 n) + alpha ||w||_1``, scikit-learn's ``Lasso`` objective.
    Parameters and attributes are those of :class:`ElasticNet` without ``l1_ratio``.
    """

    def __init__(
        self,
        alpha=1.0,
        *,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-4,
        warm_start=False,
        positive=False,
        random_state=None,
        n_workers=None,
        scheduler="block",
        verbose=0,
        callback=None,
    ):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.callback = callback

    def _l1_ratio(self):
        return 1.0


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Sparse (L1 or elastic-net) logistic regression, by strads' scheduled coordinate descent.

    Minimizes ``C sum log(1 + exp(-y_i (x_i w + b))) + l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2``
    with labels ``y_i`` in {-1, 1}, scikit-learn's objective for ``LogisticRegression(penalty=
    "elasticnet")``; with more than two classes, one such model per class against the rest (as
    liblinear), whose probabilities are normalized to sum to 1.

    Parameters
    ----------
    C : float, default=1.0
        The inverse of the penalty's weight (> 0).
    l1_ratio : float, default=1.0
        The share of the L1 term, in (0, 1]: 1 (the default) is the L1 penalty.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.
    max_iter : int or None, default=100
        Most rounds of strads per class.
    tol : float, default=1e-4
        Relative duality gap at which a fit stops.
    warm_start, random_state, n_workers, scheduler, verbose, callback
        As for :class:`ElasticNet`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : ndarray of shape (1,) or (n_classes,)
    dual_gap_ : ndarray of shape (1,) or (n_classes,)
    n_features_in_ : int
    """

    def __init__(
        self,
        C=1.0,
        *,
        l1_ratio=1.0,
        fit_intercept=True,
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        random_state=None,
        n_workers=None,
        scheduler="block",
        verbose=0,
        callback=None,
    ):
        self.C = C
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.callback = callback

    def fit(self, X, y):
        """Fits the model to X (array or scipy sparse matrix) and class labels y."""
        _check_positive("C", self.C)
        _check_unit("l1_ratio", self.l1_ratio, low_open=True)
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32])
        check_classification_targets(y)
        previous = tuple(getattr(self, name, None) for name in ("classes_", "coef_", "intercept_"))
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"This solver needs samples of at least 2 classes in the data, but the data contains only one class: {self.classes_[0]!r}"
            )
        # C sum loss + penalty is n C times strads' sum loss / n + penalty / (n C).
        alpha = 1.0 / (self.C * X.shape[0])
        targets = [1] if len(self.classes_) == 2 else range(len(self.classes_))
        # warm_start: each class's model from the previous fit, when it had the same classes and features.
        warm = None
        if self.warm_start and previous[1] is not None and np.array_equal(previous[0], self.classes_):
            if previous[1].shape == (len(targets), X.shape[1]):
                warm = previous
        coef, intercept, n_iter, gaps = [], [], [], []
        for k in targets:
            signs = np.where(encoded == k, 1.0, -1.0)
            result = _fit(
                X,
                signs,
                loss="logistic",
                alpha=alpha,
                l1_ratio=self.l1_ratio,
                fit_intercept=self.fit_intercept,
                tol=self.tol,
                max_iter=self.max_iter,
                n_workers=self.n_workers,
                scheduler=self.scheduler,
                seed=_seed(self.random_state),
                warm=None if warm is None else (warm[1][len(coef)], warm[2][len(coef)] if self.fit_intercept else 0.0),
                callback=progress(self.callback, self.verbose, f"{type(self).__name__} class {self.classes_[k]!r}"),
            )
            _warn_unconverged(result, self.tol)
            coef.append(np.asarray(result["coef"], dtype=np.float64))
            intercept.append(float(result["intercept"]))
            n_iter.append(max(1, int(result["n_iter"])))
            gaps.append(float(result["dual_gap"]))
        self.coef_ = np.vstack(coef)
        self.intercept_ = np.asarray(intercept)
        self.n_iter_ = np.asarray(n_iter, dtype=np.int32)
        self.dual_gap_ = np.asarray(gaps)
        return self

    def decision_function(self, X):
        """Margins: shape (n_samples,) for two classes, (n_samples, n_classes) for more."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=np.float64, reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities, in the order of ``classes_``."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - positive, positive])
        each = 1.0 / (1.0 + np.exp(-scores))
        return each / each.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """The logarithm of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class of each sample."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _alpha_max(X, y, l1_ratio, fit_intercept, sample_weight=None):
    """The smallest weight at which every coefficient is zero: ``||X^T W (y - mean)||_inf / (n l1_ratio)``
    (``W`` the weights rescaled to sum to n, ``mean`` their weighted mean of ``y``)."""
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else sample_weight * (n / sample_weight.sum())
    centred = y - np.average(y, weights=w) if fit_intercept else y
    return float(np.abs(np.asarray(X.T @ (w * centred))).max()) / (n * l1_ratio)


def _grid(X, y, *, l1_ratio, fit_intercept, eps, n_alphas, alphas, sample_weight=None):
    """The weights, largest first, and whether they are the geometric grid strads' paths walk."""
    if alphas is None or isinstance(alphas, numbers.Integral):
        n = n_alphas if alphas is None else int(alphas)
        if n < 1:
            raise ValueError(f"the number of alphas must be >= 1, got {n}")
        _check_unit("eps", eps, low_open=True)
        top = _alpha_max(X, y, l1_ratio, fit_intercept, sample_weight)
        if top <= 0:
            # Constant targets: every weight gives the zero model.
            return np.full(n, np.finfo(float).eps), False
        return np.geomspace(top, top * eps, num=n), n >= 2 and eps < 1
    grid = np.sort(np.asarray(alphas, dtype=np.float64).ravel())[::-1]
    if grid.size == 0 or not np.all(np.isfinite(grid)) or grid[-1] <= 0:
        raise ValueError("alphas must be a non-empty list of finite weights > 0")
    return grid, False


def _path(
    X,
    y,
    grid,
    geometric,
    *,
    loss="squared",
    l1_ratio,
    fit_intercept,
    tol,
    max_iter,
    n_workers,
    scheduler,
    seed,
    positive=False,
    callback=None,
    sample_weight=None,
):
    """Coefficients (weights x features), intercepts and relative gaps along ``grid``."""
    common = dict(
        loss=loss,
        l1_ratio=l1_ratio,
        fit_intercept=fit_intercept,
        tol=tol,
        max_iter=max_iter,
        n_workers=n_workers,
        scheduler=scheduler,
        seed=seed,
        positive=positive,
        callback=callback,
        sample_weight=sample_weight,
    )
    if geometric:
        # One strads path: each weight starts from the previous solution; max_iter is per weight.
        if max_iter is not None:
            common["max_iter"] = max_iter * len(grid)
        result = _fit(X, y, alpha=grid[-1], path=len(grid), path_top=grid[0], **common)
        done = len(result.get("path_alphas", []))
        if done == len(grid):
            return result["path_coefs"], result["path_intercepts"], result["path_gaps"]
        # The budget ran out at the weight after the last finished one: the weights from there
        # on get the model it stopped at.
        _warn_unconverged(result, tol)
        rest = len(grid) - done
        coefs = np.vstack([result.get("path_coefs", np.empty((0, X.shape[1]))), np.tile(result["coef"], (rest, 1))])
        intercepts = np.concatenate([result.get("path_intercepts", []), np.full(rest, result["intercept"])])
        gaps = np.concatenate([result.get("path_gaps", []), np.full(rest, result["dual_gap"])])
        return coefs, intercepts, gaps
    fits = [_fit(X, y, alpha=alpha, **common) for alpha in grid]
    coefs = np.vstack([np.asarray(f["coef"]) for f in fits])
    return coefs, np.array([f["intercept"] for f in fits]), np.array([f["dual_gap"] for f in fits])


def enet_path(
    X,
    y,
    *,
    l1_ratio=0.5,
    eps=1e-3,
    n_alphas=100,
    alphas=None,
    fit_intercept=False,
    tol=1e-4,
    max_iter=1000,
    n_workers=None,
    scheduler="block",
    random_state=None,
    return_n_iter=False,
    positive=False,
    verbose=0,
    callback=None,
):
    """The elastic net along a grid of weights, as scikit-learn's ``enet_path``.

    With ``alphas=None`` the grid is ``n_alphas`` weights geometric from the data's ``alpha_max``
    down to ``eps x alpha_max``, solved as one strads path (each weight from the previous
    solution); a given grid is sorted, largest first, and each weight fitted on its own. Returns
    ``(alphas, coefs, dual_gaps)``: ``coefs`` of shape (n_features, n_alphas), ``dual_gaps``
    relative (scikit-learn's are absolute). Like scikit-learn's, no intercept by default.
    """
    _check_unit("l1_ratio", l1_ratio, low_open=True)
    X = check_array(X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32])
    y = column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64), warn=True)
    check_consistent_length(X, y)
    grid, geometric = _grid(X, y, l1_ratio=l1_ratio, fit_intercept=fit_intercept, eps=eps, n_alphas=n_alphas, alphas=alphas)
    coefs, _, gaps = _path(
        X,
        y,
        grid,
        geometric,
        l1_ratio=l1_ratio,
        fit_intercept=fit_intercept,
        tol=tol,
        max_iter=max_iter,
        n_workers=n_workers,
        scheduler=scheduler,
        seed=_seed(random_state),
        positive=positive,
        callback=progress(callback, verbose, "path"),
    )
    out = (grid, np.ascontiguousarray(coefs.T), np.asarray(gaps))
    return (*out, None) if return_n_iter else out


def lasso_path(X, y, *, eps=1e-3, n_alphas=100, alphas=None, **params):
    """The Lasso along a grid of weights, as scikit-learn's ``lasso_path``: :func:`enet_path` with ``l1_ratio=1``."""
    return enet_path(X, y, l1_ratio=1.0, eps=eps, n_alphas=n_alphas, alphas=alphas, **params)


class ElasticNetCV(RegressorMixin, BaseEstimator):
    """The elastic net with its weight (and ``l1_ratio``) chosen by cross-validation, as scikit-learn's.

    For each ``l1_ratio`` and each fold, one strads path over the grid (the full data's ``alpha_max``
    down to ``eps x alpha_max``, or ``alphas``); the weight of least mean squared error over the
    folds is then fitted on all the data.

    Parameters: ``l1_ratio`` (float or list, default 0.5), ``eps``, ``n_alphas``, ``alphas`` (None,
    a number of weights, or the weights), ``cv`` (folds, or a scikit-learn splitter), and those of
    :class:`ElasticNet`.

    Attributes: ``alpha_``, ``l1_ratio_``, ``alphas_`` (the grid, or one per ``l1_ratio``),
    ``mse_path_`` (n_alphas x n_folds, or n_l1_ratio x n_alphas x n_folds), ``coef_``, ``intercept_``,
    ``dual_gap_``, ``n_iter_``, ``n_features_in_``.
    """

    def __init__(
        self,
        *,
        l1_ratio=0.5,
        eps=1e-3,
        n_alphas=100,
        alphas=None,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-4,
        positive=False,
        cv=None,
        random_state=None,
        n_workers=None,
        scheduler="block",
        verbose=0,
        callback=None,
    ):
        self.l1_ratio = l1_ratio
        self.eps = eps
        self.n_alphas = n_alphas
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.positive = positive
        self.cv = cv
        self.random_state = random_state
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.callback = callback

    def _l1_ratios(self):
        """The ratios to try, and whether one was given as a number."""
        return np.atleast_1d(np.asarray(self.l1_ratio, dtype=np.float64)), np.ndim(self.l1_ratio) == 0

    def fit(self, X, y, sample_weight=None):
        """Chooses the weight by cross-validation on X and y, then fits it on all of them; with
        ``sample_weight``, each fold's fit and its mean squared error are weighted."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        weights = _weights(sample_weight, X)
        ratios, single = self._l1_ratios()
        for ratio in ratios:
            _check_unit("l1_ratio", float(ratio), low_open=True)
        folds = list(check_cv(self.cv).split(X, y))
        settings = dict(
            fit_intercept=self.fit_intercept,
            tol=self.tol,
            max_iter=self.max_iter,
            n_workers=self.n_workers,
            scheduler=self.scheduler,
            positive=self.positive,
            seed=_seed(self.random_state),
            callback=progress(self.callback, self.verbose, type(self).__name__),
        )
        grids, mse = [], []
        for ratio in ratios:
            grid, geometric = _grid(
                X,
                y,
                l1_ratio=ratio,
                fit_intercept=self.fit_intercept,
                eps=self.eps,
                n_alphas=self.n_alphas,
                alphas=self.alphas,
                sample_weight=weights,
            )
            errors = np.empty((len(grid), len(folds)))
            for k, (train, test) in enumerate(folds):
                fold = None if weights is None else weights[train]
                if fold is not None and not fold.sum() > 0:
                    raise ValueError(f"the training rows of fold {k} all have weight zero")
                coefs, intercepts, _ = _path(
                    X[train], y[train], grid, geometric, l1_ratio=float(ratio), sample_weight=fold, **settings
                )
                predicted = np.asarray(X[test] @ coefs.T) + intercepts
                squared = (predicted - y[test][:, None]) ** 2
                tested = None if weights is None else weights[test]
                if tested is None or not tested.sum() > 0:
                    errors[:, k] = squared.mean(axis=0)
                else:
                    errors[:, k] = np.average(squared, axis=0, weights=tested)
            grids.append(grid)
            mse.append(errors)
        mean = np.array([e.mean(axis=1) for e in mse])
        best_ratio, best_alpha = np.unravel_index(np.argmin(mean), mean.shape)
        self.l1_ratio_ = float(ratios[best_ratio])
        self.alpha_ = float(grids[best_ratio][best_alpha])
        self.alphas_ = grids[0] if single else np.array(grids)
        self.mse_path_ = mse[0] if single else np.array(mse)
        result = _fit(X, y, loss="squared", alpha=self.alpha_, l1_ratio=self.l1_ratio_, sample_weight=weights, **settings)
        _warn_unconverged(result, self.tol)
        self.coef_ = np.asarray(result["coef"], dtype=np.float64)
        self.intercept_ = float(result["intercept"])
        self.n_iter_ = max(1, int(result["n_iter"]))
        self.dual_gap_ = float(result["dual_gap"])
        return self

    def predict(self, X):
        """``X w + b`` with the chosen weight's model."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LassoCV(ElasticNetCV):
    """The Lasso with its weight chosen by cross-validation: :class:`ElasticNetCV` with ``l1_ratio=1``."""

    def __init__(
        self,
        *,
        eps=1e-3,
        n_alphas=100,
        alphas=None,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-4,
        positive=False,
        cv=None,
        random_state=None,
        n_workers=None,
        scheduler="block",
        verbose=0,
        callback=None,
    ):
        self.eps = eps
        self.n_alphas = n_alphas
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.positive = positive
        self.cv = cv
        self.random_state = random_state
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.callback = callback

    def _l1_ratios(self):
        return np.array([1.0]), True
