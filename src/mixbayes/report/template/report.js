/* mixbayes report: hand-written, no library. The data is the JSON in #report-data (see
   mixbayes/report/_extract.py for its fields); everything is drawn as inline SVG. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var NS = document.getElementById("map").namespaceURI;  // SVG's, from an inline <svg>
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var isTree = D.kind === "tree";
  var items = isTree ? D.nodes : D.components;   // what can be selected
  var byId = {};
  items.forEach(function (c, i) { byId[c.id] = i; });
  var unit = D.unit;
  var selected = 0;

  // ------------------------------------------------------------------ small helpers
  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, parent, text) {
    var node = document.createElementNS(NS, tag);
    for (var key in attrs) { if (attrs[key] !== null) node.setAttribute(key, attrs[key]); }
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function html(tag, attrs, parent, text) {
    var node = document.createElement(tag);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function show(node) { node.removeAttribute("hidden"); }  // SVG elements have no .hidden
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function title(node, text) { el("title", {}, node, text); }
  function fmt(v) {
    if (v === null || !isFinite(v)) return "n/a";
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return +v.toPrecision(4) + "";
  }
  function svgSize(svg, width, height) {
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("height", height);
    svg.style.maxWidth = width + "px";
  }
  function niceTicks(lo, hi, count, minStep) {
    if (!(hi > lo)) { var pad = Math.abs(lo) * 0.05 || 1; lo -= pad; hi += pad; }
    var raw = Math.max((hi - lo) / count, minStep || 0), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; })
      .filter(function (s) { return s >= raw; })[0];
    var ticks = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
      ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    return { lo: Math.min(lo, ticks[0]), hi: Math.max(hi, ticks[ticks.length - 1]), ticks: ticks,
             step: step };
  }
  // tick labels with as many digits as the step needs, so that no two ticks read the same
  // (four significant digits made -929120 and -929140 both "-929100")
  function tickLabels(b) {
    var big = 0;
    b.ticks.forEach(function (t) { big = Math.max(big, Math.abs(t)); });
    var stepExp = Math.floor(Math.log10(b.step) + 1e-9);
    if (big >= 1e6 || (big > 0 && big < 1e-3)) {
      var digits = Math.min(15, Math.max(0, Math.floor(Math.log10(big)) - stepExp));
      return b.ticks.map(function (t) { return t === 0 ? "0" : t.toExponential(digits); });
    }
    return b.ticks.map(function (t) { return t.toFixed(Math.max(0, -stepExp)); });
  }
  // the 2-sigma ellipse [a, b, angle in degrees] of data coordinates drawn at scales sx, sy
  // (the y axis down on screen): the covariance R diag(a^2, b^2) R' mapped by diag(sx, -sy),
  // its axes in pixels and the SVG rotation; with sx = sy this is the angle mirrored
  function pixelEllipse(e, sx, sy) {
    var t = e[2] * Math.PI / 180, c = Math.cos(t), s = Math.sin(t);
    var a2 = e[0] * e[0], b2 = e[1] * e[1];
    var xx = (a2 * c * c + b2 * s * s) * sx * sx, yy = (a2 * s * s + b2 * c * c) * sy * sy;
    var xy = -(a2 - b2) * c * s * sx * sy;
    var mid = (xx + yy) / 2, half = Math.sqrt((xx - yy) * (xx - yy) / 4 + xy * xy);
    var angle = 0.5 * Math.atan2(2 * xy, xx - yy) * 180 / Math.PI;
    return [Math.sqrt(Math.max(mid + half, 0)), Math.sqrt(Math.max(mid - half, 0)), angle,
            Math.sqrt(xx), Math.sqrt(yy)];  // and the half-width and half-height
  }
  // a nested SVG viewport over the rectangle, in the same coordinates: what is drawn in it
  // is clipped to the rectangle (no clipPath, whose reference would be a URL)
  function clipTo(svg, x, y, width, height) {
    return el("svg", { x: x, y: y, width: width, height: height, overflow: "hidden",
                       viewBox: x + " " + y + " " + width + " " + height, class: "plot-area" }, svg);
  }
  function extent(values) {
    var lo = Infinity, hi = -Infinity;
    values.forEach(function (v) { if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    return lo <= hi ? [lo, hi] : [0, 1];
  }
  function nameOf(item) { return unit + " " + item.id; }

  // ------------------------------------------------------------------ the map
  function bubbleRadii(width) {
    var maxShare = Math.max.apply(null, items.map(function (c) { return c.share; }).concat([1e-12]));
    var biggest = Math.min(width * 0.11, 48, 200 / Math.sqrt(items.length));  // many: smaller
    return items.map(function (c) { return Math.max(4, biggest * Math.sqrt(c.share / maxShare)); });
  }

  function drawMap() {
    var svg = $("map"); clear(svg);
    if (isTree) return drawTree(svg);
    var W = 520, H = 420, pad = 56;
    svgSize(svg, W, H);
    var radii = bubbleRadii(W);
    var xs = extent(items.map(function (c) { return c.x; }));
    var ys = extent(items.map(function (c) { return c.y; }));
    var span = Math.max(xs[1] - xs[0], ys[1] - ys[0]) || 1;   // one scale for both axes
    var cx = (xs[0] + xs[1]) / 2, cy = (ys[0] + ys[1]) / 2;
    var scale = Math.min(W, H - 20) / 2 - pad;
    el("line", { x1: W / 2, y1: 12, x2: W / 2, y2: H - 12, class: "axis", stroke: "#eee" }, svg);
    el("line", { x1: 12, y1: H / 2, x2: W - 12, y2: H / 2, class: "axis", stroke: "#eee" }, svg);
    el("text", { x: W - 14, y: H / 2 - 4, "text-anchor": "end", class: "axis" }, svg, "MDS 1");
    el("text", { x: W / 2 + 4, y: 20, class: "axis" }, svg, "MDS 2");
    var order = items.map(function (c, i) { return i; })
      .sort(function (a, b) { return radii[b] - radii[a]; });  // small ones on top
    var at = items.map(function (c) {
      return [W / 2 + (c.x - cx) / span * 2 * scale, H / 2 - (c.y - cy) / span * 2 * scale];
    });
    // numbers only where they do not print over one another (the selected one, then the
    // largest first); every bubble keeps its tooltip and its click
    var boxes = [], labelled = {};
    [selected].concat(order).forEach(function (i) {
      if (i === undefined || i === null || labelled[i]) return;
      var w = 7 * String(items[i].id).length + 2, h = 12;
      var box = [at[i][0] - w / 2, at[i][1] - h / 2, at[i][0] + w / 2, at[i][1] + h / 2];
      var free = boxes.every(function (b) {
        return box[2] <= b[0] || b[2] <= box[0] || box[3] <= b[1] || b[3] <= box[1];
      });
      if (free) { boxes.push(box); labelled[i] = true; }
    });
    order.forEach(function (i) {
      var c = items[i], x = at[i][0], y = at[i][1];
      var g = el("g", {}, svg);
      var circle = el("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: radii[i].toFixed(1),
        class: "bubble" + (i === selected ? " selected" : ""), "data-id": c.id }, g);
      title(circle, nameOf(c) + ": " + c.size);
      circle.addEventListener("click", function () { select(i); });
      if (labelled[i]) {
        el("text", { x: x.toFixed(1), y: y.toFixed(1), class: "bubble-label" }, g, String(c.id));
      }
    });
  }

  function drawTree(svg) {
    var W = 520, maxDepth = 0, maxX = 0;
    items.forEach(function (n) { maxDepth = Math.max(maxDepth, n.depth); maxX = Math.max(maxX, n.x); });
    var H = 110 + maxDepth * 110, pad = 40;
    svgSize(svg, W, H);
    var px = function (n) { return pad + (maxX ? n.x / maxX : 0.5) * (W - 2 * pad); };
    var py = function (n) { return 40 + n.depth * 110; };
    var radii = bubbleRadii(W);
    // names only where a level has room for them side by side (each node keeps its tooltip)
    var perDepth = {};
    items.forEach(function (n) { perDepth[n.depth] = (perDepth[n.depth] || 0) + 1; });
    var named = function (n) { return perDepth[n.depth] * 26 <= W - 2 * pad + 26; };
    var onPath = {};
    for (var z = items[selected].id; z >= 0; z = items[byId[z]].parent) onPath[z] = true;
    items.forEach(function (n) {
      if (n.parent < 0) return;
      var p = items[byId[n.parent]];
      el("path", { d: "M" + px(p) + "," + py(p) + "L" + px(n) + "," + py(n),
                   class: "edge" + (onPath[n.id] ? " on-path" : "") }, svg);
    });
    items.forEach(function (n, i) {
      var circle = el("circle", { cx: px(n).toFixed(1), cy: py(n).toFixed(1), r: radii[i].toFixed(1),
        class: "bubble" + (i === selected ? " selected" : ""), "data-id": n.id }, svg);
      title(circle, nameOf(n) + ": " + n.size);
      circle.addEventListener("click", function () { select(i); });
      if (named(n) || i === selected)
        el("text", { x: px(n).toFixed(1), y: (py(n) + radii[i] + 10).toFixed(1),
                     "text-anchor": "middle" }, svg, "n" + n.id);
    });
  }

  // the top of the full dendrogram: U-shaped links, coloured by top-level branch
  function drawDendrogram() {
    var G = D.dendrogram, svg = $("dendrogram");
    var W = 1000, H = 300, pad = 36, bottom = 40;
    svgSize(svg, W, H);
    var nx = Math.max(1, G.clusters.length - 1);
    var top = 0;
    G.links.forEach(function (l) { top = Math.max(top, l[4]); });
    top = Math.ceil(top) || 1;
    var X = function (v) { return pad + (G.clusters.length > 1 ? v / nx : 0.5) * (W - 2 * pad); };
    var Y = function (v) { return H - bottom - (v / top) * (H - bottom - 14); };
    var branches = [];
    G.clusters.forEach(function (c) { if (c.branch >= 0 && branches.indexOf(c.branch) < 0) branches.push(c.branch); });
    var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"];
    var stroke = function (b) { return b < 0 ? "#777" : palette[branches.indexOf(b) % 10]; };
    for (var s = 0; s <= top; s++) {
      el("line", { x1: pad, x2: W - pad, y1: Y(s).toFixed(1), y2: Y(s).toFixed(1), class: "stage" }, svg);
      el("text", { x: pad - 6, y: Y(s).toFixed(1), "text-anchor": "end", "dominant-baseline": "central",
                   class: "axis-label" }, svg, String(s));
    }
    G.links.forEach(function (l) {
      var d = "M" + X(l[0]).toFixed(1) + "," + Y(l[2]).toFixed(1) + "V" + Y(l[4]).toFixed(1) +
              "H" + X(l[1]).toFixed(1) + "V" + Y(l[3]).toFixed(1);
      var path = el("path", { d: d, class: "link", stroke: stroke(l[6]) }, svg);
      title(path, l[5] + " points, height " + fmt(l[4]));
    });
    var labelled = G.clusters.length <= 60;
    G.clusters.forEach(function (c) {
      if (labelled)
        el("text", { x: X(c.x).toFixed(1), y: (H - bottom + 12).toFixed(1), "text-anchor": "middle",
                     class: "axis-label" }, svg, c.size > 1 ? "(" + c.size + ")" : "1");
    });
  }

  // posterior similarity between and within the point estimate's clusters, and the least
  // certain items
  function drawPartition() {
    var P = D.partition, svg = $("similarity");
    var W = 360, pad = 4, total = 0, edges = [0];
    P.sizes.forEach(function (s) { total += s; edges.push(total); });
    svgSize(svg, W + 2 * pad, W + 2 * pad);
    var at = function (v) { return pad + W * v / total; };
    P.blocks.forEach(function (row, a) {
      row.forEach(function (v, b) {
        var shade = Math.round(255 * (1 - v));
        var cell = el("rect", { x: at(edges[b]).toFixed(1), y: at(edges[a]).toFixed(1),
          width: Math.max(0.5, at(edges[b + 1]) - at(edges[b])).toFixed(1),
          height: Math.max(0.5, at(edges[a + 1]) - at(edges[a])).toFixed(1),
          fill: "rgb(" + shade + "," + shade + ",255)", class: "block" }, svg);
        title(cell, "estimate's clusters " + a + " and " + b + ": " + fmt(v));
      });
    });
    var table = html("table", {}, $("least-certain"));
    var head = html("tr", {}, table);
    ["item", "estimate's cluster", "certainty"].forEach(function (h) { html("th", {}, head, h); });
    P.least_certain.forEach(function (r) {
      var tr = html("tr", {}, table);
      html("td", {}, tr, r.id); html("td", {}, tr, String(r.cluster));
      html("td", {}, tr, fmt(r.certainty));
    });
  }

  // ------------------------------------------------------------------ the term panel
  function currentLambda() { return parseFloat($("lambda").value); }

  function rankedTerms(component, lambda) {
    var rows = component.terms.map(function (t) {
      var p = t[1], f = D.frequency[t[0]];
      var rel = lambda * Math.log(p) + (1 - lambda) * Math.log(p / f);
      return { term: D.vocabulary[t[0]], p: p, f: f, relevance: rel };
    });
    rows.sort(function (a, b) { return b.relevance - a.relevance || (a.term < b.term ? -1 : 1); });
    return rows.slice(0, D.shown_terms);
  }

  function drawTerms() {
    var svg = $("terms"); clear(svg);
    var c = items[selected], lambda = currentLambda();
    $("lambda-value").textContent = lambda.toFixed(2);
    var rows = rankedTerms(c, lambda);
    var W = 520, rowH = 19, left = 120, top = 22, H = top + Math.max(rows.length, 1) * rowH + 8;
    svgSize(svg, W, H);
    if (!rows.length) {
      el("text", { x: 10, y: 30 }, svg, "no terms: this " + unit + " holds no tokens");
      return;
    }
    // the labels' column as wide as the longest term, within 120-220 px; a longer term is cut
    // with an ellipsis (whole in its tooltip): a fixed 120 px let congress109's
    // "congressional.black.caucu" run out of the panel
    var measure = el("text", { x: 0, y: 0, class: "term-label" }, svg, "");
    var widthOf = function (text) {
      measure.textContent = text;
      var w = 0;
      try { w = measure.getComputedTextLength(); } catch (e) { w = 0; }
      return w || text.length * 6.5;
    };
    var widest = Math.max.apply(null, rows.map(function (r) { return widthOf(r.term); }));
    left = Math.min(Math.max(left, Math.ceil(widest) + 12), 220);
    var shown = function (term) {
      if (widthOf(term) <= left - 10) return term;
      var cut = term;
      while (cut.length > 1 && widthOf(cut + "\u2026") > left - 10) cut = cut.slice(0, -1);
      return cut + "\u2026";
    };
    var labels = rows.map(function (r) { return shown(r.term); });
    svg.removeChild(measure);
    var most = Math.max.apply(null, rows.map(function (r) { return r.f; }));
    var barW = W - left - 70;
    el("text", { x: left, y: 12, class: "axis" }, svg,
       "top " + rows.length + " terms by relevance at \u03bb = " + lambda.toFixed(2));
    rows.forEach(function (r, i) {
      var y = top + i * rowH;
      var g = el("g", { class: "term", "data-term": r.term }, svg);
      el("text", { x: left - 6, y: y + rowH / 2, class: "term-label" }, g, labels[i]);
      el("rect", { x: left, y: y + 2, width: (r.f / most * barW).toFixed(1), height: rowH - 4,
                   class: "bar-overall" }, g);
      el("rect", { x: left, y: y + 2, width: (Math.min(r.p * c.share, r.f) / most * barW).toFixed(1),
                   height: rowH - 4, class: "bar-own" }, g);
      el("text", { x: left + r.f / most * barW + 4, y: y + rowH / 2,
                   "dominant-baseline": "central", class: "axis" }, g, "lift " + fmt(r.p / r.f));
      title(g, r.term + ": p(w|k) = " + fmt(r.p) + ", p(w) = " + fmt(r.f) + ", lift " +
            fmt(r.p / r.f) + ", relevance " + fmt(r.relevance));
    });
  }

  // ------------------------------------------------------------------ projection (Gaussian, tree)
  function drawProjection() {
    var svg = $("projection"); clear(svg);
    var W = 520, H = 400, pad = 42;
    svgSize(svg, W, H);
    var pts = D.points || [];
    var xs = [], ys = [];
    pts.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); });
    var centres = isTree ? D.means : items.map(function (c) { return c.centre; });
    var reach = isTree ? D.radius : 0;
    var own = isTree && D.ellipses;  // the tree's components with covariances of their own
    centres.forEach(function (m, k) {
      var e = isTree ? (own ? D.ellipses[k] : [reach, reach, 0]) : (items[k].ellipse || [0, 0, 0]);
      var box = pixelEllipse(e, 1, 1);  // half-width and half-height in data units
      xs.push(m[0] - box[3], m[0] + box[3]); ys.push(m[1] - box[4], m[1] + box[4]);
    });
    var bx = niceTicks(extent(xs)[0], extent(xs)[1], 5), by = niceTicks(extent(ys)[0], extent(ys)[1], 5);
    var sx = (W - 2 * pad) / (bx.hi - bx.lo), sy = (H - 2 * pad) / (by.hi - by.lo);
    var X = function (v) { return pad + (v - bx.lo) * sx; };
    var Y = function (v) { return H - pad - (v - by.lo) * sy; };
    axes(svg, bx, by, X, Y, W, H, pad, D.axes[0], D.axes[1]);
    var axesSvg = svg;
    svg = clipTo(axesSvg, pad, pad, W - 2 * pad, H - 2 * pad);  // nothing drawn past the axes
    var item = items[selected];
    var member = isTree
      ? function (p) { return item.parent < 0 || p.slice(2).indexOf(item.id) >= 0; }
      : function (p) { return p[2] === item.id; };
    var on = [];
    pts.forEach(function (p) {
      if (member(p)) { on.push(p); return; }
      el("circle", { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2, class: "point" }, svg);
    });
    on.forEach(function (p) {
      el("circle", { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2.4, class: "point on" }, svg);
    });
    if (isTree) {
      item.components.forEach(function (c) {
        if (c.weight < 0.01) return;
        var m = D.means[c.component];
        if (own) {
          ellipse(svg, m, D.ellipses[c.component], "ellipse selected");
          return;
        }
        el("ellipse", { cx: X(m[0]).toFixed(1), cy: Y(m[1]).toFixed(1), rx: (reach * sx).toFixed(1),
                        ry: (reach * sy).toFixed(1), class: "ellipse selected" }, svg);
      });
      D.means.forEach(function (m) { cross(svg, X(m[0]), Y(m[1]), false); });
    } else {
      items.forEach(function (c, i) {
        var m = c.centre, isSel = i === selected;
        if (c.ellipse) {
          ellipse(svg, m, c.ellipse, "ellipse" + (isSel ? " selected" : ""));
        }
        cross(svg, X(m[0]), Y(m[1]), isSel);
      });
    }
    function ellipse(parent, m, e, cls) {
      var p = pixelEllipse(e, sx, sy), cx = X(m[0]).toFixed(1), cy = Y(m[1]).toFixed(1);
      el("ellipse", { cx: cx, cy: cy, rx: Math.max(p[0], 0.5).toFixed(1),
                      ry: Math.max(p[1], 0.5).toFixed(1),
                      transform: "rotate(" + p[2].toFixed(2) + " " + cx + " " + cy + ")",
                      class: cls }, parent);
    }
    var note = $("projection-note");
    show(note);
    note.textContent = (D.axes[1] === "(random jitter)" ? "the feature (points jittered up and down)" : D.axes[0] === "principal component 1"
      ? "the first two principal components" : "the two features") + "; " +
      (pts.length ? D.points_note + " (red: the selected " + unit + "'s)" :
       "no points given: means and ellipses only (pass the points to draw them)") +
      (isTree ? (own ? "; ellipses: 2 sigma of the node's main components"
                : "; circles: 2-sigma spread of the node's main components") : "; ellipses: 2 sigma");
  }

  function cross(svg, x, y, isSel) {
    var s = isSel ? 7 : 5, cls = "mean-mark" + (isSel ? " selected" : "");
    el("line", { x1: x - s, y1: y, x2: x + s, y2: y, class: cls }, svg);
    el("line", { x1: x, y1: y - s, x2: x, y2: y + s, class: cls }, svg);
  }

  function axes(svg, bx, by, X, Y, W, H, pad, xlabel, ylabel, yFormat) {
    var g = el("g", { class: "axis" }, svg);
    var grid = el("g", { class: "grid" }, svg);
    el("line", { x1: pad, y1: H - pad, x2: W - pad, y2: H - pad }, g);
    el("line", { x1: pad, y1: pad, x2: pad, y2: H - pad }, g);
    var xText = tickLabels(bx), yText = tickLabels(by);
    bx.ticks.forEach(function (t, i) {
      el("line", { x1: X(t), y1: pad, x2: X(t), y2: H - pad }, grid);
      el("text", { x: X(t), y: H - pad + 14, "text-anchor": "middle" }, g, xText[i]);
    });
    by.ticks.forEach(function (t, i) {
      el("line", { x1: pad, y1: Y(t), x2: W - pad, y2: Y(t) }, grid);
      el("text", { x: pad - 4, y: Y(t) + 3, "text-anchor": "end" }, g, yFormat ? yFormat(t) : yText[i]);
    });
    svg.insertBefore(grid, svg.firstChild);
    el("text", { x: (W) / 2, y: H - 6, "text-anchor": "middle" }, g, xlabel);
    el("text", { x: 12, y: H / 2, "text-anchor": "middle",
                 transform: "rotate(-90 12 " + H / 2 + ")" }, g, ylabel);
  }

  function drawDetailTable() {
    var box = $("detail-table"); clear(box);
    var item = items[selected];
    if (D.kind === "gaussian") {
      var table = html("table", {}, box);
      var head = html("tr", {}, table);
      html("th", {}, head, "feature"); html("th", {}, head, "mean");
      D.features.slice(0, 12).forEach(function (name, j) {
        var row = html("tr", {}, table);
        html("td", {}, row, name); html("td", {}, row, fmt(item.mean[j]));
      });
      if (D.features.length > 12) html("p", { class: "caption" }, box, "(first 12 of " + D.features.length + " features)");
    } else if (isTree) {
      var t = html("table", {}, box);
      var h = html("tr", {}, t);
      ["component", "weight at this node"].concat(D.features.slice(0, 4).map(function (f) { return "mean " + f; }))
        .forEach(function (s) { html("th", {}, h, s); });
      item.components.forEach(function (c) {
        var row = html("tr", {}, t);
        html("td", {}, row, "component " + c.component);
        html("td", {}, row, fmt(c.weight));
        D.component_means[c.component].slice(0, 4).forEach(function (v) { html("td", {}, row, fmt(v)); });
      });
    }
  }

  // ------------------------------------------------------------------ sizes
  function drawSizes() {
    var svg = $("sizes"); clear(svg);
    var order = items.map(function (c, i) { return i; })
      .sort(function (a, b) { return items[b].share - items[a].share || a - b; });
    var shown = order.slice(0, 40);
    $("sizes-note").textContent = (isTree ? "share of the points through every node" :
      "share of every " + unit) + (order.length > shown.length ? "; the " + shown.length +
      " largest of " + order.length : "") + " (click to select)";
    var W = 520, rowH = 16, left = 90, H = shown.length * rowH + 24;
    svgSize(svg, W, H);
    var most = Math.max.apply(null, shown.map(function (i) { return items[i].share; }).concat([1e-12]));
    shown.forEach(function (i, r) {
      var c = items[i], y = 4 + r * rowH;
      var g = el("g", { "data-id": c.id }, svg);
      el("text", { x: left - 6, y: y + rowH / 2, class: "term-label" }, g, nameOf(c));
      var bar = el("rect", { x: left, y: y + 2, width: Math.max(c.share / most * (W - left - 60), 1).toFixed(1),
                             height: rowH - 4, class: "size-bar" + (i === selected ? " selected" : "") }, g);
      el("text", { x: left + c.share / most * (W - left - 60) + 4, y: y + rowH / 2,
                   "dominant-baseline": "central", class: "axis" }, g, (100 * c.share).toFixed(1) + "%");
      title(g, nameOf(c) + ": " + c.size);
      bar.addEventListener("click", function () { select(i); });
    });
  }

  // ------------------------------------------------------------------ line charts
  function lineChart(svg, chart) {
    clear(svg);
    var W = 520, H = 250, padT = 14, padB = 58;
    svgSize(svg, W, H);
    var sides = {};
    ["left", "right"].forEach(function (side) {
      var values = [];
      chart.series.forEach(function (s) { if ((s.axis || "left") === side) values = values.concat(s.y); });
      if (!values.length) return;
      var b = niceTicks(extent(values)[0], extent(values)[1], 5);
      sides[side] = { b: b, Y: function (v) { return H - padB - (v - b.lo) / (b.hi - b.lo) * (H - padT - padB); } };
    });
    // the margins hold the longest tick label (10 px digits, about 6 px wide) and, on the
    // left, the axis title: an ELBO that moves by 0.01 around -1.0755e6 needs ten digits,
    // which a fixed 64 px laid over the title
    var labelWidth = function (side) {
      if (!sides[side]) return 0;
      return 6 * Math.max.apply(null, tickLabels(sides[side].b).map(function (t) { return t.length; }));
    };
    var padL = Math.max(64, Math.ceil(labelWidth("left") + 8 + (chart.ylabel ? 20 : 0)));
    var padR = sides.right ? Math.max(64, Math.ceil(labelWidth("right") + 8)) : 16;
    var allX = [];
    chart.series.forEach(function (s) { (s.x || chart.x).forEach(function (v) { allX.push(v); }); });
    var bx = niceTicks(extent(allX)[0], extent(allX)[1], 6, 1);  // x: iterations or K
    var X = function (v) { return padL + (v - bx.lo) / (bx.hi - bx.lo) * (W - padL - padR); };
    var g = el("g", { class: "axis" }, svg), grid = el("g", { class: "grid" }, svg);
    el("line", { x1: padL, y1: H - padB, x2: W - padR, y2: H - padB }, g);
    var xText = tickLabels(bx);
    bx.ticks.forEach(function (t, i) {
      el("text", { x: X(t), y: H - padB + 14, "text-anchor": "middle" }, g, xText[i]);
    });
    el("text", { x: (padL + W - padR) / 2, y: H - padB + 30, "text-anchor": "middle" }, g, chart.xlabel);
    Object.keys(sides).forEach(function (side) {
      var s = sides[side], x0 = side === "left" ? padL : W - padR;
      el("line", { x1: x0, y1: padT, x2: x0, y2: H - padB }, g);
      var yText = tickLabels(s.b);
      s.b.ticks.forEach(function (t, i) {
        if (side === "left") el("line", { x1: padL, y1: s.Y(t), x2: W - padR, y2: s.Y(t) }, grid);
        el("text", { x: side === "left" ? x0 - 4 : x0 + 4, y: s.Y(t) + 3,
                     "text-anchor": side === "left" ? "end" : "start" }, g, yText[i]);
      });
    });
    svg.insertBefore(grid, svg.firstChild);
    if (chart.ylabel) {
      el("text", { x: 12, y: (padT + H - padB) / 2, "text-anchor": "middle",
                   transform: "rotate(-90 12 " + (padT + H - padB) / 2 + ")" }, g, chart.ylabel);
    }
    if (chart.chosen !== undefined) {
      el("line", { x1: X(chart.chosen), y1: padT, x2: X(chart.chosen), y2: H - padB,
                   stroke: "#888", "stroke-dasharray": "4 3" }, svg);
    }
    var segments = [];  // every drawn stretch of every curve, in pixels: where a label must not go
    var legend = el("g", { class: "legend" }, svg);
    var lx = padL;
    chart.series.forEach(function (s, n) {
      var colour = PALETTE[n % PALETTE.length], Y = sides[s.axis || "left"].Y, xs = s.x || chart.x;
      var d = "", pen = "M", last = null;
      s.y.forEach(function (v, i) {
        if (v === null) { pen = "M"; last = null; return; }
        d += pen + X(xs[i]).toFixed(1) + "," + Y(v).toFixed(1); pen = "L";
        var here = [X(xs[i]), Y(v)];
        segments.push(last ? [last[0], last[1], here[0], here[1]] : [here[0], here[1], here[0], here[1]]);
        last = here;
      });
      el("path", { d: d, fill: "none", stroke: colour, "stroke-width": 1.6,
                   "stroke-dasharray": s.axis === "right" ? "5 3" : null }, svg);
      if (xs.length <= 60) {
        s.y.forEach(function (v, i) {
          if (v === null) return;
          var dot = el("circle", { cx: X(xs[i]).toFixed(1), cy: Y(v).toFixed(1), r: 2.5, fill: colour }, svg);
          title(dot, s.name + " at " + xs[i] + ": " + fmt(v));
        });
      }
      var label = s.name + (s.axis === "right" ? " (right axis)" : "");
      el("rect", { x: lx, y: H - 18, width: 10, height: 10, fill: colour }, legend);
      var text = el("text", { x: lx + 14, y: H - 9 }, legend, label);
      lx += 24 + label.length * 5.6;
      void text;
    });
    if (chart.chosen !== undefined) chosenLabel(svg, X(chart.chosen), padT, H - padB, padL,
                                                W - padR, segments, "chosen K = " + chart.chosen);
  }

  // Does the segment (x1, y1)-(x2, y2) meet the box [left, right] x [top, bottom]? (Liang-Barsky)
  function meets(seg, box) {
    var x = seg[0], y = seg[1], dx = seg[2] - x, dy = seg[3] - y, lo = 0, hi = 1;
    var p = [-dx, dx, -dy, dy], q = [x - box[0], box[1] - x, y - box[2], box[3] - y];
    for (var i = 0; i < 4; i++) {
      if (p[i] === 0) { if (q[i] < 0) return false; continue; }
      var r = q[i] / p[i];
      if (p[i] < 0) { if (r > hi) return false; if (r > lo) lo = r; }
      else { if (r < lo) return false; if (r < hi) hi = r; }
    }
    return true;
  }

  // The chosen K's label beside its dashed line, at the first height (from the top) where no
  // curve runs through it, on the line's roomier side first: at the top, where it always was,
  // it sat on the curve it marks, whose best value is the chosen one.
  function chosenLabel(svg, x, top, bottom, left, right, segments, label) {
    var text = el("text", { x: 0, y: 0, class: "axis" }, svg, label);
    var width = label.length * 6, height = 11;
    try { width = text.getComputedTextLength() || width; } catch (e) { /* not laid out */ }
    var sides = x > right - width - 8 ? [true, false] : [false, true];  // true: left of the line
    var place = null;
    sides.some(function (late) {
      if (late ? x - 4 - width < left : x + 4 + width > right) return false;
      for (var y = top + height; y <= bottom - 2; y += 3) {
        var box = late ? [x - 4 - width, x - 4, y - height, y + 2] : [x + 4, x + 4 + width, y - height, y + 2];
        if (!segments.some(function (seg) { return meets(seg, box); })) { place = [late, y]; return true; }
      }
      return false;
    });
    if (!place) place = [sides[0], top + height];  // nowhere clear: where it always was
    text.setAttribute("x", x + (place[0] ? -4 : 4));
    text.setAttribute("y", place[1]);
    text.setAttribute("text-anchor", place[0] ? "end" : "start");
    text.setAttribute("class", "axis chosen-label");
  }

  function drawTraces() {
    var box = $("traces"); clear(box);
    D.traces.forEach(function (t) {
      html("p", { class: "caption" }, box, t.title);
      var svg = el("svg", { class: "trace" }, box);
      lineChart(svg, { series: t.series, xlabel: t.xlabel, ylabel: t.ylabel });
    });
  }

  // ------------------------------------------------------------------ examples
  function drawExamples() {
    if (!D.examples) return;
    var item = items[selected], list = $("examples");
    clear(list);
    $("examples-title").textContent = "Example documents of " + nameOf(item);
    var rows = D.examples[String(item.id)] || [];
    if (!rows.length) html("li", {}, list, "(none)");
    rows.forEach(function (r) {
      var li = html("li", {}, list);
      html("span", { class: "doc-id" }, li, r.id);
      html("span", { class: "score" }, li, " (" + D.example_score + " " + fmt(r.score) + "): ");
      html("span", {}, li, r.words);
    });
  }

  // ------------------------------------------------------------------ selection
  function select(i) {
    selected = (i + items.length) % items.length;
    $("picker").value = String(selected);
    var item = items[selected];
    $("panel-title").textContent = (D.kind === "terms" ? "Top terms of " : "") + nameOf(item);
    $("panel-size").textContent = item.size;
    drawMap();
    drawSizes();
    if (D.kind === "terms") drawTerms(); else { drawProjection(); drawDetailTable(); }
    drawExamples();
  }

  function init() {
    $("subtitle").textContent = D.subtitle;
    if (D.note) { show($("note")); $("note").textContent = D.note; }
    if (D.warnings && D.warnings.length) {  // what the fit says against trusting it
      var box = $("warnings");
      show(box);
      D.warnings.forEach(function (w) { html("li", {}, box, w); });
    }
    $("map-title").textContent = isTree ? "The tree" : "Map of the " + unit + "s";
    $("map-note").textContent = D.map_note + " (click to select)";
    var picker = $("picker");
    items.forEach(function (c, i) {
      html("option", { value: String(i) }, picker, nameOf(c) + " (" + (100 * c.share).toFixed(1) + "%)");
    });
    picker.addEventListener("change", function () { select(parseInt(picker.value, 10)); });
    $("prev").addEventListener("click", function () { select(selected - 1); });
    $("next").addEventListener("click", function () { select(selected + 1); });
    document.addEventListener("keydown", function (e) {
      if (e.target && /^(INPUT|SELECT)$/.test(e.target.tagName)) return;  // they move themselves
      if (e.key === "ArrowLeft") select(selected - 1);
      if (e.key === "ArrowRight") select(selected + 1);
    });
    if (D.kind === "terms") {
      show($("term-controls")); show($("terms"));
      $("lambda").value = String(D.lambda_default);
      $("lambda").addEventListener("input", drawTerms);
    } else {
      show($("projection"));
    }
    if (D.selection) {
      show($("selection-panel"));
      lineChart($("selection"), D.selection);
    }
    if (D.examples) show($("examples-panel"));
    if (D.partition) {
      show($("partition-panel"));
      $("partition-note").textContent = D.partition.note;
      drawPartition();
    }
    if (D.dendrogram) {
      show($("dendrogram-panel"));
      $("dendrogram-note").textContent = D.dendrogram.note;
      drawDendrogram();
    }
    drawTraces();
    var largest = 0;
    items.forEach(function (c, i) {
      if (!isTree && c.share > items[largest].share) largest = i;
    });
    if (isTree && items.length > 1) {  // the largest top-level branch
      largest = -1;
      items.forEach(function (n, i) {
        if (n.parent === 0 && (largest < 0 || n.share > items[largest].share)) largest = i;
      });
      if (largest < 0) largest = 0;
    }
    select(largest);
    document.body.setAttribute("data-ready", "1");
  }

  init();
})();
