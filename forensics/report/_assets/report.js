/* forensics HTML report: swimlane timeline (canvas) and per-host charts (uPlot), one shared,
   zoomable time range. Reads the JSON in #report-data; never requests anything. When it has drawn,
   it sets data-rendered="1" (plus data-charts, data-marks) on <html>; errors go to #js-errors. */
(function () {
  "use strict";
  var started = performance.now();
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var SEV = D.severities;                         // ["info", "warning", "critical"]
  var SEV_COLOUR = {info: "#8a94a6", warning: "#e8a33d", critical: "#d64545"};
  var SEV_FILL = {info: "rgba(138,148,166,0.14)", warning: "rgba(232,163,61,0.20)", critical: "rgba(214,69,69,0.20)"};
  var PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
                 "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];
  var base = D.base;
  var full = [D.range[0] + base, D.range[1] + base];
  var view = full.slice();
  var charts = [];
  var syncing = false;
  var root = document.documentElement;

  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function fmtTime(s, withDate) {
    var d = new Date(s * 1000);
    var t = pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) + ":" + pad2(d.getUTCSeconds());
    return withDate ? d.getUTCFullYear() + "-" + pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate()) + " " + t : t;
  }

  function axisTime(s) {
    var d = new Date(s * 1000);
    var hm = pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
    if (view[1] - view[0] <= 600) hm += ":" + pad2(d.getUTCSeconds());
    return view[1] - view[0] > 86400 ? pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate()) + " " + hm : hm;
  }

  // ---- shared range -------------------------------------------------------------------------
  function setRange(lo, hi, from) {
    if (!(hi > lo)) return;
    view = [lo, hi];
    syncing = true;
    try {
      charts.forEach(function (c) {
        if (c.u !== from) c.u.setScale("x", {min: lo, max: hi});
      });
    } finally { syncing = false; }
    lane.draw();
    var label = document.getElementById("range-label");
    if (label) label.textContent = fmtTime(lo, true) + " .. " + fmtTime(hi, true) + " UTC (" + Math.round(hi - lo) + " s)";
  }

  // ---- swimlane ------------------------------------------------------------------------------
  var lane = (function () {
    var box = document.getElementById("swimlane");
    var canvas = document.createElement("canvas");
    var tip = document.getElementById("tip");
    box.appendChild(canvas);
    var LEFT = 110, TOP = 6, ROW = 22, AXIS = 22;
    var hosts = D.hosts;
    var marks = 0, width = 0;
    var height = TOP + ROW * Math.max(1, hosts.length) + AXIS;
    var dragFrom = null;

    function xOf(t) { return LEFT + (t - view[0]) / (view[1] - view[0]) * (width - LEFT - 8); }
    function tOf(x) { return view[0] + (x - LEFT) / (width - LEFT - 8) * (view[1] - view[0]); }

    function niceStep(span, n) {
      var raw = span / n, steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
      for (var i = 0; i < steps.length; i++) if (steps[i] >= raw) return steps[i];
      return Math.ceil(raw / 86400) * 86400;
    }

    function draw() {
      width = Math.max(320, box.clientWidth);
      var dpr = window.devicePixelRatio || 1;
      canvas.width = width * dpr; canvas.height = height * dpr;
      canvas.style.width = width + "px"; canvas.style.height = height + "px";
      var g = canvas.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.fillStyle = "#fff"; g.fillRect(0, 0, width, height);
      g.font = "12px system-ui, sans-serif"; g.textBaseline = "middle";
      hosts.forEach(function (h, i) {
        var y = TOP + i * ROW;
        if (i % 2 === 0) { g.fillStyle = "#f6f7f9"; g.fillRect(LEFT, y, width - LEFT, ROW); }
        g.fillStyle = "#333"; g.fillText(h.length > 15 ? h.slice(0, 14) + "…" : h, 4, y + ROW / 2);
      });
      g.save();
      g.beginPath(); g.rect(LEFT, 0, width - LEFT, height - AXIS); g.clip();
      // findings: shaded windows on each host's lane, root causes outlined
      D.findings.forEach(function (f) {
        if (f.start === null) return;
        var x0 = xOf(f.start + base), x1 = Math.max(x0 + 3, xOf((f.end === null ? f.start : f.end) + base));
        f.hosts.forEach(function (h) {
          var i = hosts.indexOf(h);
          if (i < 0) return;
          var y = TOP + i * ROW + 1;
          g.fillStyle = SEV_FILL[f.severity] || SEV_FILL.info;
          g.fillRect(x0, y, x1 - x0, ROW - 2);
          if (f.root) { g.strokeStyle = SEV_COLOUR[f.severity]; g.lineWidth = 1.5; g.strokeRect(x0, y, x1 - x0, ROW - 2); }
        });
      });
      // events: info first so warnings and critical marks stay on top
      marks = 0;
      for (var s = 0; s < SEV.length; s++) {
        g.fillStyle = SEV_COLOUR[SEV[s]];
        var tall = s === 0 ? 8 : 14, w = s === 0 ? 1 : 2;
        for (var k = 0; k < D.events.length; k++) {
          var e = D.events[k];
          if (e[2] !== s) continue;
          var t = e[0] + base;
          if (t < view[0] || t > view[1]) continue;
          var y2 = TOP + e[1] * ROW + (ROW - tall) / 2;
          g.fillRect(xOf(t) - w / 2, y2, w, tall);
          marks++;
        }
      }
      g.restore();
      // time axis
      var span = view[1] - view[0], step = niceStep(span, Math.max(2, Math.floor((width - LEFT) / 110)));
      g.fillStyle = "#555"; g.strokeStyle = "#ccc"; g.lineWidth = 1;
      var yAxis = TOP + ROW * hosts.length;
      g.beginPath(); g.moveTo(LEFT, yAxis + 0.5); g.lineTo(width, yAxis + 0.5); g.stroke();
      for (var tt = Math.ceil(view[0] / step) * step; tt <= view[1]; tt += step) {
        var x = xOf(tt);
        g.beginPath(); g.moveTo(x + 0.5, yAxis); g.lineTo(x + 0.5, yAxis + 4); g.stroke();
        g.fillText(fmtTime(tt, false), x - 24, yAxis + 13);
      }
      root.dataset.marks = String(marks);
    }

    function hit(ev) {
      var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      var lanei = Math.floor((y - TOP) / ROW);
      if (x < LEFT || lanei < 0 || lanei >= hosts.length) return null;
      var best = null, bestd = 5;
      for (var k = 0; k < D.events.length; k++) {
        var e = D.events[k];
        if (e[1] !== lanei) continue;
        var d = Math.abs(xOf(e[0] + base) - x);
        if (d < bestd || (d === bestd && best && e[2] > best[2])) { best = e; bestd = d; }
      }
      if (best) {
        return fmtTime(best[0] + base, true) + " UTC  " + hosts[lanei] + "  " + SEV[best[2]].toUpperCase() + "  " +
          D.kinds[best[3]] + (best[4] ? " [" + best[4] + "]" : "") + "\n" + best[5];
      }
      var t = tOf(x), found = [];
      D.findings.forEach(function (f) {
        if (f.start === null || f.hosts.indexOf(hosts[lanei]) < 0) return;
        if (t >= f.start + base - 1 && t <= (f.end === null ? f.start : f.end) + base + 1) found.push(f);
      });
      if (found.length) return found.map(function (f) { return f.severity.toUpperCase() + " " + f.kind + ": " + f.summary; }).join("\n");
      return null;
    }

    canvas.addEventListener("mousemove", function (ev) {
      var text = dragFrom === null ? hit(ev) : null;
      if (!text) { tip.hidden = true; return; }
      tip.textContent = text; tip.hidden = false;
      tip.style.left = Math.min(ev.pageX + 12, document.documentElement.scrollWidth - 420) + "px";
      tip.style.top = (ev.pageY + 14) + "px";
    });
    canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
    canvas.addEventListener("mousedown", function (ev) { dragFrom = ev.clientX - canvas.getBoundingClientRect().left; });
    window.addEventListener("mouseup", function (ev) {
      if (dragFrom === null) return;
      var x = ev.clientX - canvas.getBoundingClientRect().left, a = Math.min(dragFrom, x), b = Math.max(dragFrom, x);
      dragFrom = null;
      if (b - a > 4) setRange(tOf(Math.max(a, LEFT)), tOf(b));
    });
    canvas.addEventListener("dblclick", function () { setRange(full[0], full[1]); });
    return {draw: draw, canvas: canvas};
  })();

  // ---- charts --------------------------------------------------------------------------------
  function shade(host) {
    return function (u) {
      var g = u.ctx, top = u.bbox.top, h = u.bbox.height, left = u.bbox.left, right = left + u.bbox.width;
      g.save();
      D.findings.forEach(function (f) {
        if (f.start === null || f.hosts.indexOf(host) < 0) return;
        var x0 = Math.max(left, u.valToPos(f.start + base, "x", true));
        var x1 = Math.min(right, Math.max(x0 + 3, u.valToPos((f.end === null ? f.start : f.end) + base, "x", true)));
        if (x1 <= left || x0 >= right) return;
        g.fillStyle = SEV_FILL[f.severity] || SEV_FILL.info;
        g.fillRect(x0, top, x1 - x0, h);
      });
      g.restore();
    };
  }

  function makeChart(el, spec, host) {
    var xs = spec.x.map(function (v) { return v + base; });
    var data = [xs].concat(spec.series.map(function (s) { return s.data; }));
    var opts = {
      width: Math.max(300, el.clientWidth || 600), height: 170,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
      cursor: {sync: {key: "forensics-x"}, drag: {x: true, y: false}},
      scales: {x: {time: true}},
      legend: {live: true},
      axes: [{values: function (u, splits) { return splits.map(axisTime); }}, {size: 56, label: spec.unit, labelSize: 14}],
      series: [{label: "UTC"}].concat(spec.series.map(function (s, i) {
        return {label: s.label, stroke: PALETTE[i % PALETTE.length], width: 1.25, spanGaps: true, points: {show: false}};
      })),
      hooks: {
        drawClear: [shade(host)],
        setScale: [function (u, key) {
          if (key === "x" && !syncing && u.scales.x.min !== null) setRange(u.scales.x.min, u.scales.x.max, u);
        }]
      }
    };
    var u = new uPlot(opts, data, el);
    syncing = true;
    try { u.setScale("x", {min: view[0], max: view[1]}); } finally { syncing = false; }
    charts.push({u: u, el: el});
    u.root.addEventListener("dblclick", function () { setRange(full[0], full[1]); });
    root.dataset.charts = String(charts.length);
    return u;
  }

  // charts are drawn when they come near the viewport (a closed host section has no box, so its
  // charts wait until it is opened): a 64-host report opens as fast as a 2-host one
  var specs = new Map();
  document.querySelectorAll("details.host").forEach(function (det) {
    var host = det.dataset.host;
    (D.charts[host] || []).forEach(function (spec, i) {
      var el = det.querySelector('[data-chart="' + i + '"]');
      if (el && !spec.flat && spec.series.length) specs.set(el, {spec: spec, host: host});
    });
  });
  function drawNow(el) {
    var it = specs.get(el);
    if (!it) return;
    specs.delete(el);
    makeChart(el, it.spec, it.host);
  }
  if ("IntersectionObserver" in window) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (en) {
        if (en.isIntersecting) { io.unobserve(en.target); drawNow(en.target); }
      });
    }, {rootMargin: "400px 0px"});
    specs.forEach(function (_, el) { io.observe(el); });
  } else {
    Array.from(specs.keys()).forEach(drawNow);
  }
  window.__drawAllCharts = function () { Array.from(specs.keys()).forEach(drawNow); return charts.length; };

  document.querySelectorAll("[data-zoom]").forEach(function (btn) {
    btn.addEventListener("click", function (ev) {
      ev.preventDefault();
      var p = btn.dataset.zoom.split(",").map(Number), a = p[0] + base, b = p[1] + base;
      var margin = Math.max(30, (b - a) * 0.5);
      setRange(Math.max(full[0], a - margin), Math.min(full[1], b + margin));
      document.getElementById("timeline").scrollIntoView();
    });
  });
  var reset = document.getElementById("reset-zoom");
  if (reset) reset.addEventListener("click", function () { setRange(full[0], full[1]); });

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      lane.draw();
      charts.forEach(function (c) { c.u.setSize({width: Math.max(300, c.el.clientWidth), height: 170}); });
    }, 150);
  });

  setRange(full[0], full[1]);
  root.dataset.charts = String(charts.length);
  root.dataset.renderMs = String(Math.round(performance.now() - started));
  root.dataset.rendered = "1";
})();
