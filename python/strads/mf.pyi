"""Type stubs of strads.mf."""

from typing import Any, Literal, Optional

import numpy as np
import numpy.typing as npt

from strads._progress import _Callback

__all__ = ["MF"]

class MF:
    user_factors: npt.NDArray[np.float64]
    item_factors: npt.NDArray[np.float64]
    user_bias: npt.NDArray[np.float64]
    item_bias: npt.NDArray[np.float64]
    mu: float
    n_iter_: int
    def __init__(
        self,
        rank: int = ...,
        *,
        implicit: bool = ...,
        alpha: float = ...,
        algorithm: Optional[Literal["ccdpp", "ccd", "als"]] = ...,
        regularization: Optional[float] = ...,
        weighted: Optional[bool] = ...,
        lambda_exponent: Optional[float] = ...,
        bias: Optional[Literal["none", "global", "full"]] = ...,
        iterations: Optional[int] = ...,
        validation: Optional[float] = ...,
        patience: Optional[int] = ...,
        tol: Optional[float] = ...,
        init_scale: Optional[float] = ...,
        cg_steps: Optional[int] = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(
        self,
        X: Any = ...,
        *,
        users: Any = ...,
        items: Any = ...,
        ratings: Any = ...,
        shape: Optional[tuple[int, int]] = ...,
    ) -> "MF": ...
    def predict(self, users: Any, items: Any) -> npt.NDArray[np.float64]: ...
    def recommend(
        self, user: int, n: int = ..., *, exclude_seen: bool = ...
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
