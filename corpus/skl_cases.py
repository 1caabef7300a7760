"""The scikit-learn cases of the exporter corpus (see make_corpus.py): fitted estimators whose
skl2onnx conversion computes pairwise distances with a Scan (skl2onnx's `onnx_cdist` and
`onnx_squareform_pdist`, the default when no `optim` option is given): nearest neighbours,
Gaussian processes, kernel PCA, local outlier factor; and KNNImputer, whose local functions
hold Ifs. skl2onnx 1.20 writes KNeighborsRegressor(weights='distance') as the uniform
average (its weights are Max(-distance, 1e-6), all equal): onnxruntime, ONNX's reference
evaluator and lazyloop agree on that model and differ from scikit-learn, so it has no case. Each case is fitted on a small seeded data set; its answer is
the estimator's own prediction, in the order of the converted graph's outputs."""
import numpy as np
from sklearn.decomposition import KernelPCA
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (RBF, ConstantKernel, DotProduct, Matern,
                                              RationalQuadratic)
from sklearn.impute import KNNImputer
from sklearn.neighbors import (KNeighborsClassifier, KNeighborsRegressor, KNeighborsTransformer,
                               LocalOutlierFactor, NearestNeighbors, RadiusNeighborsRegressor)

F32 = np.float32


def data(seed, n=24, d=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = x @ np.array([1.0, -2.0, 0.5][:d]) + 0.1 * rng.normal(size=n)
    return x, y


def queries(seed, n=5, d=3):
    return np.random.default_rng(seed + 100).normal(size=(n, d)).astype(F32)


def regressor(estimator, seed):
    x, y = data(seed)
    return estimator.fit(x, y), lambda m, q: [m.predict(q).reshape(-1, 1)]


def classifier(estimator, seed):
    x, y = data(seed)
    return estimator.fit(x, (y > 0).astype(np.int64) + (y > 1.5)), \
        lambda m, q: [m.predict(q), m.predict_proba(q)]


def neighbours(estimator, seed):
    x, _ = data(seed)
    return estimator.fit(x), lambda m, q: list(m.kneighbors(q))[::-1]  # indices, distances


def outliers(seed):
    x, _ = data(seed)
    return LocalOutlierFactor(3, novelty=True).fit(x), \
        lambda m, q: [m.predict(q).reshape(-1, 1), m.decision_function(q).reshape(-1, 1)]


def knn_graph(seed):
    x, _ = data(seed)
    return KNeighborsTransformer(n_neighbors=3).fit(x), lambda m, q: [m.transform(q).toarray()]


def imputer(seed):
    x, _ = data(seed)
    x[np.random.default_rng(seed).random(x.shape) < 0.15] = np.nan
    return KNNImputer(n_neighbors=3).fit(x), lambda m, q: [m.transform(q)]


def with_holes(q):
    q = q.copy()
    q[0, 1] = q[2, 0] = q[3, 2] = np.nan
    return q


def gaussian_process(kernel, seed):
    x, y = data(seed)
    return GaussianProcessRegressor(kernel, optimizer=None, alpha=0.1).fit(x, y), \
        lambda m, q: [m.predict(q).reshape(-1, 1)]


def kernel_pca(seed):
    x, _ = data(seed)
    return KernelPCA(n_components=2, kernel="rbf", gamma=0.3).fit(x), \
        lambda m, q: [m.transform(q)]


NO_ZIPMAP = {"zipmap": False}

# name, (fitted estimator, its answer as a function of the estimator and the queries),
# queries, about, skl2onnx options
CASES = [
    ("knn_regressor", regressor(KNeighborsRegressor(3), 1), queries(1),
     "KNeighborsRegressor(3), euclidean distances by Scan", None),
    ("knn_manhattan", regressor(KNeighborsRegressor(3, metric="manhattan"), 3), queries(3),
     "KNeighborsRegressor(3, metric='manhattan')", None),
    ("knn_minkowski3", regressor(KNeighborsRegressor(3, p=3), 4), queries(4),
     "KNeighborsRegressor(3, p=3): Minkowski distances", None),
    ("knn_classifier", classifier(KNeighborsClassifier(5), 6), queries(6),
     "KNeighborsClassifier(5), 3 classes: labels and probabilities", NO_ZIPMAP),
    ("nearest_neighbors", neighbours(NearestNeighbors(n_neighbors=3, radius=None), 7), queries(7),
     "NearestNeighbors(3).kneighbors: indices and distances", None),
    ("radius_regressor", regressor(RadiusNeighborsRegressor(radius=2.0), 8), queries(8),
     "RadiusNeighborsRegressor(radius=2)", None),
    ("local_outlier_factor", outliers(2), queries(2),
     "LocalOutlierFactor(3, novelty=True): labels and decision_function", None),
    ("knn_transformer", knn_graph(5), queries(5),
     "KNeighborsTransformer(3): the distance graph, dense", None),
    ("knn_imputer", imputer(14), with_holes(queries(14)),
     "KNNImputer(3): local functions holding If, nan-euclidean distances", None),
    ("gp_rbf", gaussian_process(RBF(1.0), 9), queries(9),
     "GaussianProcessRegressor(RBF): kernel by Scan", None),
    ("gp_rational_quadratic", gaussian_process(RationalQuadratic(1.0, 1.5), 10), queries(10),
     "GaussianProcessRegressor(RationalQuadratic)", None),
    ("gp_matern", gaussian_process(ConstantKernel(2.0) * Matern(1.0, nu=1.5), 11),
     queries(11), "GaussianProcessRegressor(Constant * Matern(nu=1.5))", None),
    ("gp_dot_product", gaussian_process(DotProduct(1.0) + RBF(2.0), 12), queries(12),
     "GaussianProcessRegressor(DotProduct + RBF)", None),
    ("kernel_pca", kernel_pca(13), queries(13),
     "KernelPCA(2, kernel='rbf').transform", None),
]
