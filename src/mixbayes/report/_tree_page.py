"""The tree page's data: the tree model's nodes by level, every node's main components, the
points' paths in the 2-D projection and the sampler's trace, as plain JSON-ready data."""

from __future__ import annotations

import numpy as np

from .._validation import plural
from . import _geometry
from ._extract import _axis_names, _jitter, _points_note, _round, _subsample, _trace

MAIN_WEIGHT = 1e-3  # a node's components listed on the page: those of at least this weight


def tree_payload(model, points=None, feature_names=None):
    """The tree (nodes by level, disc area = points through the node), every node's top
    components, the points' paths in the 2-D projection, and the sampler's trace."""
    from ..plotting import tree_layout

    tree = model.tree_
    d = model.n_features_in_
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    x, children = tree_layout(tree.parent)
    levels = {lv: i for i, lv in enumerate(np.unique(tree.level))}
    n = int(tree.size[0])
    K = tree.means.shape[0]
    if points is not None:
        centre, basis = _geometry.principal_plane(points)
    else:
        centre, basis = _geometry.principal_plane(tree.means, np.maximum(tree.weights[0], 1e-12))
    sigma = float(np.sqrt(model.observation_variance_))
    radius = 2.0 * sigma * float(np.linalg.norm(basis, axis=0).max())  # 2 sigma, isotropic
    nodes = []
    for z in range(tree.n_nodes):
        order = np.argsort(-tree.weights[z], kind="stable")[:5]
        top = [dict(component=int(c), weight=_round(tree.weights[z, c])) for c in order
               if tree.weights[z, c] >= MAIN_WEIGHT]
        leaf = not children[z]
        nodes.append(dict(id=int(z), parent=int(tree.parent[z]), level=int(tree.level[z]),
                          depth=levels[int(tree.level[z])], x=float(x[z]),
                          share=float(tree.size[z]) / max(n, 1),
                          size=("root, " if z == 0 else f"level {int(tree.level[z])}, ")
                          + plural(int(tree.size[z]), "point") + (", leaf" if leaf else ""),
                          components=top))
    chains, sweeps = model.trace_.shape
    traces = [
        _trace("regularised complete-data log-likelihood", "sweep", "nats",
               [(f"chain {c + 1}", model.trace_["rcdll"][c]) for c in range(chains)]),
        _trace("components in use", "sweep", "components",
               [(f"chain {c + 1}", model.trace_["n_components"][c]) for c in range(chains)]),
    ]
    leaves = sum(not c for c in children)
    payload = dict(
        kind="tree", unit="node", features=names, axes=_axis_names(names, d),
        subtitle=(f"tree of clusters: {plural(n, 'point')} x {plural(d, 'feature')} -> "
                  f"{plural(len(children[0]), 'top-level branch', 'top-level branches')}, "
                  f"{plural(leaves, 'leaf', 'leaves')}, {plural(K, 'component')}; "
                  f"{plural(chains, 'chain')} x {plural(sweeps, 'sweep')}"),
        nodes=nodes, traces=traces, radius=_round(radius),
        means=[[_round(v) for v in (m - centre) @ basis] for m in tree.means],
        # every component's own 2-sigma ellipse where the covariances are not one shared sigma
        ellipses=None if getattr(model, "covariance_type", "known") == "known" else [
            [_round(v) for v in _geometry.ellipse(model.covariance_matrix(k), basis)]
            for k in range(K)],
        component_means=[[_round(v) for v in m] for m in tree.means],
        map_note="nodes by level; disc area = points through the node",
        dendrogram=_dendrogram(model))
    if points is not None:
        paths = model.paths_ if model.paths_.shape[0] == points.shape[0] else None
        if paths is not None:
            keep = _subsample(points.shape[0])
            xy = _jitter((points[keep] - centre) @ basis, d)
            payload["points"] = [[_round(a), _round(b)] + [int(v) for v in path]
                                 for (a, b), path in zip(xy, paths[keep])]
            payload["points_note"] = _points_note(points.shape[0], keep.size)
    return payload


def _dendrogram(model, shown=40):
    """The top of the full dendrogram (``linkage_``): its merges above the sampled tree's
    components, or its last ``shown - 1`` merges when there are more
    (:func:`mixbayes.plotting.dendrogram_clusters`), laid out as scipy's dendrogram is (clusters evenly spaced in the
    merge order, a merge centred over its two sides). ``links``: x of the left and right
    side, their heights, the merge's height, its size and its top-level branch of the
    sampled tree (-1 when it spans several); ``clusters``: x, size and branch of each
    cluster at the bottom."""
    from ..plotting import dendrogram_clusters, linkage_branches

    Z = model.linkage_
    n = Z.shape[0] + 1
    if n < 2:
        return None
    _, branch_of, mixed = linkage_branches(model)
    rows = dendrogram_clusters(Z, shown) - 1
    first = n - 1 - rows  # rows from here on are drawn
    height = np.concatenate([np.zeros(n), Z[:, 2]])
    x, clusters, links = {}, [], []
    stack = [(2 * n - 2, False)]
    while stack:  # depth first, left before right: clusters get x in that order
        node, done = stack.pop()
        drawn = node >= n + first
        if not drawn:
            x[node] = float(len(clusters))
            size = 1 if node < n else int(Z[node - n, 3])
            clusters.append(dict(x=x[node], size=size, branch=int(branch_of[node])
                                 if not mixed[node] else -1))
            continue
        a, b = (int(v) for v in Z[node - n, :2])
        if not done:
            stack.extend([(node, True), (b, False), (a, False)])
            continue
        x[node] = 0.5 * (x[a] + x[b])
        ya = height[a] if a >= n + first else 0.0
        yb = height[b] if b >= n + first else 0.0
        links.append([_round(x[a]), _round(x[b]), _round(ya), _round(yb),
                      _round(height[node]), int(Z[node - n, 3]),
                      -1 if mixed[node] else int(branch_of[node])])
    return dict(links=links, clusters=clusters, n_points=int(n),
                note=(f"the full dendrogram (linkage_) of {plural(n, 'point')}"
                      + (f": its top {len(clusters)} clusters, sizes below" if first else "")
                      + "; height: stage (points in a component < 1 < components in a "
                        "leaf < 2 < one per level above), colour: top-level branch "
                        "(grey: above the branches)"))
