"""Type stubs of strads.linear_model."""

from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from strads._progress import _Callback

_Scheduler = Literal["block", "dynamic", "shotgun", "cyclic", "sequential"]
_ArrayLike = Any  # numpy arrays and scipy.sparse matrices

__all__ = ["Lasso", "ElasticNet", "LogisticRegression", "LassoCV", "ElasticNetCV", "lasso_path", "enet_path"]

class ElasticNet(RegressorMixin, BaseEstimator):
    coef_: npt.NDArray[np.float64]
    intercept_: float
    n_iter_: int
    dual_gap_: float
    n_features_in_: int
    def __init__(
        self,
        alpha: float = ...,
        *,
        l1_ratio: float = ...,
        fit_intercept: bool = ...,
        max_iter: Optional[int] = ...,
        tol: float = ...,
        warm_start: bool = ...,
        positive: bool = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        scheduler: _Scheduler = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: _ArrayLike, sample_weight: _ArrayLike | float | None = None) -> "ElasticNet": ...
    def predict(self, X: _ArrayLike) -> npt.NDArray[np.float64]: ...
    @property
    def sparse_coef_(self) -> Any: ...

class Lasso(ElasticNet):
    def __init__(
        self,
        alpha: float = ...,
        *,
        fit_intercept: bool = ...,
        max_iter: Optional[int] = ...,
        tol: float = ...,
        warm_start: bool = ...,
        positive: bool = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        scheduler: _Scheduler = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: _ArrayLike, sample_weight: _ArrayLike | float | None = None) -> "Lasso": ...

class LogisticRegression(ClassifierMixin, BaseEstimator):
    classes_: npt.NDArray[Any]
    coef_: npt.NDArray[np.float64]
    intercept_: npt.NDArray[np.float64]
    n_iter_: npt.NDArray[np.int32]
    dual_gap_: npt.NDArray[np.float64]
    n_features_in_: int
    def __init__(
        self,
        C: float = ...,
        *,
        l1_ratio: float = ...,
        fit_intercept: bool = ...,
        max_iter: Optional[int] = ...,
        tol: float = ...,
        warm_start: bool = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        scheduler: _Scheduler = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: _ArrayLike) -> "LogisticRegression": ...
    def decision_function(self, X: _ArrayLike) -> npt.NDArray[np.float64]: ...
    def predict_proba(self, X: _ArrayLike) -> npt.NDArray[np.float64]: ...
    def predict_log_proba(self, X: _ArrayLike) -> npt.NDArray[np.float64]: ...
    def predict(self, X: _ArrayLike) -> npt.NDArray[Any]: ...

class ElasticNetCV(RegressorMixin, BaseEstimator):
    alpha_: float
    l1_ratio_: float
    alphas_: npt.NDArray[np.float64]
    mse_path_: npt.NDArray[np.float64]
    coef_: npt.NDArray[np.float64]
    intercept_: float
    n_iter_: int
    dual_gap_: float
    n_features_in_: int
    def __init__(
        self,
        *,
        l1_ratio: Union[float, Sequence[float]] = ...,
        eps: float = ...,
        n_alphas: int = ...,
        alphas: Union[None, int, Sequence[float]] = ...,
        fit_intercept: bool = ...,
        max_iter: Optional[int] = ...,
        tol: float = ...,
        positive: bool = ...,
        cv: Any = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        scheduler: _Scheduler = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: _ArrayLike, sample_weight: _ArrayLike | float | None = None) -> "ElasticNetCV": ...
    def predict(self, X: _ArrayLike) -> npt.NDArray[np.float64]: ...

class LassoCV(ElasticNetCV):
    def __init__(
        self,
        *,
        eps: float = ...,
        n_alphas: int = ...,
        alphas: Union[None, int, Sequence[float]] = ...,
        fit_intercept: bool = ...,
        max_iter: Optional[int] = ...,
        tol: float = ...,
        positive: bool = ...,
        cv: Any = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        scheduler: _Scheduler = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: _ArrayLike, y: _ArrayLike, sample_weight: _ArrayLike | float | None = None) -> "LassoCV": ...

def enet_path(
    X: _ArrayLike,
    y: _ArrayLike,
    *,
    l1_ratio: float = ...,
    eps: float = ...,
    n_alphas: int = ...,
    alphas: Union[None, int, Sequence[float]] = ...,
    fit_intercept: bool = ...,
    tol: float = ...,
    max_iter: Optional[int] = ...,
    n_workers: Optional[int] = ...,
    scheduler: _Scheduler = ...,
    random_state: Optional[int] = ...,
    return_n_iter: bool = ...,
    positive: bool = ...,
    verbose: int = ...,
    callback: _Callback = ...,
) -> tuple[Any, ...]: ...
def lasso_path(
    X: _ArrayLike, y: _ArrayLike, *, eps: float = ..., n_alphas: int = ..., alphas: Union[None, int, Sequence[float]] = ..., **params: Any
) -> tuple[Any, ...]: ...
