"""
A fit on dask arrays on a local cluster
=======================================

``SparseGPRegressor.fit`` accepts dask arrays: the sums of the bound and its gradient are computed on the
workers of the current ``dask.distributed`` client, partition by partition, and only m x m matrices travel
back, so the data never have to fit in one process. Here a ``LocalCluster`` of two worker processes fits
5,000 of kin40k's training rows in ten partitions, and the same fit in memory gives the same model.
"""

import logging
import os
import warnings

import dask.array as da
import distributed
import matplotlib.pyplot as plt
import numpy as np

from sparsegp import SparseGPRegressor, datasets, metrics
from sparsegp.options import Joint


def main():
    quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
    n = 2000 if quick else 5000
    X, y, X_test, y_test = datasets.load("kin40k", split="fixed", n_train=n)
    X_test, y_test = X_test[:5000], y_test[:5000]
    settings = dict(inducing=32 if quick else 64, random_state=0, schedule=Joint(max_iter=20 if quick else 60))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the cluster's own start-up notices
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
        client = distributed.Client(cluster)
    try:
        Xd = da.from_array(X, chunks=(n // 10, X.shape[1]))
        yd = da.from_array(y, chunks=n // 10)
        on_cluster = SparseGPRegressor(**settings).fit(Xd, yd)
        mean_cluster = np.asarray(on_cluster.predict(da.from_array(X_test, chunks=(1000, X.shape[1]))))
    finally:
        client.close()
        cluster.close()
    in_memory = SparseGPRegressor(**settings).fit(X, y)
    mean_memory = in_memory.predict(X_test)
    print(f"objective on the cluster {on_cluster.objective_:.6f}, in memory {in_memory.objective_:.6f}")
    print(f"largest difference between the predictive means: {np.max(np.abs(mean_cluster - mean_memory)):.2e}")
    print(f"test SMSE {metrics.smse(y_test, mean_cluster):.4f}")

    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.plot(mean_memory, mean_cluster, ".", ms=2)
    lims = [mean_memory.min(), mean_memory.max()]
    ax.plot(lims, lims, "k", lw=0.6)
    ax.set_xlabel("predictive mean, fitted in memory")
    ax.set_ylabel("predictive mean, fitted on the cluster")
    ax.set_title(f"kin40k, {n:,} rows in 10 partitions, m = {settings['inducing']}")
    fig.tight_layout()
    plt.show()


# The workers are separate processes started by spawning: they import this file, so it runs only as a script.
if __name__ == "__main__":
    main()
