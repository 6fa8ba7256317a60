/**
 * The /docs page: Swagger UI (npm `swagger-ui-dist`, Apache-2.0), the OpenAPI renderer with a
 * try-it console ("Try it out"), drawn from our own /v1/openapi.json. The package is its
 * prebuilt browser bundle and stylesheet, so installing it brings no front-end framework's build
 * tree (its one dependency is a tiny install-analytics script, which never runs: `deno.json`
 * denies its build script).
 *
 * Bundle and stylesheet are imported as text, so they are part of the module graph: nothing
 * reads a file at run time (Deno Deploy), a start installs the package with the rest of the
 * graph, and the page loads nothing from another origin. The start-up script turns off
 * the one thing that would call another server (the public validator badge), points try-it at
 * this origin, and shows each operation's curl and TypeScript samples (x-codeSamples, which
 * Swagger UI does not draw itself) in its description.
 */
import BUNDLE from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import CSS from "swagger-ui-dist/swagger-ui.css" with { type: "text" };

/** The renderer's version, in its URLs so browsers may cache them for good. */
export const SWAGGER_UI_VERSION = "5.35.0";
export const BUNDLE_PATH = `/docs/swagger-ui-${SWAGGER_UI_VERSION}.js`;
export const CSS_PATH = `/docs/swagger-ui-${SWAGGER_UI_VERSION}.css`;
export const INIT_PATH = "/docs/init.js";

/** Without source-map comments: the maps are not served, and a 404 for one is noise. */
const noSourceMap = (text: string) => text.replace(/\n?\/[/*]# sourceMappingURL=\S+\s*$/, "\n");
export const BUNDLE_JS = noSourceMap(BUNDLE);
/**
 * On a phone: the parameter, response and header tables become one column (three columns of
 * 360 px clipped the schemas), and long paths and code wrap instead of widening the page.
 */
export const BUNDLE_CSS = noSourceMap(CSS) + `
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 8px; }
  .swagger-ui .info .title { font-size: 24px; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-path { max-width: 100%; word-break: break-all; }
  .swagger-ui .markdown pre, .swagger-ui .renderedMarkdown pre { white-space: pre-wrap; word-break: break-all; }
  .swagger-ui table thead, .swagger-ui .response-col_links { display: none; }
  .swagger-ui table, .swagger-ui table tbody, .swagger-ui table tr, .swagger-ui table td { display: block; width: auto !important; max-width: 100% !important; padding-left: 0; }
  .swagger-ui .model-box, .swagger-ui .highlight-code { max-width: 100%; overflow-x: auto; }
  .swagger-ui select { min-width: 10em; max-width: 100%; }
}
`;

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Token-Creation Transaction Builder</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${CSS_PATH}">
</head>
<body>
<noscript>The reference needs JavaScript; the document itself is
<a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${BUNDLE_PATH}"></script>
<script src="${INIT_PATH}"></script>
</body>
</html>
`;

const CONFIG = {
  dom_id: "#swagger-ui",
  // No badge from the public validator (a call to another origin).
  validatorUrl: null,
  deepLinking: true,
  // The operations listed, each opened by a click or its link (deepLinking), showing its request
  // body's fields (the schema, not only an example): all of them open at once made a phone draw
  // the whole document before the first one could be read.
  docExpansion: "list",
  defaultModelRendering: "model",
  defaultModelExpandDepth: 1,
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  persistAuthorization: false,
  filter: true,
};

export const INIT_JS = `// Swagger UI over /v1/openapi.json; see src/openapi/reference-page.ts.
const config = ${JSON.stringify(CONFIG, null, 2)};
// Each operation's samples (x-codeSamples) as code in its description.
function withSamples(op) {
  const samples = (op["x-codeSamples"] || []).map((s) =>
    "**" + s.label + "**\\n\\n\`\`\`" + s.lang + "\\n" + s.source + "\\n\`\`\`");
  if (samples.length) op.description = [op.description || "", ...samples].join("\\n\\n");
}
fetch("/v1/openapi.json").then((r) => r.json()).then((spec) => {
  // Try-it calls this origin, the only one the page's CSP lets it reach.
  spec.servers = [{ url: location.origin, description: "this service" }];
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item)) if (op && typeof op === "object") withSamples(op);
  }
  window.ui = SwaggerUIBundle({ ...config, spec });
});
`;
