"""Latent Dirichlet allocation in scikit-learn's shape, by strads' collapsed Gibbs sampling.

``LatentDirichletAllocation`` fits a documents x words count matrix: ``fit``, ``transform``
(document-topic distributions by Gibbs sampling with the topics fixed), ``components_`` (topic-word
pseudo-counts ``n_kw + eta``), ``perplexity`` and ``score``.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from strads import _strads
from strads._progress import progress
from strads.topic import default_workers, documents_from_counts

__all__ = ["LatentDirichletAllocation"]


def _arrays(documents):
    lengths = np.fromiter((len(d) for d in documents), dtype=np.uint64, count=len(documents))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint64)
    tokens = np.concatenate(documents).astype(np.uint32) if documents else np.empty(0, np.uint32)
    return offsets, tokens


class LatentDirichletAllocation(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """LDA of a documents x words count matrix by collapsed Gibbs sampling.

    Parameters
    ----------
    n_components : int, default=10
        Topics.
    doc_topic_prior : float or None
        alpha (None: 50 / n_components, re-estimated during training as tomotopy does).
    topic_word_prior : float or None
        eta (None: 0.01).
    max_iter : int, default=100
        Gibbs iterations over the corpus (Gibbs sampling needs more than variational Bayes' 10).
    transform_iter : int, default=50
        Gibbs iterations per document in ``transform``.
    random_state : int or None
        The seed (None is 0).
    n_workers : int or None, default=None
        Worker threads; None takes every core (at most one per document) from 50,000 tokens and
        one below, as ``LDAModel.train``. The topics depend on the number of workers: give it for
        the same model on another machine.
    verbose : int, default=0
        Print a line at each evaluation.
    callback : callable or None, default=None
        Called with a dict of each evaluation (``iteration``, ``seconds``, ``log_likelihood_per_token``, ...); an exception it raises ends the
        fit and propagates, as Ctrl-C does (KeyboardInterrupt).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``n_kw + eta``: rows normalized, the topics' word distributions.
    exp_dirichlet_component_ : ndarray of shape (n_components, n_features)
        The normalized rows of ``components_``.
    doc_topic_prior_, topic_word_prior_ : float
    n_iter_ : int
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components=10,
        *,
        doc_topic_prior=None,
        topic_word_prior=None,
        max_iter=100,
        transform_iter=50,
        random_state=None,
        n_workers=None,
        verbose=0,
        callback=None,
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.transform_iter = transform_iter
        self.random_state = random_state
        self.n_workers = n_workers
        self.verbose = verbose
        self.callback = callback

    def _seed(self):
        if self.random_state is None:
            return 0
        if isinstance(self.random_state, numbers.Integral) and self.random_state >= 0:
            return int(self.random_state)
        raise ValueError(f"random_state must be None or an integer >= 0, got {self.random_state!r}")

    def fit(self, X, y=None):
        """Learns the topics of the count matrix X (documents x words)."""
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        workers = [] if self.n_workers is None else [("n_workers", self.n_workers)]
        for name, value in [("n_components", self.n_components), ("max_iter", self.max_iter)] + workers:
            if not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        documents = documents_from_counts(X)
        kept = [d for d in documents if len(d)]
        if not kept:
            raise ValueError("LDA needs at least one document with a word")
        offsets, tokens = _arrays(kept)
        eta = 0.01 if self.topic_word_prior is None else float(self.topic_word_prior)
        settings = dict(
            topics=int(self.n_components),
            alpha=None if self.doc_topic_prior is None else float(self.doc_topic_prior),
            beta=eta,
            iterations=int(self.max_iter),
            sampler=None,
            optimize_alpha=None if self.doc_topic_prior is None else 0,
            eval_every=max(1, min(10, int(self.max_iter))),
            n_workers=default_workers(len(tokens), len(kept)) if self.n_workers is None else int(self.n_workers),
            seed=self._seed(),
            callback=progress(self.callback, self.verbose, "LatentDirichletAllocation"),
        )
        result = _strads.fit_lda(offsets, tokens, [str(j) for j in range(X.shape[1])], settings)
        self._word_topic = np.asarray(result["word_topic"], dtype=np.uint32)
        self.components_ = self._word_topic.T.astype(np.float64) + eta
        self.exp_dirichlet_component_ = self.components_ / self.components_.sum(axis=1, keepdims=True)
        self.doc_topic_prior_ = float(result["alpha"])
        self.topic_word_prior_ = eta
        self.n_iter_ = int(result["iterations"])
        self.bound_ = float(result["trace"][-1][1])
        return self

    def transform(self, X):
        """Document-topic distributions (rows sum to 1) of X, the topics held fixed."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if not isinstance(self.transform_iter, numbers.Integral) or self.transform_iter < 1:
            raise ValueError(f"transform_iter must be an integer >= 1, got {self.transform_iter!r}")
        offsets, tokens = _arrays(documents_from_counts(X))
        return _strads.infer_lda(
            self._word_topic,
            self.doc_topic_prior_,
            self.topic_word_prior_,
            offsets,
            tokens,
            int(self.transform_iter),
            self._seed(),
        )

    def score(self, X, y=None):
        """The log-likelihood of X's tokens under their inferred topic mixes and the topics."""
        theta = self.transform(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        word_prob = np.einsum("ij,ij->i", theta[rows], self.exp_dirichlet_component_[:, X.indices].T)
        return float(np.sum(X.data * np.log(word_prob)))

    def perplexity(self, X):
        """``exp(-score(X) / tokens)``."""
        X_checked = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        tokens = float(X_checked.sum())
        if tokens <= 0:
            raise ValueError("perplexity needs at least one token")
        return float(np.exp(-self.score(X) / tokens))

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags
