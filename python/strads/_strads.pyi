"""Type stubs of the extension module strads._strads (the Rust fits behind the estimators)."""

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["__version__", "EngineError", "fit_linear_dense", "fit_linear_sparse", "fit_mf", "fit_lda", "infer_lda"]

__version__: str

class EngineError(RuntimeError): ...

def fit_linear_dense(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.float64],
    settings: dict[str, Any],
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> dict[str, Any]: ...
def fit_linear_sparse(
    indptr: npt.NDArray[np.uint64],
    indices: npt.NDArray[np.uint32],
    values: npt.NDArray[np.floating],
    shape: tuple[int, int],
    by_columns: bool,
    y: npt.NDArray[np.float64],
    settings: dict[str, Any],
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> dict[str, Any]: ...
def fit_mf(
    users: npt.NDArray[np.uint32],
    items: npt.NDArray[np.uint32],
    values: npt.NDArray[np.float64],
    shape: tuple[int, int],
    settings: dict[str, Any],
) -> dict[str, Any]: ...
def fit_lda(
    offsets: npt.NDArray[np.uint64], tokens: npt.NDArray[np.uint32], vocabulary: list[str], settings: dict[str, Any]
) -> dict[str, Any]: ...
def infer_lda(
    word_topic: npt.NDArray[np.uint32],
    alpha: float,
    beta: float,
    offsets: npt.NDArray[np.uint64],
    tokens: npt.NDArray[np.uint32],
    iterations: int,
    seed: int,
) -> npt.NDArray[np.float64]: ...
