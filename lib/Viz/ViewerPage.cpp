//===- ViewerPage.cpp - The viewer's HTML, CSS and script -------*- C++ -*-===//
// One page with no external resources; Viewer.cpp puts the data (JSON) where @DATA@ is.
//===----------------------------------------------------------------------===//

namespace tgc::viz {

extern const char *const kViewerPage;

const char *const kViewerPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tgc viewer</title>
<style>
body { font: 13px Helvetica, Arial, sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; }
header { padding: 6px 10px; background: #24323f; color: #fff; display: flex; gap: 12px; align-items: center; }
header input { width: 240px; padding: 3px; }
#main { flex: 1; display: flex; min-height: 0; }
nav { width: 260px; overflow: auto; border-right: 1px solid #ccc; padding: 4px; }
nav h3 { margin: 8px 4px 4px; font-size: 13px; }
nav div.item { padding: 2px 4px; cursor: pointer; display: flex; justify-content: space-between; }
nav div.item:hover { background: #eef; }
nav div.item.sel { background: #cde; }
nav div.item.hidden { display: none; }
nav span.num { color: #666; font-size: 11px; }
#view { flex: 1; overflow: auto; padding: 6px; }
#panes { display: flex; gap: 6px; }
.pane { flex: 1; border: 1px solid #ddd; overflow: auto; max-height: 70vh; min-width: 0; }
.pane h4 { margin: 0; padding: 3px 6px; background: #f3f3f3; position: sticky; top: 0; }
.pane svg { display: block; max-width: 100%; height: auto; } /* fit the pane; the search and clicks still work */
.pane.actual svg { max-width: none; }
pre { font: 11px Menlo, Consolas, monospace; white-space: pre; margin: 4px; }
g.node { cursor: pointer; }
g.node.changed path, g.node.changed polygon { stroke: #d00; stroke-width: 3px; }
g.node.match path, g.node.match polygon { stroke: #06c; stroke-width: 3px; }
#details { border-top: 1px solid #ccc; padding: 4px 8px; min-height: 2em; background: #fafafa; }
table { border-collapse: collapse; margin: 6px 0; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
button.tab { margin: 2px; }
button.tab.sel { background: #cde; }
#errors { color: #b00; }
</style></head>
<body data-status="loading">
<header><b>tgc viewer</b><span id="title"></span>
<input id="search" placeholder="search nodes, passes, kernels" aria-label="search">
<span id="errors"></span></header>
<div id="main"><nav id="nav"></nav><div id="view"></div></div>
<div id="details">Click a node to see its text and where it came from.</div>
<script type="application/json" id="data">@DATA@</script>
<script>
"use strict";
window.onerror = function (msg) {
  document.body.dataset.errors = (document.body.dataset.errors || "") + msg + ";";
  document.getElementById("errors").textContent = "script error: " + msg;
};
const D = JSON.parse(document.getElementById("data").textContent);
const $ = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  for (const c of kids) e.append(c);
  return e;
};
const ms = s => (s * 1e3).toFixed(s < 0.01 ? 3 : 1) + " ms";
let current = null;

function graphPane(title, id, changed) {
  const g = D.graphs[id];
  const head = $("h4", {title: "click: fit to the pane or actual size"}, title + " (" + g.nodes.length + " nodes)");
  const pane = $("div", {class: "pane"}, head);
  head.onclick = () => pane.classList.toggle("actual");
  if (g.svg) {
    const box = $("div", {});
    box.innerHTML = g.svg;
    pane.append(box);
    const set = new Set(changed || []);
    for (const n of box.querySelectorAll("g.node")) {
      if (set.has(n.id)) n.classList.add("changed");
      n.addEventListener("click", () => showNode(g, n.id));
    }
  } else {
    pane.append($("p", {}, "Too large to lay out; its text:"), $("pre", {}, g.text));
  }
  return pane;
}

function showNode(g, id) {
  const n = g.nodes.find(x => x.id === id);
  if (!n) return;
  const d = document.getElementById("details");
  d.replaceChildren($("pre", {}, n.text + (n.loc ? "    // " + n.loc : "")));
}

function select(item) {
  for (const e of document.querySelectorAll("nav div.item")) e.classList.remove("sel");
  item.classList.add("sel");
}

function showPass(i, item) {
  const p = D.passes[i];
  current = {kind: "pass", index: i};
  select(item);
  const view = document.getElementById("view");
  const panes = $("div", {id: "panes"});
  if (p.before !== undefined) panes.append(graphPane("before " + p.name, p.before, []));
  panes.append(graphPane(p.before !== undefined ? "after " + p.name : "input", p.after, p.changed));
  const head = $("h3", {}, p.name + (p.before !== undefined ? ": " + ms(p.seconds) + ", " +
    (p.changed || []).length + " new nodes" : ""));
  const rules = $("table", {}, $("tr", {}, $("th", {}, "rule"), $("th", {}, "matcher"), $("th", {}, "hits")));
  for (const r of p.rules || []) rules.append($("tr", {}, $("td", {}, r.rule), $("td", {}, r.matcher),
                                                 $("td", {}, String(r.hits))));
  const text = $("details", {}, $("summary", {}, "text after this pass"), $("pre", {}, D.graphs[p.after].text));
  view.replaceChildren(head, panes, (p.rules || []).length ? rules : "", text);
  view.dataset.pass = p.name;
  highlightSearch();
}

function showKernel(i, item) {
  const k = D.kernels[i];
  current = {kind: "kernel", index: i};
  select(item);
  const view = document.getElementById("view");
  const facts = $("table", {});
  const row = (a, b) => facts.append($("tr", {}, $("th", {}, a), $("td", {}, b)));
  row("call", String(k.call));
  if (k.actions !== undefined) row("optimization actions", k.actions || "none");
  if (k.flops !== undefined) row("estimated work", (k.flops / 1e6).toFixed(3) + " MFLOP, " +
                                 (k.bytes / 1e6).toFixed(3) + " MB");
  if (k.seconds !== undefined) row("measured", ms(k.seconds) + ": " + (k.flops / k.seconds / 1e9).toFixed(2) +
                                   " GFLOPS, " + (k.bytes / k.seconds / 1e9).toFixed(2) + " GB/s");
  if (k.seconds !== undefined && D.machine) {
    const f = k.flops / k.seconds / 1e9, b = k.bytes / k.seconds / 1e9;
    row("of one core's peak", (100 * f / D.machine.gflops).toFixed(1) + "% of " + D.machine.gflops.toFixed(1) +
        " GFLOPS, " + (100 * b / D.machine.gbps).toFixed(1) + "% of " + D.machine.gbps.toFixed(1) +
        " GB/s (measured on " + D.machine.cpu + "; above 100%: from caches)");
  }
  const stageBox = $("div", {});
  const tabs = $("div", {});
  k.stages.forEach((s, j) => {
    const b = $("button", {class: "tab"}, s.pass);
    b.onclick = () => {
      for (const t of tabs.children) t.classList.remove("sel");
      b.classList.add("sel");
      const g = D.graphs[s.graph];
      stageBox.replaceChildren(graphPane("after " + s.pass, s.graph, []),
                               g.svg ? $("details", {}, $("summary", {}, "text"), $("pre", {}, g.text)) : "");
      highlightSearch();
    };
    tabs.append(b);
  });
  const src = $("div", {});
  for (const lang in k.source || {})
    src.append($("details", {}, $("summary", {}, lang), $("pre", {}, k.source[lang])));
  view.replaceChildren($("h3", {}, "kernel " + k.name), facts, $("div", {}, "IR at each stage that changed it:"),
                       tabs, stageBox, $("h4", {}, "generated source"), src);
  view.dataset.kernel = k.name;
  const drawn = [...tabs.children].filter((t, j) => D.graphs[k.stages[j].graph].svg);
  const first = drawn.length ? drawn[drawn.length - 1] : tabs.lastChild; // the last stage that is drawn
  if (first) first.click();
}

function highlightSearch() {
  const q = document.getElementById("search").value.toLowerCase();
  for (const n of document.querySelectorAll("#view g.node")) {
    const label = n.textContent.toLowerCase();
    n.classList.toggle("match", q.length > 0 && label.includes(q));
  }
  for (const e of document.querySelectorAll("nav div.item"))
    e.classList.toggle("hidden", q.length > 0 && !e.dataset.name.toLowerCase().includes(q) &&
                                 !(e.dataset.nodes || "").includes(q));
}

function build() {
  document.getElementById("title").textContent = D.source + (D.target ? " (" + D.target + ")" : "");
  const nav = document.getElementById("nav");
  nav.append($("h3", {}, "Passes (" + (D.passes.length - 1) + ")"));
  const items = [];
  D.passes.forEach((p, i) => {
    const hits = (p.rules || []).reduce((a, r) => a + r.hits, 0);
    const it = $("div", {class: "item", "data-name": p.name},
                 $("span", {}, p.name), $("span", {class: "num"}, i ? ms(p.seconds) + (hits ? ", " + hits + " hits" : "") : ""));
    it.dataset.nodes = D.graphs[p.after].nodes.map(n => n.label.toLowerCase()).join(" ");
    it.onclick = () => showPass(i, it);
    nav.append(it);
    items.push(["pass", p.name, it, i]);
  });
  nav.append($("h3", {}, "Kernels (" + D.kernels.length + ")"));
  D.kernels.forEach((k, i) => {
    const it = $("div", {class: "item", "data-name": k.name}, $("span", {}, k.name),
                 $("span", {class: "num"}, k.seconds !== undefined ? ms(k.seconds) : ""));
    it.onclick = () => showKernel(i, it);
    nav.append(it);
    items.push(["kernel", k.name, it, i]);
  });
  document.getElementById("search").addEventListener("input", highlightSearch);
  const want = new URLSearchParams(location.hash.slice(1));
  let chosen = items[items.length > 1 ? 1 : 0];
  for (const [kind, name, it, i] of items)
    if (want.get(kind) === name) { chosen = [kind, name, it, i]; break; }
  if (chosen) (chosen[0] === "pass" ? showPass : showKernel)(chosen[3], chosen[2]);
  document.body.dataset.status = "ready";
}
build();
</script></body></html>
)PAGE";

} // namespace tgc::viz
