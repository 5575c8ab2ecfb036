#!/usr/bin/env python3
"""Open a tgc viewer (--viz=FILE.html) in headless Chromium and summarize what the page shows, for FileCheck.

viewer_dom.py VIEWER.html [--hash pass=NAME|kernel=NAME] [--screenshot OUT.png]

Prints the page's status (set by its script once rendered), script errors, the passes and kernels listed, what the
main view shows and the op of every node drawn there (with the count of nodes the pass created). Exits 2 with a
message when Chromium is missing.
"""
import argparse
import html
import re
import shutil
import subprocess
import sys


def chromium(args, timeout=180):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        sys.exit("viewer_dom.py: chromium is not installed (apt install chromium); skipping")
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--virtual-time-budget=10000"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("viewer")
    ap.add_argument("--hash", default="")
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    url = "file://" + subprocess.run(["realpath", a.viewer], capture_output=True, text=True).stdout.strip()
    if a.hash:
        url += "#" + a.hash
    dom = chromium(["--dump-dom", url]).stdout
    data = dom.find('<script type="application/json" id="data">')
    if data >= 0:  # the embedded JSON is not part of what is shown
        dom = dom[:data] + dom[dom.find("</script>", data):]
    body = re.search(r"<body([^>]*)>", dom)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1))) if body else {}
    print("status:", attrs.get("data-status", "none"))
    print("errors:", html.unescape(attrs.get("data-errors", "none")))
    kernels_at = dom.find(">Kernels (")
    items = [(m.start(), html.unescape(m.group(1)))
             for m in re.finditer(r'<div class="item[^"]*" data-name="([^"]*)"', dom)]
    passes = [n for at, n in items if kernels_at < 0 or at < kernels_at]
    kernels = [n for at, n in items if kernels_at >= 0 and at > kernels_at]
    print("passes:", len(passes) - 1, " ".join(passes[1:]))
    print("kernels:", len(kernels), " ".join(kernels))
    view = re.search(r'<div id="view" data-(pass|kernel)="([^"]*)"', dom)
    print("view:", view.group(1) + " " + html.unescape(view.group(2)) if view else "none")
    ops, changed = [], 0
    for m in re.finditer(r'<g id="([^"]+)" class="node([^"]*)">(.*?)</g>', dom, re.S):
        text = " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", m.group(3)))
        ops.append(text.split(" ")[0])
        changed += "changed" in m.group(2)
    print("nodes drawn:", len(ops), "created by the pass:", changed)
    print("ops:", " ".join(sorted(set(ops))))
    if a.screenshot:
        chromium(["--window-size=1400,900", "--screenshot=" + a.screenshot, url])
        print("screenshot:", "written" if shutil.os.path.exists(a.screenshot) else "missing")


if __name__ == "__main__":
    main()
