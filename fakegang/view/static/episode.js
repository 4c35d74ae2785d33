/* fakegang view: one episode, stepped with buttons, the slider and the arrow keys.
 * Everything comes from the JSON the server put in the page (#episode-data): no request is made.
 * Text from the database is always set with textContent, never parsed as HTML. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("episode-data").textContent);
  var steps = data.steps || [];
  var hasEnd = !!data.result;
  var positions = steps.length + (hasEnd ? 1 : 0);
  var pos = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function row(parent, key, value, field) {
    var r = el("div", "row");
    r.appendChild(el("span", "k", key));
    var v = el("span", "v", value);
    if (field) v.setAttribute("data-field", field);
    r.appendChild(v);
    parent.appendChild(r);
    return v;
  }
  function num(x, digits) {
    return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
  }
  function panel(name, title, tag) {
    var p = el("div", "node " + name);
    p.id = "node-" + name;
    var h = el("h3", null, title);
    if (tag) h.appendChild(el("span", "tag", tag));
    p.appendChild(h);
    return p;
  }
  function topList(parent, label, pairs) {
    if (!pairs || !pairs.length) { row(parent, label, "–"); return; }
    parent.appendChild(el("div", "k", label));
    var ol = el("ol", "mono");
    pairs.forEach(function (pair) { ol.appendChild(el("li", null, pair[0] + "  " + num(pair[1], 3))); });
    parent.appendChild(ol);
  }

  /* ---------------------------------------------------------------- node panels */
  var renderers = {
    observe: function (o) {
      var v = o.view || {};
      var p = panel("observe", "observe", "the evidence");
      row(p, "saw", (v.visible || 0) + " visible · " + (v.inspected || 0) + " inspected · " +
        (v.flagged || 0) + " flagged · " + (v.suspects || 0) + " suspects · " +
        v.steps_remaining + " steps left", "view-counts");
      topList(p, "top inspected (ring likelihood)", v.top_inspected);
      topList(p, "top frontier (worth inspecting)", v.top_frontier);
      return p;
    },
    rule_check: function (o) {
      var r = o.rule || {};
      var p = panel("rule_check", "rule_check", "the rule engine");
      row(p, "proposes", r.action, "rule-action");
      row(p, "confidence", num(r.confidence, 2), "rule-confidence");
      if (o.choices) row(p, "legal choices", o.choices.length);
      row(p, "because", r.reason, "rule-reason");
      return p;
    },
    llm_decide: function (o) {
      var l = o.llm || {};
      var asked = l.status && l.status !== "skipped";
      var p = panel("llm_decide", "llm_decide", asked ? (l.shadow ? "asked (shadow: judged, not acted on)" : "asked") : "not asked");
      if (!asked) p.classList.add("skipped");
      row(p, "LLM asked", asked ? "yes" : "no", "llm-asked");
      if (!asked) { row(p, "why not", l.reason, "llm-reason"); return p; }
      row(p, "status", l.status, "llm-status");
      row(p, "answer", l.action || "–", "llm-action");
      row(p, "reasoning", l.reason || "–", "llm-reason");
      if (l.error) row(p, "error", l.error, "llm-error");
      row(p, "cost", num(l.latency_s, 2) + " s · " + (l.tokens || 0) + " tokens");
      return p;
    },
    arbitrate: function (o, name) {
      var d = o.decision || {};
      var p = panel(name || "arbitrate", name || "arbitrate", name === "fork" ? "a person changed the action" : "who decides");
      row(p, "mode", d.mode, "mode");
      row(p, "action", d.action, "action");
      row(p, "α", num(o.alpha, 2), "alpha");
      return p;
    },
    step_env: function (o) {
      var last = o.last || {};
      var p = panel("step_env", "step_env", "the environment's reply");
      var r = row(p, "reward", (last.reward >= 0 ? "+" : "") + num(last.reward, 2), "reward");
      r.classList.add("reward", last.reward > 0 ? "pos" : last.reward < 0 ? "neg" : "zero");
      row(p, "reply", last.message, "message");
      if (last.error) row(p, "illegal", last.error, "env-error");
      row(p, "steps left", o.steps_remaining);
      if (o.done) row(p, "episode", "over");
      return p;
    },
  };
  renderers.fork = function (o) { return renderers.arbitrate(o, "fork"); };
  var ORDER = ["observe", "rule_check", "llm_decide", "arbitrate", "fork", "step_env"];

  function renderNodes(k) {
    var box = document.getElementById("nodes");
    box.textContent = "";
    if (k >= steps.length) {
      box.appendChild(renderDebrief());
      return;
    }
    var s = steps[k];
    ORDER.forEach(function (name) {
      if (s.nodes[name]) box.appendChild(renderers[name](s.nodes[name]));
    });
    if (!s.nodes.observe) {
      box.insertBefore(el("p", "meta", "observe's evidence is not recorded for this episode (" + data.source + ")."), box.firstChild);
    }
  }

  /* ---------------------------------------------------------------- the case */
  var caseData = data.case;
  var acc = {};
  var cy = null;
  function actionOf(k) {
    var s = steps[k];
    if (!s) return null;
    var d = (s.nodes.fork || s.nodes.arbitrate || {}).decision;
    return d ? d.action : null;
  }
  function targetOf(k) {
    var a = actionOf(k);
    if (!a) return null;
    var parts = a.split(" ");
    return parts.length > 1 ? parts[1] : null;
  }
  function flaggedAt(a, k) {
    return a.flags.some(function (f) { return f[0] <= k && (f[1] === null || f[1] > k); });
  }

  function buildGraph() {
    var box = document.getElementById("case-graph");
    if (!caseData || typeof cytoscape === "undefined") {
      box.textContent = data.case_error || "The case could not be rebuilt.";
      return;
    }
    caseData.accounts.forEach(function (a) {
      acc[a.id] = a;
      nodeDefs.push({ group: "nodes", data: { id: a.id, label: a.id.slice(-4) },
        position: { x: a.x, y: a.y }, at: a.seen });
    });
    caseData.edges.forEach(function (e) {
      edgeDefs.push({ group: "edges", at: e.at, classes: "follow", data: { id: "f:" + e.source + ">" + e.target,
        source: e.source, target: e.target, kind: "follow" } });
    });
    caseData.reveals.forEach(function (e) {
      edgeDefs.push({ group: "edges", at: e.at, classes: "reveal", data: { id: "r:" + e.source + ">" + e.target,
        source: e.source, target: e.target, kind: "reveal" } });
    });
    cy = cytoscape({
      container: box,
      elements: [], // added as the steps reveal them: the page opens with the starting accounts
      minZoom: 0.1,
      maxZoom: 6,
      style: [
        { selector: "node", style: { "background-color": "#d9dee7", "label": "data(label)",
          "font-size": 8, "min-zoomed-font-size": 6, "color": "#667085", "width": 14, "height": 14, "text-valign": "bottom",
          "text-margin-y": 2, "border-width": 0 } },
        { selector: "node.start", style: { "border-width": 2, "border-color": "#1d2330" } },
        { selector: "node.inspected", style: { "background-color": "#6c8ebf", "width": 18, "height": 18 } },
        { selector: "node.new", style: { "background-color": "#ffe082" } },
        { selector: "node.flagged", style: { "border-width": 4, "border-color": "#ff7f0e" } },
        { selector: "node.target", style: { "width": 26, "height": 26, "font-weight": "bold", "color": "#1d2330", "font-size": 10 } },
        { selector: "node.hit", style: { "background-color": "#2e7d32" } },
        { selector: "node.miss", style: { "background-color": "#c62828" } },
        { selector: "node.falseflag", style: { "background-color": "#e377c2" } },
        { selector: "edge", style: { "width": 1, "line-color": "#c3cad5", "curve-style": "straight",
          "target-arrow-shape": "triangle", "target-arrow-color": "#c3cad5", "arrow-scale": 0.6 } },
        { selector: "edge.reveal", style: { "line-style": "dashed", "line-color": "#e3e7ee",
          "target-arrow-shape": "none" } },
      ],
      layout: { name: "preset" }, // positions from the server: a radial tree of who revealed whom
    });
    cy.on("tap", "node", function (evt) { describeAccount(evt.target.id()); });
    document.getElementById("fit").addEventListener("click", fitWhole);
  }

  /* Fit the whole case (hidden accounts included, which cy.fit would skip) from positions. */
  function fitWhole() {
    if (!cy || !caseData.accounts.length) return;
    var xs = caseData.accounts.map(function (a) { return a.x; });
    var ys = caseData.accounts.map(function (a) { return a.y; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    var pad = 30, w = cy.width(), h = cy.height();
    var zoom = Math.min((w - 2 * pad) / Math.max(1, x1 - x0), (h - 2 * pad) / Math.max(1, y1 - y0), 2);
    cy.viewport({ zoom: zoom, pan: { x: w / 2 - zoom * (x0 + x1) / 2, y: h / 2 - zoom * (y0 + y1) / 2 } });
  }

  function describeAccount(id) {
    var a = acc[id];
    var parts = [id + ":"];
    parts.push(a.seen < 0 ? "a starting account" : "revealed by action #" + a.seen + " (" + a.by + ")");
    if (a.inspected !== null) parts.push("inspected at #" + a.inspected);
    a.flags.forEach(function (f) { parts.push("flagged at #" + f[0] + (f[1] !== null ? ", unflagged at #" + f[1] : "")); });
    var d = caseData.debrief;
    if (d && pos >= steps.length) parts.push(d.ring.indexOf(id) >= 0 ? "ring member" : "innocent");
    document.getElementById("account-info").textContent = parts.join(" · ");
  }

  /* The case at step k. Elements exist in Cytoscape only while they are seen (a long episode's
   * 480 accounts and 900 edges are not all built to show the first step), and only the elements
   * whose classes change are touched, so a step costs what it changes, not the size of the case. */
  var nodeDefs = [], edgeDefs = [], shown = {};
  function nodeClasses(a, k, atEnd, target, ring, flaggedEnd) {
    var c = [];
    if (a.seen < 0) c.push("start");
    if (a.inspected !== null && a.inspected <= k) c.push("inspected");
    if (flaggedAt(a, k)) c.push("flagged");
    if (!atEnd && a.seen === k) c.push("new");
    if (a.id === target) c.push("target");
    if (atEnd && ring[a.id]) c.push(flaggedEnd[a.id] ? "hit" : "miss");
    else if (atEnd && flaggedEnd[a.id]) c.push("falseflag");
    return c.join(" ");
  }
  function drawCase(k, atEnd) {
    if (!cy) return;
    var target = atEnd ? null : targetOf(k);
    var d = caseData.debrief;
    var ring = {}, flaggedEnd = {};
    if (atEnd && d) {
      d.ring.forEach(function (id) { ring[id] = true; });
      d.hits.concat(d.false_flags).forEach(function (id) { flaggedEnd[id] = true; });
    }
    var seen = 0, inspected = 0, flagged = 0, revealed = 0;
    var add = [], gone = [];
    cy.batch(function () {
      nodeDefs.concat(edgeDefs).forEach(function (def) {
        var id = def.data.id, want = def.at <= k, has = shown[id] !== undefined;
        if (has && !want) { gone.push(id); delete shown[id]; }
        else if (want && !has) { add.push(def); }
      });
      gone.forEach(function (id) { cy.getElementById(id).remove(); });
      if (add.length) cy.add(add);
      add.forEach(function (def) { if (def.group === "edges") shown[def.data.id] = def.classes; });
      nodeDefs.forEach(function (def) {
        var a = acc[def.data.id];
        if (a.seen > k) return;
        seen += 1;
        inspected += a.inspected !== null && a.inspected <= k;
        flagged += flaggedAt(a, k);
        revealed += !atEnd && a.seen === k;
        var cls = nodeClasses(a, k, atEnd, target, ring, flaggedEnd);
        if (shown[a.id] !== cls) { cy.getElementById(a.id).classes(cls); shown[a.id] = cls; }
      });
    });
    document.getElementById("case-counts").textContent =
      seen + " seen · " + inspected + " inspected · " + flagged + " flagged" +
      (atEnd ? "" : " · " + revealed + " revealed by this action");
    var box = document.getElementById("case-graph");
    box.setAttribute("data-visible-nodes", String(seen));
  }

  /* ---------------------------------------------------------------- the debrief */
  function renderDebrief() {
    var box = el("div", "node debrief");
    box.id = "debrief";
    var r = data.result || {};
    box.appendChild(el("h2", null, "Debrief: " + (r.won ? "WIN" : "LOSS")));
    row(box, "outcome", "reward " + num(r.reward, 2) + " · grader " + num(r.grader_score, 3) +
      " · recall " + num(r.recall, 2) + " · precision " + num(r.precision, 2) +
      " · " + r.steps_used + " steps", "debrief-outcome");
    var d = caseData && caseData.debrief;
    if (d) {
      [["ring", d.ring, "debrief-ring"], ["hits (flagged members)", d.hits, "debrief-hits"],
       ["misses (members not flagged)", d.misses, "debrief-misses"],
       ["false flags (innocents flagged)", d.false_flags, "debrief-false"],
       ["members never seen", d.never_seen, "debrief-never-seen"]].forEach(function (x) {
        row(box, x[0] + " (" + x[1].length + ")", x[1].join(" ") || "–", x[2]).classList.add("ids");
      });
    }
    if (r.learn_status) row(box, "learning", r.learn_status);
    if (data.reflection) row(box, "reflection", data.reflection, "reflection");
    return box;
  }

  /* ---------------------------------------------------------------- stepping */
  function label(k) {
    if (k >= steps.length) return "end · debrief";
    var s = steps[k];
    return "action " + (k + 1) + " of " + steps.length + " · " + (actionOf(k) || "?");
  }
  function go(k) {
    if (!positions) return;
    pos = Math.max(0, Math.min(positions - 1, k));
    var atEnd = pos >= steps.length;
    document.body.classList.toggle("at-end", atEnd);
    document.getElementById("step-counter").textContent = label(pos);
    document.getElementById("stepper").setAttribute("data-step", String(pos));
    document.getElementById("slider").value = String(pos);
    renderNodes(pos);
    drawCase(atEnd ? steps.length - 1 : pos, atEnd);
    if (history.replaceState) history.replaceState(null, "", "#step=" + pos);
  }

  function start() {
    var slider = document.getElementById("slider");
    slider.max = String(Math.max(0, positions - 1));
    if (!positions) {
      document.getElementById("step-counter").textContent = "no recorded action";
      document.getElementById("nodes").appendChild(el("p", "empty", "This episode recorded no action yet."));
    }
    performance.mark("fakegang:parsed");
    buildGraph();
    performance.mark("fakegang:graph");
    document.getElementById("first").addEventListener("click", function () { go(0); });
    document.getElementById("prev").addEventListener("click", function () { go(pos - 1); });
    document.getElementById("next").addEventListener("click", function () { go(pos + 1); });
    document.getElementById("last").addEventListener("click", function () { go(positions - 1); });
    slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
    document.addEventListener("keydown", function (e) {
      if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === "ArrowRight") { go(pos + 1); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { go(pos - 1); e.preventDefault(); }
      else if (e.key === "Home") { go(0); e.preventDefault(); }
      else if (e.key === "End") { go(positions - 1); e.preventDefault(); }
    });
    fitWhole(); // the whole case in view: the picture stays still while stepping
    var m = /step=(\d+)/.exec(location.hash);
    go(m ? parseInt(m[1], 10) : 0);
    performance.mark("fakegang:ready");
    window.fakegangView = { cy: cy, go: go, position: function () { return pos; }, positions: positions };
    document.body.setAttribute("data-ready", "1");
  }
  start();
})();
