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
      var p = panel("observe", "observe", tagOf("observe"));
      row(p, "saw", (v.visible || 0) + " visible · " + (v.inspected || 0) + " inspected · " +
        (v.flagged || 0) + " flagged · " + (v.suspects || 0) + " suspects · " +
        v.steps_remaining + " steps left", "view-counts");
      topList(p, "top inspected (ring likelihood)", v.top_inspected);
      topList(p, "top frontier (worth inspecting)", v.top_frontier);
      return p;
    },
    rule_check: function (o) {
      var r = o.rule || {};
      var p = panel("rule_check", "rule_check", tagOf("rule_check"));
      row(p, "proposes", r.action, "rule-action");
      row(p, "confidence", num(r.confidence, 2), "rule-confidence");
      if (o.choices) row(p, "legal choices", o.choices.length);
      row(p, "because", r.reason, "rule-reason");
      return p;
    },
    llm_decide: function (o) {
      var l = o.llm || {};
      var asked = l.status && l.status !== "skipped";
      // `shadow` is the stored name of the exploration flag (graph/nodes/llm_decide.py)
      var p = panel("llm_decide", "llm_decide", asked ? (l.shadow ? "asked (exploration: judged, not acted on)" : "asked") : "not asked");
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
      var p = panel(name || "arbitrate", name || "arbitrate", tagOf(name || "arbitrate"));
      var m = row(p, "decided by", modeWords(d.mode), "mode");
      m.setAttribute("data-mode", d.mode || "");
      row(p, "action", d.action, "action");
      row(p, "α", num(o.alpha, 2), "alpha");
      return p;
    },
    step_env: function (o) {
      var last = o.last || {};
      var p = panel("step_env", "step_env", tagOf("step_env"));
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
  renderers.start = function (o) {
    var p = panel("start", "start", tagOf("start"));
    row(p, "starting accounts", (o.starting_ids || []).length, "start-accounts");
    row(p, "budget", o.max_steps + " steps · " + o.max_actions + " actions at most");
    row(p, "α", num(o.alpha, 2), "start-alpha");
    row(p, "weights version", o.weights_version);
    row(p, "lessons · insights", (o.lesson_ids || []).length + " · " + (o.insights || []).length);
    row(p, "LLM stake", o.llm_stake === null || o.llm_stake === undefined ? "unbounded" : o.llm_stake);
    return p;
  };
  /* A node episode.js has no renderer for (data.panels says which): each value it wrote. */
  function genericPanel(name, o) {
    var p = panel(name, name, tagOf(name));
    p.classList.add("generic");
    p.setAttribute("data-panel", "generic");
    Object.keys(o || {}).forEach(function (key) {
      var v = o[key];
      row(p, key, v !== null && typeof v === "object" ? JSON.stringify(v) : v, "generic-" + key);
    });
    return p;
  }
  var PANELS = {};
  (data.panels || []).forEach(function (x) { PANELS[x.name] = x; });
  function tagOf(name) { return (PANELS[name] || {}).tag || ""; }
  /* The arbitration mode in words (databases from before `rule_alone` are mapped by the server). */
  function modeWords(mode) {
    if (mode === "agree") return "agree: the rule and the LLM chose the same action";
    if (mode === "llm") return "llm: the LLM's choice";
    if (mode === "fork") return "fork: the action a person chose";
    if (mode === "rule_override") return "rule_override: the rule's choice over the LLM's";
    if (mode === "rule_alone") return "rule_alone: the rule's choice (the LLM was not asked)";
    return mode || "–";
  }

  function renderNodes(k) {
    var box = document.getElementById("nodes");
    box.textContent = "";
    if (k >= steps.length) {
      box.appendChild(renderDebrief());
      return;
    }
    var s = steps[k];
    (data.panels || []).forEach(function (x) {
      var o = s.nodes[x.name];
      if (!o) return;
      var render = x.renderer !== "generic" && renderers[x.renderer];
      box.appendChild(render ? render(o) : genericPanel(x.name, o));
    });
    if (!s.nodes.observe) {
      box.insertBefore(el("p", "meta", "observe's evidence was not kept for this episode: it was " +
        "recorded before the steps table kept it, and its checkpoint history is gone."), box.firstChild);
    }
  }

  /* ---------------------------------------------------------------- the case */
  /* Accounts that matter (starting, inspected, flagged, revealed by a pivot) are drawn one by
   * one; the rest of what one action revealed is one counted crowd node (fakegang/view/layout.py).
   * Positions come from Cytoscape's concentric layout, run once over the whole episode with the
   * labels counted in each node's size, so labels do not overlap and nothing moves while stepping. */
  var caseData = data.case;
  var acc = {}, crowds = {};
  var cy = null;
  function actionOf(k) {
    var s = steps[k];
    if (!s) return null;
    return s.action || null;  // the decided action, set by the server (fakegang/view/episode.py)
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
  function alone(id) { return acc[id] && !acc[id].cluster; }

  var STYLE = [
    { selector: "node", style: { "background-color": "#d9dee7", "label": "data(label)",
      "font-size": 10, "min-zoomed-font-size": 5, "color": "#475467", "width": 14, "height": 14,
      "text-valign": "bottom", "text-margin-y": 2, "border-width": 0 } },
    { selector: "node.crowd", style: { "shape": "round-rectangle", "width": "data(size)", "height": 12,
      "background-color": "#eef1f5", "border-width": 1, "border-color": "#c3cad5", "label": "data(label)",
      "text-valign": "center", "text-margin-y": 0, "font-size": 8, "color": "#667085" } },
    { selector: "node.start", style: { "border-width": 2, "border-color": "#1d2330" } },
    { selector: "node.inspected", style: { "background-color": "#6c8ebf", "width": 18, "height": 18 } },
    { selector: "node.new", style: { "background-color": "#ffe082" } },
    { selector: "node.flagged", style: { "border-width": 4, "border-color": "#ff7f0e" } },
    { selector: "node.target", style: { "width": 24, "height": 24, "font-weight": "bold", "color": "#1d2330" } },
    { selector: "node.hit", style: { "background-color": "#2e7d32" } },
    { selector: "node.miss", style: { "background-color": "#c62828" } },
    { selector: "node.crowd.miss", style: { "background-color": "#fbe4e4", "border-color": "#c62828", "color": "#c62828" } },
    { selector: "node.falseflag", style: { "background-color": "#e377c2" } },
    { selector: "edge", style: { "width": 1, "line-color": "#c3cad5", "curve-style": "straight",
      "target-arrow-shape": "triangle", "target-arrow-color": "#c3cad5", "arrow-scale": 0.6 } },
    { selector: "edge.reveal", style: { "line-style": "dashed", "line-color": "#e3e7ee",
      "target-arrow-shape": "none" } },
  ];

  function buildGraph() {
    var box = document.getElementById("case-graph");
    if (!caseData || typeof cytoscape === "undefined") {
      box.textContent = data.case_error || "The case could not be rebuilt.";
      return;
    }
    var maxLevel = 0;
    caseData.accounts.forEach(function (a) {
      acc[a.id] = a;
      if (a.cluster) return;
      maxLevel = Math.max(maxLevel, a.level);
      nodeDefs.push({ group: "nodes", data: { id: a.id, label: a.id.slice(-4), level: a.level }, at: a.seen });
    });
    (caseData.crowds || []).forEach(function (c) {
      crowds[c.id] = c;
      maxLevel = Math.max(maxLevel, c.level);
      nodeDefs.push({ group: "nodes", classes: "crowd", at: c.at, data: { id: c.id,
        label: "+" + c.members.length, level: c.level, size: Math.min(28, 16 + 2 * Math.sqrt(c.members.length)) } });
    });
    caseData.edges.forEach(function (e) {
      if (!alone(e.source) || !alone(e.target)) return;
      edgeDefs.push({ group: "edges", at: e.at, classes: "follow", data: { id: "f:" + e.source + ">" + e.target,
        source: e.source, target: e.target, kind: "follow" } });
    });
    caseData.reveals.forEach(function (e) {
      if (!alone(e.source) || !alone(e.target)) return;
      edgeDefs.push({ group: "edges", at: e.at, classes: "reveal", data: { id: "r:" + e.source + ">" + e.target,
        source: e.source, target: e.target, kind: "reveal" } });
    });
    (caseData.crowds || []).forEach(function (c) {
      if (!c.source || !alone(c.source)) return;
      edgeDefs.push({ group: "edges", at: c.at, classes: "reveal", data: { id: "r:" + c.source + ">" + c.id,
        source: c.source, target: c.id, kind: "reveal" } });
    });
    cy = cytoscape({ container: box, elements: [], minZoom: 0.1, maxZoom: 6, style: STYLE,
      layout: { name: "preset" } });
    layOut(maxLevel);
    cy.on("tap", "node", function (evt) { describeAccount(evt.target.id()); });
    document.getElementById("fit").addEventListener("click", fitWhole);
  }

  /* Every node the episode will draw, in its largest look (inspected, flagged), laid out once by
   * the concentric layout; the positions are kept and the elements removed again: the page then
   * adds them as the steps reveal them. */
  function layOut(maxLevel) {
    cy.batch(function () {
      cy.add(nodeDefs.map(function (def) {
        var a = acc[def.data.id];
        var cls = crowds[def.data.id] ? "crowd" : [a.seen < 0 ? "start" : "", a.inspected !== null ? "inspected" : "",
          a.flags.length ? "flagged" : ""].join(" ");
        return { group: "nodes", data: def.data, classes: cls };
      }));
    });
    cy.layout({ name: "concentric", concentric: function (n) { return maxLevel - n.data("level"); },
      levelWidth: function () { return 1; }, minNodeSpacing: 6, avoidOverlap: true,
      nodeDimensionsIncludeLabels: true, animate: false, fit: false, startAngle: 1.5 * Math.PI }).run();
    nodeDefs.forEach(function (def) {
      var p = cy.getElementById(def.data.id).position();
      def.position = { x: p.x, y: p.y };
    });
    cy.elements().remove();
  }

  /* Fit the whole case (hidden accounts included, which cy.fit would skip) from positions. */
  function fitWhole() {
    if (!cy || !nodeDefs.length) return;
    var xs = nodeDefs.map(function (d) { return d.position.x; });
    var ys = nodeDefs.map(function (d) { return d.position.y; });
    var x0 = Math.min.apply(null, xs) - 20, x1 = Math.max.apply(null, xs) + 20;
    var y0 = Math.min.apply(null, ys) - 20, y1 = Math.max.apply(null, ys) + 30;
    var pad = 10, w = cy.width(), h = cy.height();
    var zoom = Math.min((w - 2 * pad) / Math.max(1, x1 - x0), (h - 2 * pad) / Math.max(1, y1 - y0), 2);
    cy.viewport({ zoom: zoom, pan: { x: w / 2 - zoom * (x0 + x1) / 2, y: h / 2 - zoom * (y0 + y1) / 2 } });
  }

  function revealedBy(a) {
    if (a.seen === null || a.seen === undefined) return "never seen by the agent";
    if (a.seen < 0) return "a starting account (the report)";
    return "revealed by action #" + a.seen + " (" + a.by + ")";
  }
  function describeAccount(id) {
    var info = document.getElementById("account-info");
    var atEnd = pos >= steps.length;
    var d = caseData.debrief;
    var c = crowds[id];
    if (c) {
      var parts = [c.members.length + " accounts revealed by action #" + c.at + " (" + c.by + ")" +
        (c.source ? " from " + c.source : "") + ", never inspected or flagged"];
      if (d && atEnd) {
        var missed = c.members.filter(function (m) { return d.ring.indexOf(m) >= 0; });
        parts.push(missed.length ? missed.length + " of them ring members: " + missed.join(" ") : "no ring member among them");
      }
      info.textContent = parts.join(" · ") + ": " + c.members.join(" ");
      return;
    }
    var a = acc[id];
    var out = [id + ":", revealedBy(a)];
    if (a.inspected !== null) out.push("inspected at #" + a.inspected);
    a.flags.forEach(function (f) { out.push("flagged at #" + f[0] + (f[1] !== null ? ", unflagged at #" + f[1] : "")); });
    if (d && atEnd) out.push(d.ring.indexOf(id) >= 0 ? "ring member" : "innocent");
    info.textContent = out.join(" · ");
    var why = (caseData.why || {})[id];  // its evidence once the agent had it (no look ahead)
    if (why && why.evidence && (atEnd || pos >= why.evidence.as_of)) info.appendChild(evidenceList(why.evidence));
  }

  /* The case at step k. Elements exist in Cytoscape only while they are seen (a long episode's
   * accounts are not all built to show the first step), and only the elements whose classes
   * change are touched, so a step costs what it changes, not the size of the case. */
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
  function crowdMissed(c, ring) {
    return c.members.filter(function (m) { return ring[m]; }).length;
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
        if (def.at > k) return;
        var id = def.data.id, cls;
        if (crowds[id]) {
          var c = crowds[id], missed = atEnd ? crowdMissed(c, ring) : 0;
          seen += c.members.length;
          revealed += !atEnd && c.at === k ? c.members.length : 0;
          cls = "crowd" + (!atEnd && c.at === k ? " new" : "") + (missed ? " miss" : "");
          var label = "+" + c.members.length + (missed ? " · " + missed + " missed" : "");
          if (shown[id] !== cls) cy.getElementById(id).data("label", label);
        } else {
          var a = acc[id];
          seen += 1;
          inspected += a.inspected !== null && a.inspected <= k;
          flagged += flaggedAt(a, k);
          revealed += !atEnd && a.seen === k;
          cls = nodeClasses(a, k, atEnd, target, ring, flaggedEnd);
        }
        if (shown[id] !== cls) { cy.getElementById(id).classes(cls); shown[id] = cls; }
      });
    });
    document.getElementById("case-counts").textContent =
      seen + " seen · " + inspected + " inspected · " + flagged + " flagged" +
      (atEnd ? "" : " · " + revealed + " revealed by this action");
    var box = document.getElementById("case-graph");
    box.setAttribute("data-visible-nodes", String(seen));
  }

  /* ---------------------------------------------------------------- why this account */
  function evidenceList(e) {
    var box = el("div", "evidence");
    box.appendChild(el("div", "k", e.note + (e.as_of !== null && e.as_of !== undefined ? " · as the agent saw it before action #" + e.as_of : "")));
    if (e.features && e.features.length) {
      var ul = el("ul", "mono contributions");
      e.features.forEach(function (f) {
        var li = el("li", f[2] > 0 ? "up" : "down", f[0] + " = " + f[1] + "  →  " + (f[2] > 0 ? "+" : "") + Number(f[2]).toFixed(2) + " log-odds");
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
    return box;
  }
  var DECIDED_BY = { agree: "the rule and the LLM agreed", rule_override: "the rule's choice over the LLM's",
    rule_alone: "the rule's choice (the LLM not asked)", llm: "the LLM's choice", fork: "a person's choice" };
  function whyPanel(w) {
    var p = el("div", "why " + (w.member === true ? "member" : w.member === false ? "innocent" : ""));
    p.setAttribute("data-account", w.id);
    var h = el("h4", null, w.id + " ");
    h.appendChild(el("span", "tag", w.member === true ? (w.flagged !== null && w.flagged !== undefined ? "member: hit" : "member: missed")
      : w.member === false ? "innocent: false flag" : "flagged"));
    p.appendChild(h);
    var a = acc[w.id];
    p.appendChild(el("div", null, revealedBy(a || {}) + (w.from ? " from " + w.from : "")));
    if (a) {
      var when = [];
      if (a.inspected !== null) when.push("inspected at #" + a.inspected);
      else when.push("never inspected");
      if (w.flagged !== null && w.flagged !== undefined) when.push("flagged at #" + w.flagged + (w.flagged_by ? " (" + DECIDED_BY[w.flagged_by] + ")" : ""));
      p.appendChild(el("div", null, when.join(" · ")));
    }
    if (w.evidence) p.appendChild(evidenceList(w.evidence));
    return p;
  }
  function whySection() {
    var why = (caseData && caseData.why) || {};
    var ids = Object.keys(why);
    var box = el("div", "why-list");
    box.id = "why";
    box.appendChild(el("h3", null, "Why these accounts (" + ids.length + ") · weights: " + (data.weights_source || "?")));
    ids.forEach(function (id) { box.appendChild(whyPanel(why[id])); });
    return box;
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
    if (caseData && caseData.why) box.appendChild(whySection());
    return box;
  }

  /* ---------------------------------------------------------------- stepping */
  /* One numbering everywhere (viewer, replay, fork --at, runs, the docs): action #k is the
   * action played after k others, the steps table's idx, counted from #0. */
  function label(k) {
    if (k >= steps.length) return "end · debrief";
    return "action #" + k + " · " + (actionOf(k) || "?") + "  (" + steps.length + " actions: #0–#" + (steps.length - 1) + ")";
  }
  function forkCommand(k) {
    var box = document.getElementById("fork-command");
    if (!box) return;
    box.parentNode.hidden = k >= steps.length;
    if (k >= steps.length) { box.textContent = ""; return; }
    box.textContent = "fakegang fork " + data.episode.thread_id + " --at " + k +
      ' --action "…instead of ' + (actionOf(k) || "?") + '" --db ' + data.db;
  }
  function go(k) {
    if (!positions) return;
    pos = Math.max(0, Math.min(positions - 1, k));
    var atEnd = pos >= steps.length;
    document.body.classList.toggle("at-end", atEnd);
    document.getElementById("step-counter").textContent = label(pos);
    forkCommand(pos);
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
