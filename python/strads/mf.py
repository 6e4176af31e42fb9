"""Matrix factorization of explicit ratings and implicit feedback, fitted by strads in Rust.

``MF`` factorizes a users x items matrix, given as a scipy sparse matrix or as three arrays
(user indices, item indices, values), into ``user_factors`` (users x rank) and ``item_factors``
(items x rank), with user and item biases for explicit ratings. strads' defaults are those of
``strads mf``: for ratings, CCD++ with frequency-weighted L2 and biases, 5% of the ratings held out
to stop early (the best iteration's factors are kept); for implicit feedback (``implicit=True``),
the confidence-weighted model of Hu, Koren and Volinsky (2008) by ALS, as the ``implicit``
library fits it.
"""

import numbers
import os

import numpy as np
import scipy.sparse as sp

from strads import _strads
from strads._progress import progress

__all__ = ["MF"]


def _indices(name, values):
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise ValueError(f"{name} must be integer indices")
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise ValueError(f"{name} must be indices >= 0, got {array.min()}")
    if array.size and array.max() >= 2**32 - 1:
        raise ValueError(f"{name} must be indices below 2^32 - 1")
    return array


class MF:
    """A factorization ``r_ui ~ mu + b_u + c_i + w_u . h_i`` (explicit) or ``p_ui ~ w_u . h_i``
    (implicit feedback, confidence ``1 + alpha r_ui``).

    Parameters
    ----------
    rank : int, default=10
        The number of factors ``K``.
    implicit : bool, default=False
        Implicit feedback: every observed pair is a preference of 1 with confidence ``1 + alpha r``,
        every other pair a preference of 0 with confidence 1.
    alpha : float, default=1.0
        The confidence slope of implicit feedback.
    algorithm : {"ccdpp", "ccd", "als"} or None
        None: CCD++ for ratings, ALS for implicit feedback.
    regularization : float or None
        The L2 weight ``lambda``; None: 0.1 x the ratings' standard deviation x 144^(1 - e), ``e``
        the ``lambda_exponent`` (0 unweighted), for ratings; 0.01
        (implicit feedback).
    weighted : bool or None
        Scale ``lambda`` for each row by a power of its number of ratings (None: yes for ratings,
        no for implicit feedback).
    lambda_exponent : float or None
        That power, in [0, 1]: a row of ``n`` ratings has the L2 weight ``lambda n^e`` (None: 1,
        LIBMF's and Spark's scaling; 0.5 regularizes rows of few ratings more).
    bias : {"none", "global", "full"} or None
        Offsets of the prediction (None: full for ratings, none for implicit feedback).
    iterations : int or None
        Most outer iterations (None: 20 for ratings, 15 for implicit feedback).
    validation : float or None
        Ratings: the fraction held out to stop early on (None: 0.05; 0: train on every rating for
        every iteration).
    patience, tol, init_scale, cg_steps
        As ``strads mf``'s flags (None: its defaults).
    random_state : int or None
        The seed (None is 0): a seed and ``n_workers`` give the same factors.
    n_workers : int or None, default=None
        Worker threads; None takes every core (two workers were faster than one on every
        factorization measured, from 2,000 ratings up). The factors depend on the number of
        workers: give it for the same model on another machine.
    verbose : int, default=0
        Print a line at each evaluation.
    callback : callable or None, default=None
        Called with a dict of each evaluation (``iteration``, ``seconds``, ``objective``, ``train_rmse``, ``validation_rmse``, ...); an exception it raises ends the
        fit and propagates, as Ctrl-C does (KeyboardInterrupt).

    Attributes (after ``fit``)
    --------------------------
    user_factors, item_factors : ndarray of shape (users, rank), (items, rank)
    user_bias, item_bias : ndarray of shape (users,), (items,)
    mu : float
        The prediction's offset (the mean training rating with biases, else 0).
    n_iter_ : int
    stopped_early_, converged_ : bool
    validation_rmse_ : float or None
    """

    def __init__(
        self,
        rank=10,
        *,
        implicit=False,
        alpha=1.0,
        algorithm=None,
        regularization=None,
        weighted=None,
        lambda_exponent=None,
        bias=None,
        iterations=None,
        validation=None,
        patience=None,
        tol=None,
        init_scale=None,
        cg_steps=None,
        random_state=None,
        n_workers=None,
        verbose=0,
        callback=None,
    ):
        self.rank = rank
        self.implicit = implicit
        self.alpha = alpha
        self.algorithm = algorithm
        self.regularization = regularization
        self.weighted = weighted
        self.lambda_exponent = lambda_exponent
        self.bias = bias
        self.iterations = iterations
        self.validation = validation
        self.patience = patience
        self.tol = tol
        self.init_scale = init_scale
        self.cg_steps = cg_steps
        self.random_state = random_state
        self.n_workers = n_workers
        self.verbose = verbose
        self.callback = callback

    def fit(self, X=None, *, users=None, items=None, ratings=None, shape=None):
        """Factorizes a scipy sparse matrix ``X`` (users x items; its stored values are the
        ratings), or the ratings ``(users[k], items[k], ratings[k])`` of a ``shape`` matrix (by
        default one past the largest indices). Each (user, item) pair may appear once."""
        if X is not None:
            if users is not None or items is not None or ratings is not None:
                raise ValueError("give either X or users, items and ratings, not both")
            if not sp.issparse(X):
                X = sp.csr_matrix(np.asarray(X, dtype=np.float64))
            coo = sp.coo_matrix(X)
            users, items, ratings, shape = coo.row, coo.col, coo.data, coo.shape
        elif users is None or items is None or ratings is None:
            raise ValueError("fit needs X, or users, items and ratings")
        users, items = _indices("users", users), _indices("items", items)
        values = np.asarray(ratings, dtype=np.float64)
        if not (users.shape == items.shape == values.shape):
            raise ValueError(
                f"users, items and ratings must have the same length, got {users.size}, {items.size} and {values.size}"
            )
        if values.size == 0:
            raise ValueError("fit needs at least one rating")
        if not np.all(np.isfinite(values)):
            raise ValueError("ratings must be finite (a NaN or an infinity was given)")
        if self.implicit and values.min() < 0:
            raise ValueError(f"implicit feedback needs values >= 0 (confidences 1 + alpha r), got {values.min()}")
        if shape is None:
            shape = (int(users.max()) + 1, int(items.max()) + 1)
        shape = (int(shape[0]), int(shape[1]))
        if users.max() >= shape[0] or items.max() >= shape[1]:
            raise ValueError(f"an index is outside the {shape[0]} x {shape[1]} matrix")
        pairs = users * shape[1] + items
        unique, counts = np.unique(pairs, return_counts=True)
        if unique.size < pairs.size:
            first = unique[counts > 1][0]
            raise ValueError(f"the pair (user {first // shape[1]}, item {first % shape[1]}) is given {counts[counts > 1][0]} times")
        if not isinstance(self.rank, numbers.Integral) or self.rank < 1:
            raise ValueError(f"rank must be an integer >= 1, got {self.rank!r}")
        if self.n_workers is not None and (not isinstance(self.n_workers, numbers.Integral) or self.n_workers < 1):
            raise ValueError(f"n_workers must be None or an integer >= 1, got {self.n_workers!r}")
        n_workers = max(1, os.cpu_count() or 1) if self.n_workers is None else int(self.n_workers)
        if self.implicit and not (isinstance(self.alpha, numbers.Real) and self.alpha >= 0):
            raise ValueError(f"alpha must be a number >= 0, got {self.alpha!r}")
        settings = dict(
            rank=int(self.rank),
            algorithm=self.algorithm,
            **{"lambda": None if self.regularization is None else float(self.regularization)},
            weighted_lambda=self.weighted,
            lambda_exponent=None if self.lambda_exponent is None else float(self.lambda_exponent),
            bias=self.bias,
            iterations=self.iterations,
            implicit_alpha=float(self.alpha) if self.implicit else None,
            init_scale=self.init_scale,
            validation=self.validation,
            patience=self.patience,
            tol=self.tol,
            cg_steps=self.cg_steps,
            n_workers=n_workers,
            seed=0 if self.random_state is None else int(self.random_state),
            callback=progress(self.callback, self.verbose, "MF"),
        )
        result = _strads.fit_mf(
            np.ascontiguousarray(users, dtype=np.uint32),
            np.ascontiguousarray(items, dtype=np.uint32),
            np.ascontiguousarray(values),
            shape,
            settings,
        )
        self.user_factors = result["w"]
        self.item_factors = result["h"]
        self.user_bias = result["user_bias"]
        self.item_bias = result["item_bias"]
        self.mu = float(result["mu"])
        self.train_mean_ = float(result["train_mean"])
        self.user_counts_ = np.asarray(result["user_counts"])
        self.item_counts_ = np.asarray(result["item_counts"])
        self.n_iter_ = int(result["iterations"])
        self.stopped_early_ = bool(result["stopped_early"])
        self.converged_ = bool(result["converged"])
        self.validation_rmse_ = result["validation_rmse"]
        self.regularization_ = float(result["lambda"])
        self.algorithm_ = result["algorithm"]
        self.bias_ = result["bias"]
        # The training pairs, for recommendations that leave out what a user has seen.
        self._seen = sp.csr_matrix((np.ones(users.size, dtype=bool), (users, items)), shape=shape)
        return self

    def _check_fitted(self):
        if not hasattr(self, "user_factors"):
            raise ValueError("this MF is not fitted yet: call fit first")

    def predict(self, users, items):
        """Predicted ratings (or preferences) of the pairs ``(users[k], items[k])``.

        A user or item without training ratings gets the model of what is known: ``mu`` plus the
        known bias with offsets, else the mean training rating (explicit ratings), 0 (implicit)."""
        self._check_fitted()
        users, items = _indices("users", np.atleast_1d(users)), _indices("items", np.atleast_1d(items))
        if users.shape != items.shape:
            raise ValueError("users and items must have the same length")
        n_users, n_items = self.user_factors.shape[0], self.item_factors.shape[0]
        known_user = (users < n_users) & (self.user_counts_[np.minimum(users, n_users - 1)] > 0)
        known_item = (items < n_items) & (self.item_counts_[np.minimum(items, n_items - 1)] > 0)
        u, i = np.minimum(users, n_users - 1), np.minimum(items, n_items - 1)
        both = known_user & known_item
        dots = np.einsum("ij,ij->i", self.user_factors[u], self.item_factors[i])
        offsets = self.bias_ != "none"
        base = self.mu if offsets else (0.0 if self.implicit else self.train_mean_)
        out = np.full(users.shape, base, dtype=np.float64)
        if offsets:
            out += np.where(known_user, self.user_bias[u], 0.0) + np.where(known_item, self.item_bias[i], 0.0)
            out[both] += dots[both]
        else:
            out[both] = dots[both]
        return out

    def recommend(self, user, n=10, *, exclude_seen=True):
        """The ``n`` items of highest predicted score for ``user``, best first, as
        ``(items, scores)``; the user's training items are left out unless ``exclude_seen=False``."""
        self._check_fitted()
        if not isinstance(user, numbers.Integral) or not 0 <= user < self.user_factors.shape[0]:
            raise ValueError(f"user must be an index in [0, {self.user_factors.shape[0]}), got {user!r}")
        if not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        scores = self.item_factors @ self.user_factors[user] + self.item_bias
        candidates = np.arange(scores.size)
        if exclude_seen:
            seen = self._seen.indices[self._seen.indptr[user] : self._seen.indptr[user + 1]]
            keep = np.ones(scores.size, dtype=bool)
            keep[seen] = False
            candidates = candidates[keep]
        n = min(n, candidates.size)
        if n == 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        top = candidates[np.argpartition(-scores[candidates], n - 1)[:n]]
        # Best first; ties by the smaller index, as strads mf recommend.
        top = top[np.lexsort((top, -scores[top]))]
        return top, scores[top] + (self.mu + self.user_bias[user] if self.bias_ != "none" else 0.0)
