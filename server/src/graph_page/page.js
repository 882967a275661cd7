// The graph page's behaviour: pan and zoom of the overview, the focus view
// (an agent between what leads to it and where it goes, drawn at full
// size), the details of a clicked node or rule, and in VS Code a jump to
// where it is written. Reads the data the server embedded; fetches nothing.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var canvas = document.getElementById("canvas");
  var overview = document.getElementById("overview");
  var viewport = document.getElementById("viewport");
  var focusView = document.getElementById("focus-view");
  var details = document.getElementById("details");
  var select = document.getElementById("focus");
  var vscode = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : null;
  // Zoom at which the 12-px edge labels are at least 11 px tall.
  var READABLE = 0.92;
  var width = overview.viewBox.baseVal.width;
  var height = overview.viewBox.baseVal.height;
  overview.removeAttribute("viewBox");
  var view = { scale: 1, x: 0, y: 0 };
  var active = overview;

  function apply() {
    var target = active === overview ? viewport : focusView.firstChild;
    if (target) {
      target.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.scale + ")");
    }
  }

  function size() {
    [overview, focusView].forEach(function (svg) {
      svg.setAttribute("width", canvas.clientWidth);
      svg.setAttribute("height", canvas.clientHeight);
    });
  }

  function contentSize() {
    if (active === overview) return { w: width, h: height };
    return { w: Number(focusView.dataset.w), h: Number(focusView.dataset.h) };
  }

  // The whole drawing in the panel; never larger than 1.25x.
  function fit() {
    var c = contentSize();
    view.scale = Math.min(canvas.clientWidth / c.w, canvas.clientHeight / c.h, 1.25);
    view.x = (canvas.clientWidth - c.w * view.scale) / 2;
    view.y = Math.max(0, (canvas.clientHeight - c.h * view.scale) / 2);
    apply();
  }

  // The first view: the whole drawing if its labels stay readable, else
  // readable and centred on the entry (pan or Fit for the rest).
  function initial() {
    var c = contentSize();
    var whole = Math.min(canvas.clientWidth / c.w, canvas.clientHeight / c.h, 1.25);
    if (whole >= READABLE) return fit();
    view.scale = READABLE;
    var entry = overview.querySelector(".node.entry rect") || overview.querySelector(".node rect");
    var cx = entry ? Number(entry.getAttribute("x")) + Number(entry.getAttribute("width")) / 2 : c.w / 2;
    view.x = canvas.clientWidth / 2 - cx * view.scale;
    view.y = 10;
    apply();
  }

  function zoom(factor, px, py) {
    var next = Math.max(0.1, Math.min(4, view.scale * factor));
    if (px === undefined) {
      px = canvas.clientWidth / 2;
      py = canvas.clientHeight / 2;
    }
    view.x = px - (px - view.x) * (next / view.scale);
    view.y = py - (py - view.y) * (next / view.scale);
    view.scale = next;
    apply();
  }

  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    var box = canvas.getBoundingClientRect();
    zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - box.left, event.clientY - box.top);
  }, { passive: false });

  // Drag to pan; a press that does not move is a click.
  var drag = null;
  canvas.addEventListener("pointerdown", function (event) {
    drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false };
  });
  window.addEventListener("pointermove", function (event) {
    if (!drag) return;
    var dx = event.clientX - drag.x;
    var dy = event.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    drag.moved = true;
    canvas.classList.add("panning");
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    apply();
  });
  window.addEventListener("pointerup", function () {
    canvas.classList.remove("panning");
    setTimeout(function () { drag = null; }, 0);
  });

  function text(tag, content, cls) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    el.textContent = content;
    return el;
  }

  function where(at) {
    if (!at) return null;
    var label = at.path + ":" + at.line + ":" + at.column;
    var el = document.createElement(vscode ? "a" : "span");
    el.className = "where";
    el.textContent = label;
    if (vscode) {
      el.title = "Open " + label;
      el.addEventListener("click", function () { open(at); });
    }
    return el;
  }

  function open(at) {
    if (vscode && at) vscode.postMessage({ type: "open", path: at.path, line: at.line, column: at.column });
  }

  function showFindings(findings) {
    findings.forEach(function (f) {
      var box = text("div", f.code + " " + f.severity + ": " + f.message, "finding " + f.severity);
      details.appendChild(box);
    });
  }

  function showNode(i) {
    var node = data.nodes[i];
    details.textContent = "";
    details.appendChild(text("h2", node.label));
    var kinds = {
      agent: "agent", unknown: "names no agent", user: "the user (their reply routes on)",
      "ask-user": "the run pauses for the user", complete: "the run completes", failed: "the run fails (workflow_failed)"
    };
    var about = kinds[node.kind] || node.kind;
    if (node.entry) about += " · where a run starts";
    if (node.task_batch) about += " · runs as a task-batch agent";
    if (node.unreachable) about += " · never reached from the entry";
    details.appendChild(text("p", about));
    var at = where(node.at);
    if (at) details.appendChild(at);
    var ins = data.edges.filter(function (e) { return e.to === i; }).length;
    var outs = data.edges.filter(function (e) { return e.from === i; }).length;
    details.appendChild(text("p", ins + " rule" + (ins === 1 ? "" : "s") + " in, " + outs + " out"));
    showFindings(node.findings);
    if (node.at) open(node.at);
  }

  function showRule(k) {
    var edge = data.edges[k];
    details.textContent = "";
    var what = edge.rule !== null ? "rule " + edge.rule : "task batch " + edge.batch;
    details.appendChild(text("h2", what + ": " + data.nodes[edge.from].label + " → " + data.nodes[edge.to].label));
    if (edge.batch) details.appendChild(text("p", "The trigger's turn hands the batch's tasks to this execution agent; no rule is involved."));
    details.appendChild(text("p", edge.label + (edge.dead ? " (can never fire)" : "")));
    var at = where(edge.at);
    if (at) details.appendChild(at);
    if (edge.hits !== null && edge.hits !== undefined) {
      var n = data.coverage_scenarios;
      details.appendChild(text("p", (edge.hits === 0 ? "never fired" : "fired " + edge.hits + "×") +
        " in the last mzk test (" + n + " scenario" + (n === 1 ? "" : "s") + ")"));
    }
    if (data.run) {
      details.appendChild(text("p", edge.hops.length
        ? "run " + data.run.id + " took it at hop " + edge.hops.join(", ")
        : "not taken by run " + data.run.id));
    }
    showFindings(edge.findings);
    open(edge.at);
  }

  function mark(selector) {
    document.querySelectorAll(".selected").forEach(function (el) { el.classList.remove("selected"); });
    if (selector) document.querySelectorAll(selector).forEach(function (el) { el.classList.add("selected"); });
  }

  function svg(tag, attributes, parent) {
    var el = document.createElementNS(SVG, tag);
    Object.keys(attributes).forEach(function (key) { el.setAttribute(key, attributes[key]); });
    if (parent) parent.appendChild(el);
    return el;
  }

  function labelWidth(label) { return Math.min(label.length, 60) * 7.2 + 14; }

  function drawNode(parent, i, x, y) {
    var node = data.nodes[i];
    var w = Math.max(110, node.label.length * 8.4 + 32);
    var classes = ["node", node.kind];
    if (node.entry) classes.push("entry");
    if (node.unreachable) classes.push("unreachable");
    if (node.findings.some(function (f) { return f.severity === "error"; })) classes.push("has-error");
    else if (node.findings.length) classes.push("has-warning");
    var g = svg("g", { "class": classes.join(" "), "data-node": i, tabindex: 0 }, parent);
    var round = node.kind === "agent" || node.kind === "unknown" ? 6 : 19;
    svg("rect", { x: x, y: y - 19, width: w, height: 38, rx: round }, g);
    var t = svg("text", { x: x + w / 2, y: y }, g);
    t.textContent = node.label;
    return w;
  }

  function drawEdge(parent, k, path, lx, ly, marker) {
    var edge = data.edges[k];
    var classes = ["edge"];
    if (edge.hits === 0) classes.push("never-fired");
    if (edge.hops && edge.hops.length) classes.push("on-run");
    if (edge.batch) classes.push("batch");
    if (edge.fallback) classes.push("fallback");
    if (edge.dead) classes.push("dead");
    if (edge.findings.some(function (f) { return f.severity === "error"; })) classes.push("has-error");
    else if (edge.findings.length) classes.push("has-warning");
    var g = svg("g", { "class": classes.join(" "), "data-edge": k, tabindex: 0 }, parent);
    var title = svg("title", {}, g);
    title.textContent = (edge.rule !== null ? "rule " + edge.rule : "task batch " + edge.batch) + ": " + edge.label;
    svg("path", { "class": "hit", d: path }, g);
    svg("path", { "class": "line", d: path, "marker-end": "url(#" + marker + ")" }, g);
    var label = edge.label.length > 60 ? edge.label.slice(0, 59) + "…" : edge.label;
    var w = labelWidth(label);
    var lg = svg("g", { "class": "label" }, g);
    svg("rect", { x: lx - w / 2, y: ly - 9, width: w, height: 18, rx: 4 }, lg);
    var t = svg("text", { x: lx, y: ly }, lg);
    t.textContent = label;
  }

  // The focus view: rules into the agent on the left, out of it on the
  // right, each label on the straight stretch by its other end.
  function focus(i) {
    var incoming = [];
    var outgoing = [];
    data.edges.forEach(function (e, k) {
      if (e.to === i) incoming.push(k);
      if (e.from === i) outgoing.push(k);
    });
    while (focusView.firstChild) focusView.removeChild(focusView.firstChild);
    // Its own arrow head: the overview's lies in a hidden drawing now.
    var defs = overview.querySelector("defs").cloneNode(true);
    defs.querySelector("marker").id = "arrow-focus";
    focusView.appendChild(defs);
    var root = svg("g", {}, null);
    focusView.insertBefore(root, defs);
    // A rule from the agent back to itself is drawn once, on the right.
    incoming = incoming.filter(function (k) { return data.edges[k].from !== i; });
    var row = 58;
    var rows = Math.max(incoming.length, outgoing.length, 1);
    var maxIn = incoming.reduce(function (m, k) { return Math.max(m, labelWidth(data.edges[k].label)); }, 80);
    var maxOut = outgoing.reduce(function (m, k) { return Math.max(m, labelWidth(data.edges[k].label)); }, 80);
    var nodeW = function (n) { return Math.max(110, data.nodes[n].label.length * 8.4 + 32); };
    var leftW = incoming.reduce(function (m, k) { return Math.max(m, nodeW(data.edges[k].from)); }, 0);
    var rightW = outgoing.reduce(function (m, k) { return Math.max(m, nodeW(data.edges[k].to)); }, 0);
    var top = 30;
    var centreY = top + (rows * row) / 2;
    var leftX = 20;
    var centreX = leftX + leftW + maxIn + 70;
    var centreW = nodeW(i);
    var rightX = centreX + centreW + maxOut + 70;
    var edgeLayer = svg("g", {}, root);
    var nodeLayer = svg("g", {}, root);
    drawNode(nodeLayer, i, centreX, centreY);
    incoming.forEach(function (k, r) {
      var from = data.edges[k].from;
      var y = top + row * (r + 0.5) + (rows - incoming.length) * row / 2;
      var x0 = leftX + leftW - nodeW(from);
      var sx = x0 + drawNode(nodeLayer, from, x0, y);
      var straight = sx + maxIn + 20;
      var path = "M" + sx + "," + y + " H" + straight + " C" + (straight + 40) + "," + y + " " + (centreX - 40) + "," + centreY + " " + centreX + "," + centreY;
      drawEdge(edgeLayer, k, path, sx + 10 + labelWidth(data.edges[k].label) / 2, y, "arrow-focus");
    });
    outgoing.forEach(function (k, r) {
      var to = data.edges[k].to;
      var y = top + row * (r + 0.5) + (rows - outgoing.length) * row / 2;
      drawNode(nodeLayer, to, rightX, y);
      var sx = centreX + centreW;
      var bend = rightX - maxOut - 20;
      var path = "M" + sx + "," + centreY + " C" + (sx + 40) + "," + centreY + " " + (bend - 40) + "," + y + " " + bend + "," + y + " H" + rightX;
      drawEdge(edgeLayer, k, path, rightX - 10 - labelWidth(data.edges[k].label) / 2, y, "arrow-focus");
    });
    focusView.dataset.w = rightX + rightW + 20;
    focusView.dataset.h = top * 2 + rows * row;
    overview.setAttribute("hidden", "");
    focusView.removeAttribute("hidden");
    active = focusView;
    var c = contentSize();
    view.scale = Math.max(READABLE, Math.min(1.25, canvas.clientWidth / c.w, canvas.clientHeight / c.h));
    // Centred; when it is wider than the panel, centred on the agent.
    view.x = c.w * view.scale <= canvas.clientWidth
      ? (canvas.clientWidth - c.w * view.scale) / 2
      : canvas.clientWidth / 2 - (centreX + centreW / 2) * view.scale;
    view.y = Math.max(0, (canvas.clientHeight - c.h * view.scale) / 2);
    apply();
    select.value = data.nodes[i].kind === "agent" || data.nodes[i].kind === "unknown" ? data.nodes[i].label : "";
    mark('#focus-view [data-node="' + i + '"]');
    showNode(i);
  }

  function whole() {
    focusView.setAttribute("hidden", "");
    overview.removeAttribute("hidden");
    active = overview;
    select.value = "";
    initial();
  }

  function activate(target) {
    var edge = target.closest("[data-edge]");
    var node = target.closest("[data-node]");
    if (edge) {
      var k = Number(edge.getAttribute("data-edge"));
      mark('[data-edge="' + k + '"]');
      showRule(k);
    } else if (node) {
      var i = Number(node.getAttribute("data-node"));
      var kind = data.nodes[i].kind;
      // A stop or an exit has no rules of its own: focus on its agent.
      if (kind === "ask-user" && data.nodes[i].owner !== null) focus(data.nodes[i].owner);
      else if (kind === "complete" || kind === "failed") { mark('[data-node="' + i + '"]'); showNode(i); }
      else focus(i);
    }
  }

  canvas.addEventListener("click", function (event) {
    if (drag && drag.moved) return;
    activate(event.target);
  });
  canvas.addEventListener("keydown", function (event) {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      activate(event.target);
    }
  });
  select.addEventListener("change", function () {
    if (!select.value) return whole();
    var i = data.nodes.findIndex(function (n) {
      return (n.kind === "agent" || n.kind === "unknown") && n.label === select.value;
    });
    if (i >= 0) focus(i);
  });
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(1.25); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(1 / 1.25); });
  document.getElementById("fit").addEventListener("click", fit);
  window.addEventListener("resize", function () { size(); apply(); });
  size();
  initial();
})();
