#!/usr/bin/env python3
"""Summarize a tgc viewer's data (--viz=FILE.json, or the JSON inside FILE.html) for FileCheck.

One line per pass (name, nodes created, the rule with most hits), one per kernel (stages, actions, source
languages, whether work and time are there), and a check that every graph a pass or kernel names exists.
With --source LANGUAGE: each kernel's source in that language instead (the renderer's output, before LLVM).
"""
import json
import sys


def load(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".html"):
        start = text.index('<script type="application/json" id="data">') + len('<script type="application/json" id="data">')
        text = text[start:text.index("</script>", start)]  # "<\/" in it is JSON for "</"
    return json.loads(text)


def main():
    d = load(sys.argv[1])
    if sys.argv[2:3] == ["--source"]:
        for k in d["kernels"]:
            print(k["source"][sys.argv[3]])
        return
    graphs = d["graphs"]
    print("format:", d["format"], "target:", d["target"], "graphs:", len(graphs))
    for p in d["passes"]:
        top = p["rules"][0] if p.get("rules") else None
        print("pass %s: %d created%s" % (p["name"], len(p.get("changed", [])),
                                         ", top rule: %s (%s)" % (top["rule"][:60], top["matcher"]) if top else ""))
        for g in (p.get("before"), p["after"]):
            assert g is None or 0 <= g < len(graphs), "pass %s names a missing graph" % p["name"]
        ids = {n["id"] for n in graphs[p["after"]]["nodes"]}
        assert all(c in ids for c in p.get("changed", [])), "pass %s: a changed node is not in its graph" % p["name"]
    for k in d["kernels"]:
        print("kernel %s: call %d, stages %s, actions %s, source %s, flops %s, seconds %s" % (
            k["name"], k["call"], ",".join(s["pass"] for s in k["stages"]), k.get("actions", "-"),
            ",".join(sorted(k.get("source", {}))) or "-", "yes" if k.get("flops", 0) > 0 else "no",
            "yes" if k.get("seconds", -1) >= 0 else "no"))
    laid = sum(1 for g in graphs if g.get("svg"))
    print("graphs with a layout:", laid)


if __name__ == "__main__":
    main()
