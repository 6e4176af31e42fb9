"""Topic models by collapsed Gibbs sampling, fitted by strads in Rust.

``LDAModel`` has tomotopy's shape: documents added as lists of words, repeated ``train`` calls,
``ll_per_word``, ``get_topic_words``, ``infer``, ``save`` and ``load``.
``strads.decomposition.LatentDirichletAllocation`` has scikit-learn's, on a documents x words
count matrix.
"""

import io
import numbers
import os
import tempfile

import numpy as np
import scipy.sparse as sp

from strads import _strads
from strads._progress import progress

__all__ = ["LDAModel", "Document"]

_FORMAT = "strads-lda-1"


def _check_count(name, value, low=1):
    if not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


class Document:
    """A training document of an :class:`LDAModel`: its words and, after training, its topics."""

    def __init__(self, model, index):
        self._model, self._index = model, index

    @property
    def words(self):
        """The document's words, as added."""
        ids = self._model._documents[self._index]
        return [self._model.vocabs[w] for w in ids]

    def get_topic_dist(self):
        """``theta_dk = (n_dk + alpha) / (N_d + K alpha)`` after the last ``train``."""
        return self._model._theta(self._index)


class LDAModel:
    """Latent Dirichlet allocation by collapsed Gibbs sampling (strads' samplers, on ``workers``
    threads), in tomotopy's shape.

    Parameters
    ----------
    k : int, default=10
        Topics.
    alpha : float or None
        The symmetric document-topic prior (None: 50 / k, re-estimated every ``optimize_interval``
        iterations by Minka's fixed point, as tomotopy's ``optim_interval``).
    eta : float, default=0.01
        The topic-word prior.
    seed : int, default=0
        A seed and a number of workers give the same model.
    sampler : {"sparse", "alias"} or None
        None chooses from the corpus and k.
    optimize_interval : int or None
        Iterations between re-estimates of alpha (0: keep it; None: strads' default, 10).
    """

    def __init__(self, k=10, *, alpha=None, eta=0.01, seed=0, sampler=None, optimize_interval=None):
        self.k = _check_count("k", k)
        if alpha is not None and not (isinstance(alpha, numbers.Real) and alpha > 0):
            raise ValueError(f"alpha must be a number > 0 or None, got {alpha!r}")
        if not (isinstance(eta, numbers.Real) and eta > 0):
            raise ValueError(f"eta must be a number > 0, got {eta!r}")
        self.alpha_prior = alpha
        self.eta = float(eta)
        self.seed = _check_count("seed", seed, low=0)
        self.sampler = sampler
        self.optimize_interval = optimize_interval
        self.vocabs = []
        self._word_ids = {}
        self._documents = []
        self.docs = []
        self.global_step = 0
        self._result = None

    @property
    def num_words(self):
        """Tokens in the training documents."""
        return int(sum(len(d) for d in self._documents))

    @property
    def alpha(self):
        """The document-topic prior: as re-estimated by the last ``train``, else as given (or 50 / k)."""
        if self._result is not None:
            return float(self._result["alpha"])
        return self.alpha_prior if self.alpha_prior is not None else 50.0 / self.k

    def add_doc(self, words):
        """Adds a document (a list of words); returns its index. Documents are added before the first ``train``."""
        if self._result is not None:
            raise ValueError("documents are added before the first train")
        if isinstance(words, str):
            raise ValueError("add_doc takes a list of words, not a string (split it first)")
        ids = []
        for word in words:
            if not isinstance(word, str):
                raise ValueError(f"words must be strings, got {word!r}")
            index = self._word_ids.setdefault(word, len(self.vocabs))
            if index == len(self.vocabs):
                self.vocabs.append(word)
            ids.append(index)
        if not ids:
            raise ValueError("a document needs at least one word")
        self._documents.append(np.asarray(ids, dtype=np.uint32))
        self.docs.append(Document(self, len(self._documents) - 1))
        return len(self._documents) - 1

    def _arrays(self, documents):
        lengths = np.fromiter((len(d) for d in documents), dtype=np.uint64, count=len(documents))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint64)
        tokens = np.concatenate(documents).astype(np.uint32) if documents else np.empty(0, np.uint32)
        return offsets, tokens

    def train(self, iter=10, workers=0, *, callback=None, show_progress=False):
        """Runs ``iter`` more Gibbs iterations on ``workers`` threads. 0, the default (as tomotopy's),
        takes every core, at most one per document, for a corpus of at least 50,000 tokens, and one
        worker below: two workers were faster on every corpus measured, from 12,000 tokens up, but
        on 8,000 tokens of 4 planted topics they ended in a poorer mode in 9 of 48 seeds against 3
        of 48 for one worker, where from 40,000 tokens up both recovered every topic (README).

        ``callback`` is called with a dict of each evaluation (``iteration``, ``seconds``,
        ``log_likelihood_per_token``, ``tokens_per_second``, ...), every 10 iterations and at the
        last; ``show_progress`` prints them. Ctrl-C, or an exception the callback raises, ends
        the training with it and leaves the model as it was before the call.

        The chain is deterministic for a seed and a number of workers, so strads reruns it from the
        seed to the total of iterations trained so far: the state is the one a continued chain
        would reach, and a later call costs the iterations before it again."""
        iter = _check_count("iter", iter)
        workers = _check_count("workers", workers, low=0)
        if workers == 0:
            workers = default_workers(self.num_words, len(self._documents))
        if not self._documents:
            raise ValueError("train needs documents: add_doc first")
        offsets, tokens = self._arrays(self._documents)
        total = self.global_step + iter
        settings = dict(
            topics=self.k,
            alpha=None if self.alpha_prior is None else float(self.alpha_prior),
            beta=self.eta,
            iterations=total,
            sampler=self.sampler,
            optimize_alpha=self.optimize_interval,
            eval_every=max(1, min(10, total)),
            n_workers=workers,
            seed=self.seed,
            callback=progress(callback, show_progress, "LDAModel"),
        )
        self._result = _strads.fit_lda(offsets, tokens, list(self.vocabs), settings)
        self.global_step = total
        self._set_counts(self._result["word_topic"])
        return self

    def _set_counts(self, word_topic):
        self._word_topic = np.asarray(word_topic, dtype=np.uint32)
        self._topic_totals = self._word_topic.sum(axis=0, dtype=np.int64)

    def _check_trained(self):
        if self._result is None:
            raise ValueError("this model is not trained yet: call train first")

    @property
    def ll_per_word(self):
        """The log-likelihood per token after the last ``train``."""
        self._check_trained()
        return float(self._result["trace"][-1][1])

    def get_topic_word_dist(self, topic_id):
        """``phi_kw = (n_kw + eta) / (n_k + V eta)`` over the vocabulary."""
        self._check_trained()
        if not isinstance(topic_id, numbers.Integral) or not 0 <= topic_id < self.k:
            raise ValueError(f"topic_id must be in [0, {self.k}), got {topic_id!r}")
        counts = self._word_topic[:, topic_id].astype(np.float64)
        return (counts + self.eta) / (self._topic_totals[topic_id] + len(self.vocabs) * self.eta)

    def get_topic_words(self, topic_id, top_n=10):
        """The ``top_n`` most probable words of a topic, as ``(word, probability)``, most probable first."""
        phi = self.get_topic_word_dist(topic_id)
        top_n = min(_check_count("top_n", top_n), phi.size)
        top = np.argpartition(-phi, top_n - 1)[:top_n]
        top = top[np.lexsort((top, -phi[top]))]
        return [(self.vocabs[w], float(phi[w])) for w in top]

    def _theta(self, d):
        self._check_trained()
        start, end = self._result["doc_indptr"][d], self._result["doc_indptr"][d + 1]
        counts = np.zeros(self.k)
        counts[self._result["doc_topics"][start:end]] = self._result["doc_counts"][start:end]
        length = len(self._documents[d])
        return (counts + self.alpha) / (length + self.k * self.alpha)

    def infer(self, doc, iter=100, seed=0):
        """The topic distribution of a new document (a list of words; words outside the training
        vocabulary are left out), or a list of such distributions for a list of documents, by Gibbs
        sampling with the topics held fixed."""
        self._check_trained()
        many = bool(doc) and not isinstance(doc[0], str)
        documents = doc if many else [doc]
        ids = [np.asarray([self._word_ids[w] for w in d if w in self._word_ids], dtype=np.uint32) for d in documents]
        offsets, tokens = self._arrays(ids)
        theta = _strads.infer_lda(
            self._word_topic, self.alpha, self.eta, offsets, tokens, _check_count("iter", iter), _check_count("seed", seed, 0)
        )
        return list(theta) if many else theta[0]

    def to_bytes(self):
        """The trained model (vocabulary, counts, priors, documents) as bytes."""
        self._check_trained()
        buffer = io.BytesIO()
        offsets, tokens = self._arrays(self._documents)
        r = self._result
        np.savez_compressed(
            buffer,
            format=np.array(_FORMAT),
            vocabs=np.array(self.vocabs, dtype=np.str_),
            word_topic=self._word_topic,
            offsets=offsets,
            tokens=tokens,
            doc_indptr=r["doc_indptr"],
            doc_topics=r["doc_topics"],
            doc_counts=r["doc_counts"],
            scalars=np.array([self.k, self.eta, self.seed, self.global_step, r["alpha"]], dtype=np.float64),
            alpha_prior=np.array(np.nan if self.alpha_prior is None else self.alpha_prior),
            trace=np.array(r["trace"], dtype=np.float64),
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data):
        """A model from :meth:`to_bytes`."""
        try:
            saved = np.load(io.BytesIO(data), allow_pickle=False)
            if str(saved["format"]) != _FORMAT:
                raise ValueError(f"not a {_FORMAT} model")
            k, eta, seed, step, alpha = saved["scalars"]
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"not a strads LDA model: {error}") from error
        prior = float(saved["alpha_prior"])
        model = cls(int(k), alpha=None if np.isnan(prior) else prior, eta=float(eta), seed=int(seed))
        model.vocabs = [str(w) for w in saved["vocabs"]]
        model._word_ids = {w: i for i, w in enumerate(model.vocabs)}
        offsets, tokens = saved["offsets"], saved["tokens"]
        model._documents = [tokens[offsets[d] : offsets[d + 1]] for d in range(len(offsets) - 1)]
        model.docs = [Document(model, d) for d in range(len(model._documents))]
        model.global_step = int(step)
        model._result = {
            "alpha": float(alpha),
            "doc_indptr": saved["doc_indptr"],
            "doc_topics": saved["doc_topics"],
            "doc_counts": saved["doc_counts"],
            "trace": [tuple(p) for p in saved["trace"]],
            "word_topic": saved["word_topic"],
        }
        model._set_counts(saved["word_topic"])
        return model

    def save(self, filename):
        """Writes :meth:`to_bytes` to ``filename`` (through a temporary file, renamed)."""
        data = self.to_bytes()
        folder = os.path.dirname(os.path.abspath(filename))
        handle, temporary = tempfile.mkstemp(prefix=".strads-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "wb") as f:
                f.write(data)
            os.replace(temporary, filename)
        except BaseException:
            if os.path.exists(temporary):
                os.remove(temporary)
            raise

    @classmethod
    def load(cls, filename):
        """A model saved by :meth:`save`."""
        with open(filename, "rb") as f:
            return cls.from_bytes(f.read())


# Below this many tokens the default is one worker: model-parallel sampling on two workers mixed
# worse on a corpus this small (see LDAModel.train).
_SPLIT_TOKENS = 50_000


def default_workers(tokens, documents):
    """Workers for a corpus when none are given: every core (at most one per document) from
    50,000 tokens, else one."""
    if tokens < _SPLIT_TOKENS:
        return 1
    return max(1, min(os.cpu_count() or 1, documents))


def documents_from_counts(X):
    """Each row of a documents x words count matrix as word ids, each repeated by its count."""
    X = sp.csr_matrix(X)
    if X.nnz and X.data.min() < 0:
        raise ValueError("Negative values in data: LDA needs counts, non-negative integers")
    if X.nnz and not np.all(X.data == np.round(X.data)):
        raise ValueError("LDA needs counts: non-negative integers (a Gibbs sampler draws a topic per token)")
    counts = X.data.astype(np.int64)
    return [
        np.repeat(X.indices[X.indptr[d] : X.indptr[d + 1]], counts[X.indptr[d] : X.indptr[d + 1]]).astype(np.uint32)
        for d in range(X.shape[0])
    ]
