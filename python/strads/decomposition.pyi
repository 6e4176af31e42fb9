"""Type stubs of strads.decomposition."""

from typing import Any, Optional

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from strads._progress import _Callback

__all__ = ["LatentDirichletAllocation"]

class LatentDirichletAllocation(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    components_: npt.NDArray[np.float64]
    exp_dirichlet_component_: npt.NDArray[np.float64]
    doc_topic_prior_: float
    topic_word_prior_: float
    n_iter_: int
    n_features_in_: int
    def __init__(
        self,
        n_components: int = ...,
        *,
        doc_topic_prior: Optional[float] = ...,
        topic_word_prior: Optional[float] = ...,
        max_iter: int = ...,
        transform_iter: int = ...,
        random_state: Optional[int] = ...,
        n_workers: Optional[int] = ...,
        verbose: int = ...,
        callback: _Callback = ...,
    ) -> None: ...
    def fit(self, X: Any, y: Any = ...) -> "LatentDirichletAllocation": ...
    def transform(self, X: Any) -> npt.NDArray[np.float64]: ...
    def score(self, X: Any, y: Any = ...) -> float: ...
    def perplexity(self, X: Any) -> float: ...
