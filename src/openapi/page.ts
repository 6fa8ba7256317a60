/**
 * The /docs page: a small renderer for our own OpenAPI document. Everything it draws goes in
 * through textContent, never as markup, so nothing in the document can inject script.
 */

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="/docs/docs.css">
<script type="module" src="/docs/docs.js"></script>
</head>
<body>
<header><h1 id="title">API reference</h1><p id="version"></p></header>
<nav id="toc" aria-label="Endpoints"></nav>
<main id="content"><p>Loading <a href="/v1/openapi.json">/v1/openapi.json</a>…</p></main>
</body>
</html>
`;

export const DOCS_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #5b6570; --line: #d8dee4; --bg2: #f4f6f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9aa5b1; --line: #30363d; --bg2: #161b22; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); max-width: 960px; margin: 0 auto; padding: 1rem; }
header p, .muted { color: var(--muted); }
nav ul { list-style: none; padding: 0; columns: 2; }
section.op { border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem 1rem; margin: 1rem 0; }
h2 { margin-top: 2rem; }
h3 { margin: 0 0 0.5rem; font-size: 1.05rem; }
.method { display: inline-block; min-width: 3.5rem; font: 600 0.8rem monospace; text-transform: uppercase; padding: 0.1rem 0.4rem; border-radius: 4px; background: var(--bg2); margin-right: 0.5rem; }
.method.get { color: #0969da; } .method.post { color: #1a7f37; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.85rem; }
pre { background: var(--bg2); padding: 0.5rem; border-radius: 6px; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; }
th, td { text-align: left; border-bottom: 1px solid var(--line); padding: 0.25rem 0.5rem; vertical-align: top; }
.req { color: #cf222e; font-size: 0.75rem; }
p.desc { white-space: pre-line; }
`;

export const DOCS_JS = `
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
};

let doc;
const resolve = (s) => {
  let seen = 0;
  while (s && s.$ref && seen++ < 20) {
    if (!s.$ref.startsWith("#/")) return {};
    s = s.$ref.slice(2).split("/").reduce((o, k) => (o ? o[k.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), doc);
  }
  return s || {};
};
const refName = (s) => (s && s.$ref ? s.$ref.split("/").pop() : null);

function typeOf(s) {
  s = resolve(s);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" | ");
  if (s.type === "array") return typeOf(s.items || {}) + "[]";
  if (Array.isArray(s.type)) return s.type.join(" | ");
  return s.type || "any";
}

function rules(s) {
  const out = [];
  for (const k of ["minLength", "maxLength", "minimum", "maximum", "maxItems", "pattern", "format"]) {
    if (s[k] !== undefined && !(k === "minimum" && s[k] < -1e15) && !(k === "maximum" && s[k] > 1e15)) out.push(k + " " + s[k]);
  }
  if (s.default !== undefined) out.push("default " + JSON.stringify(s.default));
  return out.join(", ");
}

function fieldRows(schema, prefix, rows) {
  const s = resolve(schema);
  const req = new Set(s.required || []);
  for (const [name, raw] of Object.entries(s.properties || {})) {
    const p = resolve(raw);
    const nullable = p.anyOf && p.anyOf.some((x) => resolve(x).type === "null");
    const inner = p.anyOf ? resolve(p.anyOf.find((x) => resolve(x).type !== "null") || {}) : p;
    rows.push(el("tr", {},
      el("td", {}, el("code", {}, prefix + name), req.has(name) ? el("span", { class: "req" }, " required") : null),
      el("td", {}, el("code", {}, typeOf(p))),
      el("td", {}, [p.description || inner.description || "", rules(inner)].filter(Boolean).join(" — ") + (nullable ? " (may be null)" : ""))));
    if (inner.type === "object" && inner.properties) fieldRows(inner, prefix + name + ".", rows);
    if (inner.type === "array" && resolve(inner.items).properties) fieldRows(inner.items, prefix + name + "[].", rows);
  }
  return rows;
}

function schemaBlock(schema) {
  const s = resolve(schema);
  const parts = [];
  if (s.description) parts.push(el("p", { class: "desc" }, s.description));
  if (s.oneOf) parts.push(el("p", { class: "muted" }, "Exactly one of: " + s.oneOf.map((o) => (o.required || []).join(" + ")).join(", ")));
  const rows = fieldRows(s, "", []);
  if (rows.length) parts.push(el("table", {}, el("tr", {}, el("th", {}, "Field"), el("th", {}, "Type"), el("th", {}, "Notes")), rows));
  return parts;
}

function operation(path, method, op) {
  const id = op.operationId || method + path;
  const sec = el("section", { class: "op", id });
  sec.append(el("h3", {}, el("span", { class: "method " + method }, method), el("code", {}, path)));
  if (op.summary) sec.append(el("p", {}, el("strong", {}, op.summary)));
  if (op.description) sec.append(el("p", { class: "desc" }, op.description));
  const secReq = op.security ? op.security.length > 0 : (doc.security || []).length > 0;
  sec.append(el("p", { class: "muted" }, secReq ? "Requires Authorization: Bearer <API key>" : "No key needed"));
  const params = (op.parameters || []).map(resolve);
  if (params.length) {
    sec.append(el("h4", {}, "Parameters"), el("table", {},
      el("tr", {}, el("th", {}, "Name"), el("th", {}, "In"), el("th", {}, "Notes")),
      params.map((p) => el("tr", {}, el("td", {}, el("code", {}, p.name), p.required ? el("span", { class: "req" }, " required") : null), el("td", {}, p.in), el("td", {}, p.description || "")))));
  }
  if (op.requestBody) {
    const media = op.requestBody.content["application/json"];
    sec.append(el("h4", {}, "Request body ", el("code", {}, refName(media.schema) || "")), schemaBlock(media.schema));
    if (media.example) sec.append(el("pre", {}, JSON.stringify(media.example, null, 2)));
  }
  sec.append(el("h4", {}, "Responses"));
  const rows = [];
  for (const [status, raw] of Object.entries(op.responses || {})) {
    const r = resolve(raw);
    const media = r.content && r.content["application/json"];
    const name = media ? refName(media.schema) : null;
    const examples = media && media.examples ? Object.keys(media.examples).join(", ") : "";
    rows.push(el("tr", {}, el("td", {}, el("code", {}, status)), el("td", {}, r.description || ""),
      el("td", {}, name ? el("a", { href: "#schema-" + name }, name) : "", examples ? el("div", { class: "muted" }, examples) : null)));
  }
  sec.append(el("table", {}, el("tr", {}, el("th", {}, "Status"), el("th", {}, "Meaning"), el("th", {}, "Body")), rows));
  return sec;
}

async function main() {
  const res = await fetch("/v1/openapi.json");
  doc = await res.json();
  document.getElementById("title").textContent = doc.info.title;
  document.title = doc.info.title;
  document.getElementById("version").textContent = "Version " + doc.info.version + " · OpenAPI " + doc.openapi + " · " + (doc.servers || []).map((s) => s.url).join(", ");
  const content = document.getElementById("content");
  content.replaceChildren(el("p", { class: "desc" }, doc.info.description || ""));
  const toc = el("ul");
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      if (!item[method]) continue;
      const op = item[method];
      toc.append(el("li", {}, el("a", { href: "#" + op.operationId }, method.toUpperCase() + " " + path)));
      content.append(operation(path, method, op));
    }
  }
  document.getElementById("toc").replaceChildren(toc);
  const codes = resolve(doc.components.schemas.Error).properties.error.properties.code.enum || [];
  content.append(el("h2", {}, "Error codes"), el("p", {}, "Every error has the body of the ", el("a", { href: "#schema-Error" }, "Error"), " schema; code is one of:"),
    el("ul", {}, codes.map((c) => el("li", {}, el("code", {}, c)))));
  content.append(el("h2", {}, "Schemas"));
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    content.append(el("section", { class: "op", id: "schema-" + name }, el("h3", {}, name), schemaBlock(s)));
  }
}

main().catch((e) => {
  document.getElementById("content").replaceChildren(el("p", {}, "Could not load the API description: " + e.message));
});
`;
