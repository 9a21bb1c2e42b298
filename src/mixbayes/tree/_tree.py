"""The fitted tree: the kept state simplified for display, with Newick and JSON export.

Simplification (Huang et al. 2021, §4): empty nodes are never kept, and a node without siblings is
merged into its parent, repeatedly; the merged node keeps the parent's number and level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np


@dataclass
class Tree:
    """A simplified tree. Node 0 is the root; arrays are indexed by node.

    Attributes
    ----------
    parent : ndarray of shape (n_nodes,)
        Parent of every node (-1 for the root).
    level : ndarray of shape (n_nodes,)
        Depth of every node in the sampled tree (0 = root).
    size : ndarray of shape (n_nodes,)
        Points through every node.
    weights : ndarray of shape (n_nodes, n_components)
        Component weights :math:`\\beta_z` of every node (of the deepest node merged into it);
        the rest of each row's mass, 1 - sum, is the weight of components not yet seen.
    means : ndarray of shape (n_components, n_features)
        Component means.
    covariances : ndarray or None
        Component covariances as :attr:`HierarchicalMixture.covariances_` holds them
        (matrices, per-feature variances, or one variance per component), or None.
    """

    parent: np.ndarray
    level: np.ndarray
    size: np.ndarray
    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray | None = None

    @property
    def n_nodes(self):
        return self.parent.size

    def children(self, node):
        return np.flatnonzero(self.parent == node)

    def describe(self):
        """``"a tree of 3 top-level branches, 9 leaves"``, or where the simplified tree is its
        root alone (every point on one path) ``"one leaf (no branches)"``: not "a tree of 0
        top-level branches, 1 leaf"."""
        from .._validation import plural

        top = self.children(0).size
        if top == 0:
            return "one leaf (no branches)"
        leaves = int(np.sum(~np.isin(np.arange(self.n_nodes), self.parent)))
        return (f"a tree of {plural(top, 'top-level branch', 'top-level branches')}, "
                f"{plural(leaves, 'leaf', 'leaves')}")

    def to_newick(self):
        """Newick string; nodes are named ``n<id>`` and every branch has length 1."""
        def write(node):
            kids = self.children(node)
            inner = "(" + ",".join(write(k) for k in kids) + ")" if kids.size else ""
            return f"{inner}n{node}" + (":1" if node else "")
        return write(0) + ";"

    def to_dict(self):
        return {
            "nodes": [{"id": int(z), "parent": int(self.parent[z]), "level": int(self.level[z]),
                       "size": int(self.size[z]), "weights": self.weights[z].tolist()}
                      for z in range(self.n_nodes)],
            "components": [dict({"id": k, "mean": self.means[k].tolist()}, **(
                {} if self.covariances is None else {"covariance": self.covariances[k].tolist()}))
                           for k in range(self.means.shape[0])],
        }

    def to_json(self, **kwargs):
        """JSON of every node (id, parent, level, size, weights) and component (id, mean and,
        when known, covariance: a matrix, per-feature variances or one variance)."""
        return json.dumps(self.to_dict(), **kwargs)


def simplify(parent, level, count, alive, paths, logw, K):
    """Number the occupied nodes of a sampled tree breadth first, merge every node without
    siblings into its parent, and return the arrays of the :class:`Tree` and the points'
    paths in the new numbers, shape (n, depth)."""
    children = {}
    for z in np.flatnonzero(alive):
        if z != 0 and count[z] > 0:
            children.setdefault(int(parent[z]), []).append(int(z))
    new_id, rows = {0: 0}, [(0, -1, 0, 0)]  # (old, new parent, level, deepest old node)
    queue = [0]
    while queue:
        z = queue.pop(0)
        for child in sorted(children.get(z, []), key=lambda c: -count[c]):
            if len(children[z]) == 1:  # no siblings: merged into z
                new_id[child] = new_id[z]
                rows[new_id[z]] = rows[new_id[z]][:3] + (child,)
            else:
                new_id[child] = len(rows)
                rows.append((child, new_id[z], int(level[child]), child))
            queue.append(child)
    n_nodes = len(rows)
    tree_parent = np.array([r[1] for r in rows], dtype=np.int64)
    tree_level = np.array([r[2] for r in rows], dtype=np.int64)
    tree_size = np.array([count[r[0]] for r in rows], dtype=np.int64)
    tree_weights = np.exp(logw[[r[3] for r in rows], :K]).reshape(n_nodes, K)
    mapped = np.vectorize(new_id.get, otypes=[np.int64])(paths) if paths.size else paths
    return tree_parent, tree_level, tree_size, tree_weights, mapped


def linkage_to_newick(Z, names=None):
    """Newick string of a binary merge tree in scipy's linkage format: leaves named ``p<i>``
    (or ``names[i]``), every branch as long as the height it spans (a point's height is 0).
    Written without recursion, so deep trees of many points are fine."""
    Z = np.asarray(Z, dtype=float)
    n = Z.shape[0] + 1
    names = [f"p{i}" for i in range(n)] if names is None else [str(v) for v in names]
    if Z.shape[0] == 0:
        return f"{names[0]};"
    height = np.concatenate([np.zeros(n), Z[:, 2]])
    parent_height = np.zeros(2 * n - 1)
    for row, (a, b) in enumerate(Z[:, :2].astype(np.int64)):
        parent_height[a] = parent_height[b] = Z[row, 2]
    pieces, stack = [], [(2 * n - 2, 0)]
    while stack:
        node, state = stack.pop()
        length = f":{parent_height[node] - height[node]:.6g}" if node != 2 * n - 2 else ""
        if node < n:
            pieces.append(names[node] + length)
            continue
        a, b = Z[node - n, :2].astype(np.int64)
        if state == 0:
            pieces.append("(")
            stack.extend([(node, 2), (int(b), 0), (node, 1), (int(a), 0)])
        elif state == 1:
            pieces.append(",")
        else:
            pieces.append(")" + length)
    return "".join(pieces) + ";"
