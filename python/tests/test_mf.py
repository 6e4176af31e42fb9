"""strads.MF on planted low-rank ratings and preferences: accuracy, determinism, inputs."""

import numpy as np
import pytest
import scipy.sparse as sp

from strads import MF


def planted(users=300, items=200, rank=3, observed=0.3, noise=0.1, seed=0):
    """Ratings mu + b_u + c_i + w_u . h_i + noise on a random share of the pairs, split 80/20."""
    rng = np.random.default_rng(seed)
    w, h = rng.normal(size=(users, rank)), rng.normal(size=(items, rank))
    b, c = 0.3 * rng.normal(size=users), 0.3 * rng.normal(size=items)
    mask = rng.random((users, items)) < observed
    u, i = np.nonzero(mask)
    r = 3.0 + b[u] + c[i] + np.einsum("ij,ij->i", w[u], h[i]) + noise * rng.normal(size=u.size)
    test = rng.random(u.size) < 0.2
    return (u[~test], i[~test], r[~test]), (u[test], i[test], r[test]), (users, items)


def rmse(model, pairs):
    u, i, r = pairs
    return np.sqrt(np.mean((model.predict(u, i) - r) ** 2))


@pytest.mark.parametrize("algorithm", ["ccdpp", "ccd", "als"])
def test_ratings_recover_the_planted_model_and_workers_agree(algorithm):
    train, test, shape = planted()
    u, i, r = train
    one = MF(rank=3, algorithm=algorithm, iterations=60, tol=0, validation=0, regularization=0.01).fit(
        users=u, items=i, ratings=r, shape=shape
    )
    baseline = np.sqrt(np.mean((test[2] - r.mean()) ** 2))
    assert rmse(one, test) < 0.3 * baseline, (rmse(one, test), baseline)
    assert one.user_factors.shape == (shape[0], 3) and one.item_factors.shape == (shape[1], 3)
    # A prediction is mu + b_u + c_i + w_u . h_i.
    expected = one.mu + one.user_bias[u] + one.item_bias[i] + np.einsum("ij,ij->i", one.user_factors[u], one.item_factors[i])
    np.testing.assert_allclose(one.predict(u, i), expected)
    two = MF(rank=3, algorithm=algorithm, iterations=60, tol=0, validation=0, regularization=0.01, n_workers=2).fit(
        users=u, items=i, ratings=r, shape=shape
    )
    np.testing.assert_allclose(two.user_factors, one.user_factors, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(two.item_factors, one.item_factors, rtol=1e-9, atol=1e-12)


def test_defaults_stop_early_on_a_held_out_fraction_and_a_matrix_equals_arrays():
    train, test, shape = planted(seed=1, noise=0.5)
    u, i, r = train
    model = MF(rank=3).fit(users=u, items=i, ratings=r, shape=shape)
    assert model.validation_rmse_ is not None
    assert (model.algorithm_, model.bias_) == ("ccdpp", "full")
    assert rmse(model, test) < 0.8
    whole = MF(rank=3, validation=0).fit(users=u, items=i, ratings=r, shape=shape)
    assert whole.validation_rmse_ is None and not whole.stopped_early_
    matrix = sp.csr_matrix((r, (u, i)), shape=shape)
    same = MF(rank=3, validation=0).fit(matrix)
    np.testing.assert_allclose(same.user_factors, whole.user_factors)
    # A pair without training ratings gets its bias model; an unknown user the known item's.
    cold_user = shape[0] + 5
    assert model.predict([cold_user], [0])[0] == pytest.approx(model.mu + model.item_bias[0])


def test_implicit_feedback_ranks_held_out_items_above_popular_ones():
    rng = np.random.default_rng(2)
    users, items, groups = 240, 120, 4
    liked = [set(range(g * 30, (g + 1) * 30)) for g in range(groups)]
    pairs = []
    for user in range(users):
        group = liked[user % groups]
        # Mostly the group's items, a few others: plays of an item, as counts.
        chosen = rng.choice(sorted(group), size=12, replace=False).tolist() + rng.choice(items, size=2, replace=False).tolist()
        for item in dict.fromkeys(chosen):
            pairs.append((user, item, float(rng.integers(1, 5))))
    pairs = np.array(pairs)
    held = rng.random(len(pairs)) < 0.25
    train, test = pairs[~held], pairs[held]
    model = MF(rank=8, implicit=True, alpha=2.0, n_workers=2).fit(
        users=train[:, 0], items=train[:, 1], ratings=train[:, 2], shape=(users, items)
    )
    assert (model.algorithm_, model.bias_) == ("als", "none")
    popularity = np.bincount(train[:, 1].astype(int), minlength=items)
    hits, popular_hits = 0, 0
    for user in range(users):
        seen = set(train[train[:, 0] == user, 1].astype(int))
        wanted = set(test[test[:, 0] == user, 1].astype(int))
        top, scores = model.recommend(user, 5)
        assert not seen & set(top.tolist()), "recommend leaves out the training items"
        assert np.all(np.diff(scores) <= 0)
        hits += len(wanted & set(top.tolist()))
        order = [j for j in np.argsort(-popularity, kind="stable") if j not in seen][:5]
        popular_hits += len(wanted & set(order))
    assert hits > 2 * popular_hits, (hits, popular_hits)
    with_seen, _ = model.recommend(0, 5, exclude_seen=False)
    assert len(with_seen) == 5


def test_bad_input_raises_value_errors():
    u, i, r = np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([4.0, 3.0, 5.0])
    with pytest.raises(ValueError, match="given 2 times"):
        MF().fit(users=[0, 0], items=[1, 1], ratings=[1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        MF().fit(users=u, items=i, ratings=[4.0, np.nan, 5.0])
    with pytest.raises(ValueError, match=">= 0"):
        MF(implicit=True).fit(users=u, items=i, ratings=[1.0, -2.0, 1.0])
    with pytest.raises(ValueError, match="indices >= 0"):
        MF().fit(users=[-1, 0, 1], items=i, ratings=r)
    with pytest.raises(ValueError, match="same length"):
        MF().fit(users=u, items=i[:2], ratings=r)
    with pytest.raises(ValueError):
        MF(algorithm="sgd").fit(users=u, items=i, ratings=r)
    with pytest.raises(ValueError, match="not fitted"):
        MF().predict([0], [0])
    with pytest.raises(ValueError, match="lambda exponent must be in"):
        MF(lambda_exponent=1.5).fit(users=u, items=i, ratings=r)


def test_the_lambda_exponent_weighs_rows_as_the_command_does():
    train, _, shape = planted(seed=2, noise=0.5)
    u, i, r = train
    default = MF(rank=3, validation=0).fit(users=u, items=i, ratings=r, shape=shape)
    half = MF(rank=3, validation=0, lambda_exponent=0.5).fit(users=u, items=i, ratings=r, shape=shape)
    # The default lambda weighs a row of 144 ratings alike at every exponent.
    assert half.regularization_ == pytest.approx(12 * default.regularization_, rel=1e-12)
    assert not np.allclose(half.user_factors, default.user_factors)
    # With a given lambda and exponent, 1 and 2 workers give the same model.
    one = MF(rank=3, validation=0, lambda_exponent=0.5, regularization=1.0, n_workers=1).fit(users=u, items=i, ratings=r, shape=shape)
    two = MF(rank=3, validation=0, lambda_exponent=0.5, regularization=1.0, n_workers=2).fit(users=u, items=i, ratings=r, shape=shape)
    np.testing.assert_allclose(two.user_factors, one.user_factors, rtol=1e-9, atol=1e-12)
