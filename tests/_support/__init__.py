"""Helpers the tests share, imported as a package (tests/ is on pytest's pythonpath): exact
posteriors and goodness-of-fit checks (helpers), the command run in this process (cli). (The
headless browser the report's tests drive is tools/cdp.py, shared with bench/.)"""
