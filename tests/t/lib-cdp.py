#!/usr/bin/python3
# lib-cdp.py STEP... - drive headless Chromium through the DevTools protocol
# over a pipe (--remote-debugging-pipe: no port, no websocket library), for
# the dashboard's tests.
#
# Steps, in order:
#   size W H      the viewport (default 1200 900)
#   open URL      navigate and wait until the new document is complete
#   wait JS       evaluate JS until it is truthy (every 0.1 s, at most
#                 $CDP_TIMEOUT seconds, default 120); fails after that
#   eval JS       print the value of JS (JSON) on stdout
#   run CMD       run a shell command; fails if it does
#   shot FILE     write a PNG of the viewport
#   noerrors      fail if the page logged an error: an exception, a
#                 console.error, a failed load or a blocked script (CSP)
# Prints what failed on stderr and exits 1; Chromium's own log goes to
# $CDP_LOG (default /dev/null).
import base64
import json
import os
import select
import subprocess
import sys
import time

TIMEOUT = float(os.environ.get("CDP_TIMEOUT", "120"))


class Browser:
    def __init__(self):
        r1, self.w = os.pipe()
        self.r, w2 = os.pipe()

        def child():
            a, b = os.dup(r1), os.dup(w2)
            os.dup2(a, 3)
            os.dup2(b, 4)

        log = open(os.environ.get("CDP_LOG", "/dev/null"), "ab")
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run", "--disable-extensions",
             "--user-data-dir=" + os.path.abspath("cdp-profile"), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=child,
            close_fds=False)
        os.close(r1)
        os.close(w2)
        self.buf = b""
        self.next_id = 0
        self.session = None
        self.events = []

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("no answer from chromium in time")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 65536)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or TIMEOUT)
        while True:
            m = self.read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def evaluate(self, js):
        r = self.call("Runtime.evaluate", {"expression": js, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (js, r["exceptionDetails"]))
        return r.get("result", {}).get("value")

    def errors(self):
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p["exceptionDetails"])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
        return out


def wait_for(b, js):
    deadline = time.monotonic() + TIMEOUT
    while not b.evaluate(js):
        if time.monotonic() > deadline:
            raise RuntimeError("still false after %gs: %s" % (TIMEOUT, js))
        time.sleep(0.1)


def main(argv):
    b = Browser()
    try:
        t = b.call("Target.createTarget", {"url": "about:blank"})
        s = b.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})
        b.session = s["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            b.call(m)
        b.call("Emulation.setDeviceMetricsOverride", {"width": 1200, "height": 900,
                                                     "deviceScaleFactor": 1, "mobile": False})
        arity = {"size": 2, "open": 1, "wait": 1, "eval": 1, "run": 1, "shot": 1,
                 "noerrors": 0}
        i = 0
        while i < len(argv):
            step = argv[i]
            if step not in arity or i + arity[step] >= len(argv) + (arity[step] == 0):
                raise RuntimeError("bad step at %s" % " ".join(argv[i:]))
            args = argv[i + 1:i + 1 + arity[step]]
            i += 1 + arity[step]
            if step == "size":
                b.call("Emulation.setDeviceMetricsOverride",
                       {"width": int(args[0]), "height": int(args[1]),
                        "deviceScaleFactor": 1, "mobile": False})
            elif step == "open":
                b.evaluate("window.cdpOld = 1")
                b.call("Page.navigate", {"url": args[0]})
                wait_for(b, "!window.cdpOld && document.readyState === 'complete'")
            elif step == "wait":
                wait_for(b, args[0])
            elif step == "eval":
                print(json.dumps(b.evaluate(args[0])), flush=True)
            elif step == "run":
                subprocess.run(args[0], shell=True, check=True)
            elif step == "shot":
                r = b.call("Page.captureScreenshot", {"format": "png"})
                with open(args[0], "wb") as f:
                    f.write(base64.b64decode(r["data"]))
            elif step == "noerrors":
                b.call("Runtime.evaluate", {"expression": "0"})  # drain pending events
                bad = b.errors()
                if bad:
                    raise RuntimeError("the page logged errors:\n" + "\n".join(bad))
    except Exception as e:
        print("lib-cdp.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
