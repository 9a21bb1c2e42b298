"""Which ``covariance_type`` should HierarchicalMixture default to (issue 22)? Dendrogram
purity of ``paths_`` and leaf ARI on the six UCI tables of ../shared/data/uci (columns
standardised, as ``bench_gmm.load_uci`` reads them), one seed per type, every other setting
at its default. Quality only: no timings (the numbers do not depend on the machine's load).

Run:  python bench/tree_covariances.py [--types known,spherical,diag,full] [--tables ...]
"""

import argparse
import warnings

import numpy as np

import mixbayes as mb
from bench_gmm import load_uci

TABLES = ("iris", "wine", "glass", "ecoli", "wdbc", "yeast")
TYPES = ("known", "spherical", "diag", "full")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    types = args.types.split(",")
    print("| table | N | d | " + " | ".join(f"{t} purity / ARI (leaves)" for t in types) + " |")
    print("|---" * (3 + len(types)) + "|")
    for name in args.tables.split(","):
        X, y = load_uci(name)
        cells = []
        for covariance_type in types:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = mb.HierarchicalMixture(covariance_type=covariance_type,
                                               random_state=args.seed).fit(X)
            cells.append(f"{mb.metrics.dendrogram_purity(model.paths_, y):.3f} / "
                         f"{mb.metrics.ari(y, model.labels_):.3f} "
                         f"({np.unique(model.labels_).size})")
        print(f"| {name} | {X.shape[0]} | {X.shape[1]} | " + " | ".join(cells) + " |",
              flush=True)


if __name__ == "__main__":
    main()
