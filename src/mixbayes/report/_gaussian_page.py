"""The Gaussian page's data: the components of a variational Gaussian mixture or a Gaussian HDP,
as plain JSON-ready data (the map of Hellinger distances, the 2-D projection with ellipses,
sizes and the trace)."""

from __future__ import annotations

import numpy as np

from .._validation import plural
from . import _geometry
from ._extract import (JITTER, _axis_names, _hdp_traces, _jitter, _points_note, _round,
                       _subsample, _trace)


def gaussian_payload(model, points=None, feature_names=None):
    """The map (Hellinger distances between the components), the 2-D projection with 2-sigma
    ellipses, sizes and trace of a Gaussian mixture or a Gaussian HDP."""
    d = model.n_features_in_
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    if model._report_kind[1] == "sampled":  # the Gaussian HDP: components from its draws
        means = model.components_
        K = means.shape[0]
        sizes = np.bincount(model.labels_, minlength=K)
        share = sizes / sizes.sum()
        tau = model.observation_precision
        if tau is None and points is not None:
            from ..families.gaussian import column_variances, data_scale

            tau = 10.0 / data_scale(column_variances(points))
        covariances = None if tau is None else np.repeat(np.eye(d)[None] / tau, K, axis=0)
        kept = np.arange(K)
        traces = _hdp_traces(model)
        chains, sweeps = model.trace_.shape
        subtitle = (f"hierarchical Dirichlet process (Gaussian): "
                    f"{plural(len(model.labels_), 'point')} in "
                    f"{plural(model.n_groups_, 'group')} x {plural(d, 'feature')} -> "
                    f"{plural(K, 'cluster')}; {plural(chains, 'chain')} x "
                    f"{plural(sweeps, 'sweep')}")
        unit = "cluster"
    else:
        means = model.means_
        K = means.shape[0]
        sizes = np.bincount(model.labels_, minlength=K)
        share = model.weights_
        covariances = np.array([model.covariance_matrix(k) for k in range(K)])
        kept = np.flatnonzero(sizes > 0)
        traces = [_trace("ELBO per CAVI iteration", "iteration", "ELBO (nats)",
                         [("ELBO", model.elbo_trace_)])]
        effective = plural(model.n_effective_components_, "effective component")
        subtitle = (f"variational Gaussian mixture: {plural(len(model.labels_), 'point')} x "
                    f"{plural(d, 'feature')} -> {effective} of {K} ({model.covariance_type} "
                    f"covariance); ELBO {model.elbo_:.6g} after "
                    f"{plural(model.n_iter_, 'iteration')}"
                    + ("" if model.converged_ else " (NOT converged)"))
        unit = "component"
    if covariances is not None:
        distances = _geometry.hellinger_distances(means[kept], covariances[kept])
        map_note = ("Hellinger distance between the Gaussians, by metric MDS (classical MDS "
                    "refined by stress majorization); circle area = share")
    else:
        spread = means[kept] - means[kept].mean(axis=0)
        distances = np.sqrt(((spread[:, None] - spread[None]) ** 2).sum(axis=-1))
        map_note = ("Euclidean distance between the means, by metric MDS (classical MDS "
                    "refined by stress majorization); circle area = share")
    coords = _geometry.map_coordinates(distances)
    if points is not None:
        centre, basis = _geometry.principal_plane(points)
    elif covariances is not None:
        centre, basis = _geometry.mixture_plane(share[kept], means[kept], covariances[kept])
    else:
        centre, basis = _geometry.principal_plane(means[kept], share[kept])
    components = []
    for i, k in enumerate(kept):
        entry = dict(id=int(k), share=float(share[k]),
                     size=f"{plural(int(sizes[k]), 'point')}, weight {share[k]:.3f}",
                     x=float(coords[i, 0]), y=float(coords[i, 1]),
                     centre=[_round(v) for v in (means[k] - centre) @ basis],
                     mean=[_round(v) for v in means[k]])
        if covariances is not None:
            ellipse = _geometry.ellipse(covariances[k], basis)
            if d == 1:  # one feature: the 2-sigma interval, as tall as the points' jitter
                ellipse = (ellipse[0], JITTER * 1.25, 0.0)
            entry["ellipse"] = [_round(v) for v in ellipse]
        components.append(entry)
    payload = dict(kind="gaussian", unit=unit, subtitle=subtitle, components=components,
                   features=names, axes=_axis_names(names, d), traces=traces,
                   map_note=map_note)
    if points is not None:
        labels = model.labels_ if len(model.labels_) == points.shape[0] else model.predict(points)
        keep = _subsample(points.shape[0])
        xy = _jitter((points[keep] - centre) @ basis, d)
        payload["points"] = [[_round(a), _round(b), int(k)]
                             for (a, b), k in zip(xy, labels[keep])]
        payload["points_note"] = _points_note(points.shape[0], keep.size)
    return payload
