"""
One-against-the-rest IVMs on 13 x 13 MNIST, and the reject curve
================================================================

Lawrence, Seeger & Herbrich (2003, sec. 4) train ten IVMs, each digit against the rest, on MNIST digits
down-sampled to 13 x 13, and decide for the class with the largest log P(y = +1 | x). Rejecting the test
digits the winning IVM is least sure of lowers the error on those kept: their Fig. 1 plots this reject
curve. Here, on a subset of the training images so that the example runs in a minute, with the paper's
kernel form C exp(-(gamma / 338) r^2) + 1/10, r the Euclidean distance between two images.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import IVMClassifier, OneVsRestIVMClassifier, datasets, metrics
from sparsegp.kernels import SquaredExponential

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
data = datasets.load("mnist")
X = datasets.mnist_13x13(data.X_train[: 2000 if quick else 8000])
y = data.y_train[: len(X)]
X_test = datasets.mnist_13x13(data.X_test[:2000])
y_test = data.y_test[:2000]

gamma, C = 33.8, 10.0  # one of the paper's settings: C exp(-(gamma / 338) r^2)
kernel = SquaredExponential(lengthscale=np.sqrt(338 / (2 * gamma)), variance=C)
template = IVMClassifier(kernel, size=100 if quick else 300, bias_variance=0.1, random_state=0)
clf = OneVsRestIVMClassifier(template).fit(X, y)
log_p = clf.predict_log_proba(X_test)
predicted = clf.classes_[np.argmax(log_p, axis=1)]
print(f"test error {metrics.error_rate(y_test, predicted):.4f} on {len(y_test)} test digits")

fractions, rates = metrics.reject_curve(y_test, predicted, log_p.max(axis=1), fractions=np.linspace(0, 0.2, 21))
fig, (ax_digits, ax) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1, 1.4]})
ax_digits.imshow(
    np.vstack([np.hstack([X_test[r * 6 + c].reshape(13, 13) for c in range(6)]) for r in range(3)]), cmap="gray_r"
)
ax_digits.set_title("test digits, 13 x 13")
ax_digits.axis("off")
ax.plot(100 * fractions, 100 * rates, "o-")
ax.set_xlabel("test digits rejected (%)")
ax.set_ylabel("error on the rest (%)")
ax.set_title("reject curve, ten one-against-the-rest IVMs")
fig.tight_layout()
plt.show()
