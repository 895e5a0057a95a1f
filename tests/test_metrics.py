import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import log_loss as sk_log_loss
from sklearn.metrics import mean_absolute_error, mean_squared_error

from sparsegp import InputError, metrics


@pytest.fixture
def data(rng):
    y = rng.normal(size=50)
    mu = y + 0.3 * rng.normal(size=50)
    var = rng.uniform(0.05, 0.5, size=50)
    return y, mu, var


def test_mse_mae_smse(data):
    y, mu, _ = data
    assert metrics.mse(y, mu) == pytest.approx(mean_squared_error(y, mu))
    assert metrics.mae(y, mu) == pytest.approx(mean_absolute_error(y, mu))
    assert metrics.smse(y, mu) == pytest.approx(mean_squared_error(y, mu) / np.var(y))
    assert metrics.smse(y, np.full_like(y, y.mean())) == pytest.approx(1.0)


def test_ntl_and_snlp(data, rng):
    y, mu, var = data
    expected = -np.mean(scipy.stats.norm(mu, np.sqrt(var)).logpdf(y))
    assert metrics.ntl(y, mu, var) == pytest.approx(expected, rel=1e-12)
    y_train = rng.normal(1.0, 2.0, size=200)
    trivial = -np.mean(scipy.stats.norm(y_train.mean(), y_train.std()).logpdf(y))
    assert metrics.snlp(y, mu, var, y_train) == pytest.approx(expected - trivial, rel=1e-12)
    # Predicting with the trivial model itself scores exactly 0.
    assert metrics.snlp(y, np.full_like(y, y_train.mean()), np.full_like(y, y_train.var()), y_train) == pytest.approx(
        0.0, abs=1e-12
    )
    with pytest.raises(InputError, match="strictly positive"):
        metrics.ntl(y, mu, -var)


def test_kl_divergences(rng):
    n = 5
    m1, m2 = rng.normal(size=n), rng.normal(size=n)
    v1, v2 = rng.uniform(0.1, 2, n), rng.uniform(0.1, 2, n)
    diag = metrics.kl_gaussian_diag(m1, v1, m2, v2)
    full = metrics.kl_gaussian(m1, np.diag(v1), m2, np.diag(v2))
    assert diag == pytest.approx(full, rel=1e-12)
    # Closed form per dimension.
    expected = 0.5 * np.sum(np.log(v2 / v1) + (v1 + (m1 - m2) ** 2) / v2 - 1)
    assert diag == pytest.approx(expected, rel=1e-12)
    A = rng.normal(size=(n, n))
    S = A @ A.T + np.eye(n)
    assert metrics.kl_gaussian(m1, S, m1, S) == pytest.approx(0.0, abs=1e-12)
    # Monte Carlo check of a full-covariance KL.
    B = rng.normal(size=(n, n))
    S2 = B @ B.T + np.eye(n)
    x = rng.multivariate_normal(m1, S, size=200000)
    mc = np.mean(scipy.stats.multivariate_normal(m1, S).logpdf(x) - scipy.stats.multivariate_normal(m2, S2).logpdf(x))
    assert metrics.kl_gaussian(m1, S, m2, S2) == pytest.approx(mc, rel=0.02)


def test_classification_metrics(rng):
    y = rng.choice([-1, 1], size=40)
    p = rng.uniform(0.01, 0.99, size=40)
    assert metrics.log_loss(y, p) == pytest.approx(sk_log_loss(y, p, labels=[-1, 1]))
    pred = np.where(p > 0.5, 1, -1)
    assert metrics.error_rate(y, pred) == pytest.approx(np.mean(y != pred))


def test_reject_curve_drops_least_confident_first():
    y = np.array([1, 1, 1, 1, -1, -1, -1, -1, 1, -1])
    pred = np.array([1, 1, 1, 1, -1, -1, -1, -1, -1, 1])  # the last two are wrong
    conf = np.array([9, 9, 8, 8, 7, 7, 6, 6, 0.1, 0.2])  # and least confident
    fr, err = metrics.reject_curve(y, pred, conf, fractions=[0.0, 0.1, 0.2, 0.5])
    np.testing.assert_allclose(err, [0.2, 1 / 9, 0.0, 0.0])
    with pytest.raises(InputError):
        metrics.reject_curve(y, pred, conf, fractions=[1.0])
