"""What a fit says against trusting it, for the page's header: the warnings the model issued
(and the CLI printed) as :class:`~mixbayes.ConvergenceWarning`, kept where users share them."""

from __future__ import annotations

import numpy as np

RHAT_CEILING = 1.1


def unsettled_tree(rhat, remedy):
    """The sentence for a tree's chain whose split R-hat ``rhat`` is above the ceiling; the
    RCDLL spelled out as a user reads it (``rcdll`` stays the key of trace.csv and JSON)."""
    return (f"the chain has not settled (split R-hat {rhat:.2f} > {RHAT_CEILING} of the "
            f"regularised complete-data log-likelihood, rcdll); raise {remedy}")


def convergence_warnings(model):
    """The model's convergence warnings as sentences (an empty list when it has none):
    the HDP's ``convergence_warnings_`` (the number of clusters or the log joint still
    trending, chains that disagree), the tree's chain not settled (split R-hat of the RCDLL
    above 1.1, as ``mixbayes cluster`` prints it), a Gibbs chain or a variational fit not
    converged (``converged_`` False)."""
    name = type(model).__name__
    if name == "HDPMixture":
        return [str(w) for w in getattr(model, "convergence_warnings_", [])]
    if name == "HierarchicalMixture":
        rhat = float(getattr(model, "rhat_", {}).get("rcdll", np.nan))
        if np.isfinite(rhat) and round(rhat, 2) > RHAT_CEILING:  # as printed: not "1.10 > 1.1"
            return [unsettled_tree(rhat, "n_iter (--n-iter)")]
        return []
    if getattr(model, "converged_", True):
        return []
    if getattr(model, "inference", "vb") == "gibbs":
        return [f"the kept Gibbs chain did not settle in {model.n_iter_} sweeps (its log "
                f"joint's split R-hat over the second half above {RHAT_CEILING}); raise "
                "n_sweeps"]
    return [f"the fit did not converge in {model.n_iter_} iterations (the change of its "
            "objective stayed above tol); raise max_iter"]
