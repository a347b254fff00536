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

  // Tokens per request: the full history (what the built-in path would send) and what Stowage sent.
  function Timeline(props) {
    var status = props.status || {};
    var requests = Array.isArray(status.requests) ? status.requests : [];
    var compactions = Array.isArray(status.compactions) ? status.compactions : [];
    var spills = (status.store && Array.isArray(status.store.recent_spills)) ? status.store.recent_spills : [];
    if (!requests.length) {
      return h("p", { "data-stowage-plot": "empty" }, "No request recorded for this session yet.");
    }
    var W = 760, H = 240, L = 64, R = 12, T = 12, B = 28;
    var max = 1;
    requests.forEach(function (r) { max = Math.max(max, r.full || 0, r.sent || 0); });
    function x(i) { return L + (requests.length === 1 ? 0 : i * (W - L - R) / (requests.length - 1)); }
    function y(v) { return T + (H - T - B) * (1 - (v || 0) / max); }
    function line(key) { return requests.map(function (r, i) { return x(i).toFixed(1) + "," + y(r[key]).toFixed(1); }).join(" "); }
    function indexAt(t) {
      var idx = 0;
      requests.forEach(function (r, i) { if ((r.at || 0) <= t) idx = i; });
      return idx;
    }
    var marks = [];
    compactions.forEach(function (c, k) {
      if (c.result !== "compacted" && c.result !== "fallback") return;
      var cx = x(indexAt(c.at || 0));
      marks.push(h("line", { key: "c" + k, x1: cx, x2: cx, y1: T, y2: H - B, stroke: "#d9534f", strokeDasharray: "4 3",
        "data-event": "compaction" }, h("title", null, "compaction: " + fmt(c.tokens_before) + " -> " + fmt(c.tokens_after) + " tokens (" + c.result + ")")));
    });
    spills.forEach(function (s, k) {
      marks.push(h("circle", { key: "s" + k, cx: x(indexAt(s.at || 0)), cy: H - B - 4, r: 4, fill: "#f0ad4e",
        "data-event": "spill" }, h("title", null, "spill " + s.handle + " (" + s.tool + ", " + fmt(s.tokens) + " tokens)")));
    });
    return h("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, "data-stowage-plot": "timeline",
        "data-requests": requests.length, role: "img", "aria-label": "tokens per request" },
      h("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "currentColor", strokeOpacity: 0.4 }),
      h("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "currentColor", strokeOpacity: 0.4 }),
      h("text", { x: L - 6, y: T + 10, textAnchor: "end", fontSize: 11, fill: "currentColor" }, fmt(max)),
      h("text", { x: L - 6, y: H - B, textAnchor: "end", fontSize: 11, fill: "currentColor" }, "0"),
      h("text", { x: W - R, y: H - 8, textAnchor: "end", fontSize: 11, fill: "currentColor" }, requests.length + " requests"),
      h("polyline", { points: line("full"), fill: "none", stroke: "#8a8f98", strokeWidth: 2, "data-series": "full" }),
      h("polyline", { points: line("sent"), fill: "none", stroke: "#2b8a3e", strokeWidth: 2, "data-series": "sent" }),
      marks);
  }

  function Legend() {
    return h("p", { style: { fontSize: 12, opacity: 0.8 } },
      h("span", { style: { color: "#8a8f98" } }, "\u25A0 full history  "),
      h("span", { style: { color: "#2b8a3e" } }, "\u25A0 sent by Stowage  "),
      h("span", { style: { color: "#d9534f" } }, "\u2506 compaction  "),
      h("span", { style: { color: "#f0ad4e" } }, "\u25CF spill"));
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
    var view = data.status.view || {};
    return h("div", { "data-stowage-session": data.session_id },
      h("h3", { style: { fontWeight: 600 } }, "Session " + data.session_id),
      h("p", { "data-stowage-totals": "" }, fmt(view.tokens_saved) + " tokens saved over " + fmt(view.requests) +
        " request(s); " + fmt(data.status.compression_count) + " compaction(s); " +
        fmt((data.status.store || {}).spills) + " spill(s)"),
      h(Timeline, { status: data.status }), h(Legend),
      h("table", { style: { fontSize: 13 } }, h("tbody", null, data.rows.map(function (row, i) {
        return h("tr", { key: i }, h("td", { style: { paddingRight: 16, opacity: 0.7, verticalAlign: "top" } }, row[0]),
          h("td", null, row[1]));
      }))));
  }

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
    function read(handle, start) {
      SDK.fetchJSON(API + "/blobs/" + encodeURIComponent(handle) + "?start=" + (start || 1) + "&count=60")
        .then(setOpened).catch(function (e) { setError(errorText(e)); });
    }
    function remove(handle) {
      if (!window.confirm("Delete " + handle + "? A tombstone stays; the bytes are gone.")) return;
      SDK.fetchJSON(API + "/blobs/" + encodeURIComponent(handle), { method: "DELETE" })
        .then(function () { setOpened(null); load(); }).catch(function (e) { setError(errorText(e)); });
    }
    function field(key, placeholder) {
      return h(Input, { value: filter[key], placeholder: placeholder, style: { maxWidth: 220 },
        onChange: function (e) { var next = Object.assign({}, filter); next[key] = e.target.value; setFilter(next); } });
    }
    return h("div", { "data-stowage-store": "" },
      h("h3", { style: { fontWeight: 600, marginTop: 16 } }, "Store browser"),
      h("div", { style: { display: "flex", gap: 8, margin: "8px 0" } },
        field("session", "session id"), field("tool", "tool name"), field("q", "search tool, arguments, handle")),
      error ? h("p", { className: "text-destructive" }, error) : null,
      rows === null ? h("p", null, "Loading\u2026") :
        h("table", { style: { fontSize: 13, width: "100%" } },
          h("thead", null, h("tr", null, ["handle", "tool", "arguments", "session", "kind", "size", ""].map(function (t) {
            return h("th", { key: t, style: { textAlign: "left" } }, t);
          }))),
          h("tbody", null, rows.map(function (b) {
            return h("tr", { key: b.handle, "data-handle": b.handle },
              h("td", { style: { fontFamily: "monospace" } }, b.handle), h("td", null, b.tool),
              h("td", { style: { maxWidth: 260, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" } }, b.args),
              h("td", null, b.session_id || ""), h("td", null, b.kind), h("td", null, size(b.size)),
              h("td", null, h(Button, { size: "sm", onClick: function () { read(b.handle, 1); } }, "read"), " ",
                h(Button, { size: "sm", onClick: function () { remove(b.handle); } }, "delete")));
          }))),
      opened ? h("div", { "data-stowage-excerpt": opened.handle, style: { marginTop: 8 } },
        h("p", null, opened.handle + ": " + fmt(opened.lines) + " lines, " + size(opened.size) +
          (opened.binary ? " (binary: not shown)" : ", lines " + opened.start + "\u2013" + (opened.start + 59))),
        h("pre", { style: { maxHeight: 320, overflow: "auto", fontSize: 12, whiteSpace: "pre-wrap" } }, opened.text),
        opened.binary ? null : h("div", { style: { display: "flex", gap: 8 } },
          h(Button, { size: "sm", onClick: function () { read(opened.handle, Math.max(1, opened.start - 60)); } }, "previous"),
          h(Button, { size: "sm", onClick: function () { read(opened.handle, opened.start + 60); } }, "next"))) : null);
  }

  function StowagePage() {
    var ss = hooks.useState(null), list = ss[0], setList = ss[1];
    var sel = hooks.useState(""), selected = sel[0], setSelected = sel[1];
    var es = hooks.useState(""), error = es[0], setError = es[1];
    hooks.useEffect(function () {
      SDK.fetchJSON(API + "/sessions").then(function (d) {
        setList(d);
        if (d.sessions.length) setSelected(d.sessions[0].session_id);
      }).catch(function (e) { setError(errorText(e)); });
    }, []);
    var body;
    if (error) body = h("p", { className: "text-destructive" }, error);
    else if (!list) body = h("p", null, "Loading\u2026");
    else body = h("div", null,
      h("p", { style: { fontSize: 12, opacity: 0.7 } }, "Store: " + list.store),
      list.sessions.length ? h("div", { style: { display: "flex", gap: 8, flexWrap: "wrap", margin: "8px 0" } },
        list.sessions.map(function (s) {
          return h(Button, { key: s.session_id, size: "sm", variant: s.session_id === selected ? "default" : "outline",
            onClick: function () { setSelected(s.session_id); }, "data-session-button": s.session_id },
            s.session_id + " (" + fmt(s.tokens_saved) + " saved)");
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
