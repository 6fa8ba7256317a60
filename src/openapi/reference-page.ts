/**
 * The /docs page: Scalar's API reference (npm `@scalar/api-reference`, MIT), a well-kept OpenAPI
 * renderer with request samples and a try-it console, drawn from our own /v1/openapi.json.
 *
 * Its standalone browser bundle is imported as text, so it is part of the module graph: nothing
 * reads a file at run time (Deno Deploy), and the page loads nothing from another origin. The
 * package's `exports` do not list the bundle, hence the path under node_modules (the project's
 * `nodeModulesDir` is "auto", so `deno install` puts it there). The configuration turns off
 * everything that would call Scalar's servers: web fonts, telemetry, the hosted client button,
 * the AI agent, and the request proxy (try-it calls this origin directly).
 */
import SCALAR_STANDALONE from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "text",
};

/** The bundle's version, in its URL so browsers may cache it for good. */
export const SCALAR_VERSION = "1.72.1";
export const BUNDLE_PATH = `/docs/scalar-${SCALAR_VERSION}.js`;
export const INIT_PATH = "/docs/init.js";

/** Without its source-map comment: the map is not served, and a 404 for it is noise. */
export const BUNDLE_JS = SCALAR_STANDALONE.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Token-Creation Transaction Builder</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The reference needs JavaScript; the document itself is
<a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="app"></div>
<script src="${BUNDLE_PATH}"></script>
<script src="${INIT_PATH}"></script>
</body>
</html>
`;

const CONFIG = {
  url: "/v1/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  // Every operation open, so its fields show without a click.
  defaultOpenAllTags: true,
  orderRequiredPropertiesFirst: true,
  // Only our own samples (curl and TypeScript, from x-codeSamples).
  hiddenClients: true,
  documentDownloadType: "json",
  persistAuth: false,
  // The headings' hover-only "copy link" button sits past the right edge on a phone and made
  // the page scroll sideways; there is no hover on a phone anyway.
  customCss: "@media (max-width: 600px) { .group\\/heading button.absolute { display: none; } }",
  authentication: { preferredSecurityScheme: "bearerAuth" },
};

export const INIT_JS =
  `// Scalar's API reference over /v1/openapi.json; see src/openapi/reference-page.ts.
const config = ${JSON.stringify(CONFIG, null, 2)};
config.servers = [{ url: location.origin, description: "this service" }];
Scalar.createApiReference("#app", config);
`;
