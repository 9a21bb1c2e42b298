"""Drive headless Chromium through the DevTools protocol with the standard library alone.

Chromium started with ``--remote-debugging-pipe`` reads commands on file descriptor 3 and
writes replies and events on 4: JSON messages, each ended by a NUL byte. :class:`Browser`
opens one page, records every console error, uncaught exception and failed load, and offers
``evaluate`` (JavaScript, value returned), ``click`` (a real mouse click at a point) and
``screenshot`` (PNG bytes). Used by tests/report/test_report_browser.py and
bench/report_screenshots.py, which both import it from here (tools/: development tools that
the tests and the benchmarks share, not part of the package).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    """The path of a Chromium (or Chrome) binary, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
                 "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless page of ``binary``; use as a context manager."""

    def __init__(self, binary, width=1280, height=900, timeout=30.0):
        self.timeout = timeout
        self.errors = []  # console errors, uncaught exceptions, failed loads
        self._events = []
        self._buffer = b""
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="mixbayes-chromium-")
        commands_r, commands_w = os.pipe()
        replies_r, replies_w = os.pipe()
        # above 4, so that dup2 onto 3 and 4 in the child cannot overwrite one with the other
        child_in = fcntl.fcntl(commands_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(replies_w, fcntl.F_DUPFD, 10)
        os.close(commands_r)
        os.close(replies_w)

        def wire():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--mute-audio",
                f"--user-data-dir={self._profile}", f"--window-size={width},{height}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self._process = subprocess.Popen(
            args + ["about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=wire)
        os.close(child_in)
        os.close(child_out)
        self._write, self._read = commands_w, replies_r
        try:
            target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._call("Target.attachToTarget",
                                       {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable")
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False})
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ the protocol
    def _send(self, method, params, session):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium closed its pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            self._note(message)
        return message

    def _note(self, event):
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console.error: " + " ".join(
                str(arg.get("value", arg.get("description", ""))) for arg in params["args"]))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
        self._events.append(event)

    def _call(self, method, params=None, session=None):
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})

    def call(self, method, params=None):
        """Send a command to the page; returns its result."""
        return self._call(method, params, self._session)

    def wait_for(self, method):
        """Wait for the page's next event ``method`` (or one already received)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self._events:
                if event["method"] == method:
                    self._events.remove(event)
                    return event
            self._receive(deadline)

    # ------------------------------------------------------------------ what tests use
    def open(self, path):
        """Load a local file and wait for its load event."""
        self._events.clear()
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        """The value of a JavaScript expression (JSON-able); an exception raises."""
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x, y):
        """A left mouse click at page coordinates (x, y), as a user's."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                   "button": "left", "clickCount": 1})

    def screenshot(self, full_page=False):
        """A PNG of the viewport (or of the whole page)."""
        params = {"format": "png"}
        if full_page:
            width = self.evaluate("document.documentElement.scrollWidth")
            height = self.evaluate("document.documentElement.scrollHeight")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def close(self):
        if self._process.poll() is None:
            try:
                self._send("Browser.close", {}, None)
                self._process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for fd in (self._write, self._read):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
