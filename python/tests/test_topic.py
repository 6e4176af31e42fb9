"""strads.LDAModel and LatentDirichletAllocation on planted topics: recovery, continuation, files."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import strads
from strads.decomposition import LatentDirichletAllocation

TOPICS, WORDS_PER_TOPIC = 4, 25


def planted(documents=300, length=40, seed=0):
    """Documents mixing 1 or 2 of 4 topics, each a disjoint block of 25 words ("t2w7")."""
    rng = np.random.default_rng(seed)
    docs, mains = [], []
    for _ in range(documents):
        main = int(rng.integers(TOPICS))
        other = int(rng.integers(TOPICS))
        topics = rng.choice([main, other], size=length, p=[0.8, 0.2])
        docs.append([f"t{t}w{rng.integers(WORDS_PER_TOPIC)}" for t in topics])
        mains.append(main)
    return docs, mains


def block_purity(model):
    """For each learned topic, the share of its top 10 words from its most frequent block."""
    purities = []
    for k in range(model.k):
        blocks = [word.split("w")[0] for word, _ in model.get_topic_words(k, 10)]
        purities.append(max(blocks.count(b) for b in set(blocks)) / 10)
    return purities


def fitted(docs, **kwargs):
    model = strads.LDAModel(k=TOPICS, alpha=0.1, seed=3, **kwargs)
    for d in docs:
        model.add_doc(d)
    return model


def test_planted_topics_are_recovered_and_inference_finds_them():
    docs, mains = planted()
    model = fitted(docs).train(60, workers=2)
    assert min(block_purity(model)) == 1.0
    assert model.ll_per_word > -np.log(TOPICS * WORDS_PER_TOPIC) + 0.5  # well above the uniform model
    # Each learned topic is one planted block; a document's inferred mix peaks on its main block's topic.
    topic_of_block = {model.get_topic_words(k, 1)[0][0].split("w")[0]: k for k in range(TOPICS)}
    agree = 0
    for d in range(40):
        theta = model.infer(docs[d], iter=50, seed=1)
        assert theta.shape == (TOPICS,) and theta.sum() == pytest.approx(1.0)
        agree += int(theta.argmax() == topic_of_block[f"t{mains[d]}"])
        trained = model.docs[d].get_topic_dist()
        agree += int(trained.argmax() == topic_of_block[f"t{mains[d]}"])
    assert agree >= 76, agree
    # Words outside the vocabulary are left out.
    assert model.infer(["nowhere"] + docs[0]).shape == (TOPICS,)


def test_training_in_steps_equals_training_at_once_and_workers_are_deterministic():
    docs, _ = planted(documents=120, seed=1)
    steps = fitted(docs).train(10, workers=2).train(15, workers=2)
    once = fitted(docs).train(25, workers=2)
    assert steps.global_step == once.global_step == 25
    np.testing.assert_array_equal(steps._word_topic, once._word_topic)
    assert steps.ll_per_word == once.ll_per_word
    early = fitted(docs).train(2, workers=2)
    assert once.ll_per_word > early.ll_per_word


def test_save_and_load_give_the_same_model(tmp_path):
    docs, _ = planted(documents=80, seed=2)
    model = fitted(docs).train(20)
    path = tmp_path / "model.lda"
    model.save(str(path))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".strads-")], "no temporary file is left"
    loaded = strads.LDAModel.load(str(path))
    assert loaded.vocabs == model.vocabs and loaded.alpha == model.alpha and loaded.global_step == 20
    for k in range(TOPICS):
        assert loaded.get_topic_words(k, 5) == model.get_topic_words(k, 5)
    np.testing.assert_array_equal(loaded.docs[3].get_topic_dist(), model.docs[3].get_topic_dist())
    np.testing.assert_array_equal(loaded.infer(docs[0], seed=4), model.infer(docs[0], seed=4))
    assert strads.LDAModel.from_bytes(model.to_bytes()).ll_per_word == model.ll_per_word
    with pytest.raises(ValueError, match="not a strads LDA model"):
        strads.LDAModel.from_bytes(b"not a model")


def test_bad_input_raises_value_errors():
    model = strads.LDAModel(k=2)
    with pytest.raises(ValueError, match="list of words"):
        model.add_doc("a string")
    with pytest.raises(ValueError, match="at least one word"):
        model.add_doc([])
    with pytest.raises(ValueError, match="add_doc first"):
        model.train(1)
    with pytest.raises(ValueError, match="not trained"):
        _ = model.ll_per_word
    with pytest.raises(ValueError):
        strads.LDAModel(k=0)


def test_scikit_learn_shape_on_a_count_matrix():
    docs, mains = planted(documents=200, seed=4)
    texts = [" ".join(d) for d in docs]
    vectorizer = CountVectorizer(token_pattern=r"\S+")
    counts = vectorizer.fit_transform(texts)
    lda = LatentDirichletAllocation(n_components=TOPICS, doc_topic_prior=0.1, max_iter=60, random_state=1).fit(counts)
    assert lda.components_.shape == (TOPICS, counts.shape[1])
    words = vectorizer.get_feature_names_out()
    for row in lda.components_:
        top = [words[j].split("w")[0] for j in np.argsort(-row)[:10]]
        assert len(set(top)) == 1, top
    theta = lda.transform(counts[:50])
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    assert lda.perplexity(counts) < 0.5 * counts.shape[1]
    short = LatentDirichletAllocation(n_components=TOPICS, doc_topic_prior=0.1, max_iter=1, random_state=1).fit(counts)
    assert lda.perplexity(counts) < short.perplexity(counts)
    pipeline = make_pipeline(CountVectorizer(token_pattern=r"\S+"), LatentDirichletAllocation(n_components=TOPICS, max_iter=20))
    assert pipeline.fit_transform(texts).shape == (len(texts), TOPICS)
    with pytest.raises(ValueError, match="counts"):
        LatentDirichletAllocation().fit(sp.csr_matrix(np.array([[0.5, 1.0]])))


# These checks fit on random non-negative floats, which a Gibbs sampler cannot take: it draws one
# topic per token, so the estimator accepts counts (non-negative integers) only and says so.
NON_INTEGER_DATA = "fits random non-negative floats; LDA by Gibbs sampling takes counts (non-negative integers)"
_CHECKS_ON_FLOATS = [
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_readonly_memmap_input",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_n_iter",
    "check_transformer_preserve_dtypes",
]


@parametrize_with_checks(
    [LatentDirichletAllocation(n_components=3, max_iter=5)],
    expected_failed_checks=lambda estimator: {name: NON_INTEGER_DATA for name in _CHECKS_ON_FLOATS},
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
