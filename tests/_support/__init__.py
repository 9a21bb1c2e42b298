"""Helpers the tests share, imported as a package (tests/ is on pytest's pythonpath): exact
posteriors and goodness-of-fit checks (helpers), the command run in this process (cli), a
headless browser over the DevTools protocol (cdp)."""
