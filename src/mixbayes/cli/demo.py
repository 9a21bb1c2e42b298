"""``mixbayes demo``: the document mixture on the embedded classic3 corpus."""

from __future__ import annotations

from ._fitting import run_fitting
from ._parser import add_common


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    demo = sub.add_parser("demo", allow_abbrev=False,
                          help="cluster the embedded classic3 corpus (3,891 abstracts)",
                          description="Cluster the embedded classic3 corpus into its three "
                          "collections with the Dirichlet-multinomial mixture.")
    add_common(demo, "mixbayes-demo")
    return demo


def run(parsed, stream):
    from .cluster import run_model

    return run_fitting(parsed, stream, run_model)
