/**
 * Stowage tab of the Hermes web dashboard (0.19.0 plugin SDK).
 *
 * Hand-written plain JavaScript (no build step): React and the UI components
 * come from window.__HERMES_PLUGIN_SDK__, every request goes through the SDK's
 * fetchJSON (the dashboard's own session auth) to /api/plugins/stowage/.
 */
(function () {
  "use strict";

  var SDK = window.__HERMES_PLUGIN_SDK__;
  if (!SDK) return;
  var React = SDK.React;
  var h = React.createElement;
  var hooks = SDK.hooks;
  var C = SDK.components || {};
  var Card = C.Card || "div";
  var CardContent = C.CardContent || "div";
  var Button = C.Button || "button";
  var Input = C.Input || "input";
  var API = "/api/plugins/stowage";

  function fmt(n) { return (Number(n) || 0).toLocaleString("en-US"); }
  function size(n) {
    n = Number(n) || 0;
    if (n < 1024) return n + " B";
    if (n < 1048576) return (n / 1024).toFixed(1) + " KB";
    return (n / 1048576).toFixed(1) + " MB";
  }
  function errorText(err) {
    var raw = err && err.message ? String(err.message) : String(err);
    var brace = raw.indexOf("{");
    if (brace >= 0) {
      try { var body = JSON.parse(raw.slice(brace)); if (body && body.detail) return String(body.detail); } catch (e) { /* raw */ }
    }
    return raw;
  }

  // Colours readable on the dashboard's light and dark themes; the legend draws the same strokes.
  var COLORS = { full: "#4c8bf5", sent: "#2fb344", compaction: "#e5484d", spill: "#f5a524" };

  // Round tick values for an axis from 0 to max: 1, 2 or 5 times a power of ten, about `count` of them.
  function ticks(max, count) {
    var raw = Math.max(1, max) / count;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * power; }).filter(function (s) { return s >= raw; })[0];
    var out = [];
    for (var v = 0; v <= max + step / 2; v += step) out.push(v);
    if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
    return out;
  }
  function short(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(n % 1e6 ? 1 : 0) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(n % 1e3 ? 1 : 0) + "k";
    return String(n);
  }

  // The width in CSS px of the element `ref` points at, followed as the window resizes (0 until it is laid out).
  function useWidth(ref) {
    var ws = hooks.useState(0), width = ws[0], setWidth = ws[1];
    hooks.useEffect(function () {
      var el = ref.current;
      if (!el) return undefined;
      function measure() { setWidth(Math.round(el.getBoundingClientRect().width)); }
      measure();
      if (typeof ResizeObserver === "undefined") {
        window.addEventListener("resize", measure);
        return function () { window.removeEventListener("resize", measure); };
      }
      var observer = new ResizeObserver(measure);
      observer.observe(el);
      return function () { observer.disconnect(); };
    }, []);
    return width;
  }

  // Tokens per request: the same history unshaped (spilled outputs whole) and what Stowage sent. The plot is drawn
  // at the width of its card (text stays 12 px at any window width), never less than MIN_W.
  var MIN_W = 560;
  function Timeline(props) {
    var boxRef = (hooks.useRef || React.useRef)(null);
    var measured = useWidth(boxRef);
    return h("div", { ref: boxRef, style: { width: "100%" }, "data-stowage-plot-box": "" },
      measured ? h(TimelinePlot, { status: props.status, width: Math.max(MIN_W, measured) }) : null);
  }

  function TimelinePlot(props) {
    var status = props.status || {};
    var requests = Array.isArray(status.requests) ? status.requests : [];
    var compactions = Array.isArray(status.compactions) ? status.compactions : [];
    var spills = (status.store && Array.isArray(status.store.recent_spills)) ? status.store.recent_spills : [];
    if (!requests.length) {
      return h("p", { "data-stowage-plot": "empty" }, "No request recorded for this session yet.");
    }
    var W = props.width, H = 260, L = 56, R = 16, T = 12, B = 34;
    var max = 1;
    requests.forEach(function (r) { max = Math.max(max, r.full || 0, r.sent || 0); });
    var yTicks = ticks(max, 4);
    var top = yTicks[yTicks.length - 1];
    function x(i) { return L + (requests.length === 1 ? (W - L - R) / 2 : i * (W - L - R) / (requests.length - 1)); }
    function y(v) { return T + (H - T - B) * (1 - (v || 0) / top); }
    function points(key) { return requests.map(function (r, i) { return x(i).toFixed(1) + "," + y(r[key]).toFixed(1); }); }
    function indexAt(t) {
      var idx = 0;
      requests.forEach(function (r, i) { if ((r.at || 0) <= t) idx = i; });
      return idx;
    }
    // A spill happens between two requests (the tool ran after the one that asked for it): its output is first
    // sent in the next request at or after it (the last one while no later request is recorded).
    function firstSentAt(t) {
      for (var i = 0; i < requests.length; i++) { if ((requests[i].at || 0) >= t) return i; }
      return requests.length - 1;
    }
    var full = points("full"), sent = points("sent");
    var saved = full.concat(sent.slice().reverse()).join(" ");
    var grid = yTicks.map(function (v) {
      return h("g", { key: "y" + v, "data-axis": "y" },
        h("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "currentColor", strokeOpacity: v ? 0.12 : 0.4 }),
        h("text", { x: L - 8, y: y(v) + 4, textAnchor: "end", fontSize: 12, fill: "currentColor",
          "data-tick": v }, short(v)));
    });
    var xLabels = [0, requests.length - 1].filter(function (v, i, a) { return a.indexOf(v) === i; }).map(function (i) {
      return h("text", { key: "x" + i, x: x(i), y: H - B + 16, textAnchor: requests.length === 1 ? "middle" : (i ? "end" : "start"),
        fontSize: 12, fill: "currentColor" }, "request " + (i + 1));
    });
    var marks = [];
    compactions.forEach(function (c, k) {
      if (c.result !== "compacted" && c.result !== "fallback") return;
      var cx = x(indexAt(c.at || 0));
      marks.push(h("line", { key: "c" + k, x1: cx, x2: cx, y1: T, y2: H - B, stroke: COLORS.compaction,
        strokeWidth: 1.5, strokeDasharray: "4 3", "data-event": "compaction" },
        h("title", null, "compaction: " + fmt(c.tokens_before) + " -> " + fmt(c.tokens_after) + " tokens (" + c.result + ")")));
    });
    spills.forEach(function (s, k) {
      var at = firstSentAt(s.at || 0);
      marks.push(h("circle", { key: "s" + k, cx: x(at), cy: H - B - 6, r: 5, fill: COLORS.spill,
        "data-event": "spill", "data-request": at + 1, "data-handle": s.handle },
        h("title", null, "spill " + s.handle + " (" + s.tool + ", " + fmt(s.tokens) + " tokens): its preview was first " +
          "sent in request " + (at + 1))));
    });
    return h("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, style: { display: "block" },
        "data-stowage-plot": "timeline", "data-requests": requests.length, role: "img",
        "aria-label": "tokens per request: unshaped history and sent" },
      grid,
      h("text", { x: 12, y: T + (H - T - B) / 2, fontSize: 12, fill: "currentColor", textAnchor: "middle",
        transform: "rotate(-90 12 " + (T + (H - T - B) / 2) + ")" }, "tokens"),
      xLabels,
      h("polygon", { points: saved, fill: COLORS.sent, fillOpacity: 0.12, stroke: "none", "data-area": "saved" }),
      // sent first, solid and wider; the unshaped history on top, dashed: where they meet, both stay visible
      h("polyline", { points: sent.join(" "), fill: "none", stroke: COLORS.sent, strokeWidth: 3.5,
        strokeLinejoin: "round", "data-series": "sent" }),
      h("polyline", { points: full.join(" "), fill: "none", stroke: COLORS.full, strokeWidth: 2,
        strokeDasharray: "7 5", strokeLinejoin: "round", "data-series": "full" }),
      marks);
  }

  function Swatch(props) {
    return h("svg", { width: 26, height: 12, style: { display: "inline-block", verticalAlign: "middle", marginRight: 6 } },
      props.children);
  }
  function Legend() {
    var item = { marginRight: 18, whiteSpace: "nowrap" };
    return h("p", { style: { fontSize: 13, margin: "6px 0 12px" }, "data-stowage-legend": "" },
      h("span", { style: item }, h(Swatch, null, h("line", { x1: 0, x2: 26, y1: 6, y2: 6, stroke: COLORS.full,
        strokeWidth: 2, strokeDasharray: "7 5" })), "history unshaped (spilled outputs whole)"),
      h("span", { style: item }, h(Swatch, null, h("line", { x1: 0, x2: 26, y1: 6, y2: 6, stroke: COLORS.sent,
        strokeWidth: 3.5 })), "sent by Stowage"),
      h("span", { style: item }, h(Swatch, null, h("line", { x1: 13, x2: 13, y1: 0, y2: 12, stroke: COLORS.compaction,
        strokeWidth: 1.5, strokeDasharray: "4 3" })), "compaction"),
      h("span", { style: item }, h(Swatch, null, h("circle", { cx: 13, cy: 6, r: 5, fill: COLORS.spill })), "spill"));
  }

  function SessionPanel(props) {
    var st = hooks.useState(null), data = st[0], setData = st[1];
    var er = hooks.useState(""), error = er[0], setError = er[1];
    hooks.useEffect(function () {
      if (!props.sessionId) return;
      setData(null); setError("");
      SDK.fetchJSON(API + "/sessions/" + encodeURIComponent(props.sessionId))
        .then(setData).catch(function (e) { setError(errorText(e)); });
    }, [props.sessionId]);
    if (error) return h("p", { className: "text-destructive" }, error);
    if (!data) return h("p", null, "Loading\u2026");
    return h("div", { "data-stowage-session": data.session_id },
      h("h3", { style: { fontWeight: 600 } }, "Session " + data.session_id),
      // the totals as one row of labelled figures (a sentence of them wrapped at 1366 px); the sentence is the tooltip
      h("div", { "data-stowage-totals": "", "data-tokens-saved": data.tokens_saved, title: data.saved,
          style: { display: "flex", flexWrap: "wrap", columnGap: 22, rowGap: 4, fontSize: 13, margin: "4px 0 10px" } },
        (data.totals || []).map(function (figure) {
          return h("span", { key: figure[0], "data-figure": figure[0], style: { whiteSpace: "nowrap" } },
            h("span", { style: { opacity: 0.7, marginRight: 6 } }, figure[0]),
            h("span", { style: { fontWeight: 600, fontVariantNumeric: "tabular-nums" } }, figure[1]));
        })),
      h(Timeline, { status: data.status }), h(Legend),
      h("table", { style: { fontSize: 13, width: "100%", borderCollapse: "collapse" }, "data-stowage-rows": "" },
        h("tbody", null, data.rows.map(function (row, i) {
          return h("tr", { key: i },
            h("td", { style: { paddingRight: 16, opacity: 0.7, verticalAlign: "top", whiteSpace: "nowrap", width: 1 } }, row[0]),
            h("td", { style: { overflowWrap: "anywhere" } }, row[1]));
        }))));
  }

  // Store browser columns: heading, width, alignment. Every cell stays on one line (the full text is its tooltip).
  // The arguments take what the others leave; the session column shows only when the rows are of several sessions
  // (filtered to one, every row would repeat its id and squeeze the arguments to their first word).
  var COLUMNS = [["handle", "17ch"], ["tool", "16%"], ["arguments", "auto"], ["session", "22ch"], ["kind", "8ch"],
    ["size", "9ch", "right"], ["", "140px"]];
  var ONE_LINE = { whiteSpace: "nowrap", overflow: "hidden", textOverflow: "ellipsis" };

  function StoreBrowser(props) {
    var fs = hooks.useState({ session: props.sessionId || "", tool: "", q: "" }), filter = fs[0], setFilter = fs[1];
    var bs = hooks.useState(null), rows = bs[0], setRows = bs[1];
    var os = hooks.useState(null), opened = os[0], setOpened = os[1];
    var es = hooks.useState(""), error = es[0], setError = es[1];
    var load = hooks.useCallback(function () {
      var qs = [];
      ["session", "tool", "q"].forEach(function (k) { if (filter[k]) qs.push(k + "=" + encodeURIComponent(filter[k])); });
      SDK.fetchJSON(API + "/blobs" + (qs.length ? "?" + qs.join("&") : ""))
        .then(function (d) { setRows(d.blobs); setError(""); })
        .catch(function (e) { setRows([]); setError(errorText(e)); });
    }, [filter.session, filter.tool, filter.q]);
    hooks.useEffect(load, [load]);
    hooks.useEffect(function () { setFilter(Object.assign({}, filter, { session: props.sessionId || "" })); }, [props.sessionId]);
    // rows of one session (the filter names it): no session column
    var oneSession = !!filter.session && Array.isArray(rows) && rows.every(function (b) { return b.session_id === filter.session; });
    var columns = COLUMNS.filter(function (c) { return !(oneSession && c[0] === "session"); });
    function read(handle, start, offset) {
      SDK.fetchJSON(API + "/blobs/" + encodeURIComponent(handle) + "?start=" + (start || 1) + "&count=60" +
        (offset ? "&offset=" + offset : ""))
        .then(setOpened).catch(function (e) { setError(errorText(e)); });
    }
    function remove(handle) {
      if (!window.confirm("Delete " + handle + "? A tombstone stays; the bytes are gone.")) return;
      SDK.fetchJSON(API + "/blobs/" + encodeURIComponent(handle), { method: "DELETE" })
        .then(function () { setOpened(null); load(); }).catch(function (e) { setError(errorText(e)); });
    }
    function field(key, placeholder, width) {
      // a fixed width (flex: none) that holds the whole placeholder: the row may wrap, a field never shrinks
      return h(Input, { value: filter[key], placeholder: placeholder, "data-filter": key, "aria-label": placeholder,
        style: { width: width, maxWidth: "100%", flex: "none" },
        onChange: function (e) { var next = Object.assign({}, filter); next[key] = e.target.value; setFilter(next); } });
    }
    return h("div", { "data-stowage-store": "" },
      h("h3", { style: { fontWeight: 600, marginTop: 16 } }, "Store browser"),
      h("div", { style: { display: "flex", flexWrap: "wrap", gap: 8, margin: "8px 0" } },
        field("session", "session id", 220), field("tool", "tool name", 180),
        field("q", "search tool, arguments, handle", 300)),
      error ? h("p", { className: "text-destructive" }, error) : null,
      rows === null ? h("p", null, "Loading\u2026") : rows.length === 0 ? h("p", null, "Nothing stored matches.") :
        h("table", { style: { fontSize: 13, width: "100%", tableLayout: "fixed", borderCollapse: "collapse" },
            "data-stowage-blobs": "" },
          h("colgroup", null, columns.map(function (c) { return h("col", { key: c[0], style: { width: c[1] } }); })),
          h("thead", null, h("tr", null, columns.map(function (c) {
            return h("th", { key: c[0], style: Object.assign({ textAlign: c[2] || "left", padding: "4px 8px 4px 0" }, ONE_LINE) }, c[0]);
          }))),
          h("tbody", null, rows.map(function (b) {
            function cell(text, extra) {
              var column = extra && extra["data-column"];
              var style = Object.assign({ padding: "4px 8px 4px 0" }, ONE_LINE, extra || {});
              delete style["data-column"];
              return h("td", { title: text, "data-column": column, style: style }, text);
            }
            return h("tr", { key: b.handle, "data-handle": b.handle, style: { borderTop: "1px solid rgba(127,127,127,0.2)" } },
              cell(b.handle, { fontFamily: "monospace" }), cell(b.tool), cell(b.args, { "data-column": "arguments" }),
              oneSession ? null : cell(b.session_id || ""),
              cell(b.kind), cell(size(b.size), { textAlign: "right" }),
              h("td", { style: { padding: "2px 0" } },
                // the SDK's buttons are block-level: a flex row keeps them side by side
                h("div", { style: { display: "flex", gap: 6, justifyContent: "flex-end", flexWrap: "nowrap", padding: "0 4px" } },
                  h(Button, { size: "sm", variant: "outline", onClick: function () { read(b.handle, 1); } }, "read"),
                  h(Button, { size: "sm", variant: "outline", onClick: function () { remove(b.handle); } }, "delete"))));
          }))),
      opened ? h(Excerpt, { opened: opened, read: read }) : null);
  }

  // What the viewer says of the part shown: the whole blob, or which lines of how many.
  function excerptText(opened) {
    var head = opened.handle + ": " + fmt(opened.lines) + " line" + (opened.lines === 1 ? "" : "s") + ", " + size(opened.size);
    if (opened.binary) return head + " (binary: not shown)";
    var whole = opened.start <= 1 && !opened.offset && !opened.next_start && !opened.cut;
    if (whole) return head + ", shown whole";
    return head + ", lines " + fmt(opened.start) + "\u2013" + fmt(opened.end) + " of " + fmt(opened.lines) +
      (opened.cut ? " (cut: too long to show at once)" : "");
  }

  function Excerpt(props) {
    var opened = props.opened, read = props.read;
    var earlier = !opened.binary && (opened.start > 1 || opened.offset > 0);
    var later = !opened.binary && !!opened.next_start;
    return h("div", { "data-stowage-excerpt": opened.handle, style: { marginTop: 8 } },
      h("p", { "data-excerpt-text": "" }, excerptText(opened)),
      opened.binary ? null :
        h("pre", { style: { maxHeight: 320, overflow: "auto", fontSize: 12, whiteSpace: "pre-wrap" } }, opened.text),
      earlier || later ? h("div", { style: { display: "flex", gap: 8 } },
        earlier ? h(Button, { size: "sm", "data-page": "previous", onClick: function () {
          read(opened.handle, Math.max(1, opened.start - 60)); } }, "previous") : null,
        later ? h(Button, { size: "sm", "data-page": "next", onClick: function () {
          read(opened.handle, opened.next_start, opened.next_offset); } }, "next") : null) : null);
  }

  function StowagePage() {
    var ss = hooks.useState(null), list = ss[0], setList = ss[1];
    var sel = hooks.useState(""), selected = sel[0], setSelected = sel[1];
    var es = hooks.useState(""), error = es[0], setError = es[1];
    hooks.useEffect(function () {
      SDK.fetchJSON(API + "/sessions").then(function (d) {
        setList(d);
        // the newest session that sent a request (a session that never did has nothing to show)
        var first = d.sessions.filter(function (s) { return s.requests > 0; })[0] || d.sessions[0];
        if (first) setSelected(first.session_id);
      }).catch(function (e) { setError(errorText(e)); });
    }, []);
    var body;
    if (error) body = h("p", { className: "text-destructive" }, error);
    else if (!list) body = h("p", null, "Loading\u2026");
    else body = h("div", null,
      h("p", { style: { fontSize: 12, opacity: 0.7 } }, "Store: " + list.store),
      list.sessions.length ? h("div", { style: { display: "flex", gap: 8, flexWrap: "wrap", margin: "8px 0" } },
        list.sessions.map(function (s) {
          var on = s.session_id === selected;
          // marked by more than the SDK's variant (which a theme may draw alike): a ring, bold text, a check
          return h(Button, { key: s.session_id, size: "sm", variant: on ? "default" : "outline",
            onClick: function () { setSelected(s.session_id); }, "data-session-button": s.session_id,
            "data-selected": on ? "true" : "false", "aria-pressed": on ? "true" : "false",
            style: on ? { outline: "2px solid currentColor", outlineOffset: 2, fontWeight: 700 }
                      : { fontWeight: 400, opacity: 0.75 } },
            (on ? "\u2713 " : "") + s.session_id + " (" + fmt(s.requests) + " request" + (s.requests === 1 ? "" : "s") +
              ", " + fmt(s.tokens_saved) + " tokens saved)");
        })) : h("p", null, "No session has reported figures yet: they are written at the end of each turn."),
      selected ? h(SessionPanel, { sessionId: selected }) : null,
      h(StoreBrowser, { sessionId: selected }));
    return h(Card, null, h(CardContent, { style: { padding: 16 } },
      h("h2", { style: { fontSize: 18, fontWeight: 700 } }, "Stowage"), body));
  }

  if (window.__HERMES_PLUGINS__ && typeof window.__HERMES_PLUGINS__.register === "function") {
    window.__HERMES_PLUGINS__.register("stowage", StowagePage);
  }
})();
