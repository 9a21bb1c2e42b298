"""What every benchmark script shares: the machine line, markdown tables, docs/benchmarks.md."""

import os
import platform

import numpy as np


def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numba
    import sklearn

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, load average {load:.1f} at the start; Python "
            f"{platform.python_version()}, numpy {np.__version__}, scikit-learn "
            f"{sklearn.__version__}, numba {numba.__version__}")


def markdown_table(header, rows):
    """A markdown table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(path, heading, intro, text):
    """Replace the section starting at ``heading`` (up to the next '## ') in a markdown file."""
    from time import strftime

    body = f"{heading}\n\nRun {strftime('%Y-%m-%d')} on {machine()}{intro}\n\n{text}\n"
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + body
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + body + ("\n" + old[end + 1:] if end >= 0 else "")
    with open(path, "w") as handle:
        handle.write(new)
