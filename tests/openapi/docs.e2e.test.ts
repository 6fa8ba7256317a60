/**
 * /docs in a real browser (Debian's headless Chromium through playwright-core): Swagger UI over
 * our own OpenAPI document lists every request-body field of every operation by name, with its
 * curl sample, calls nothing but this origin, logs no console error, and its try-it console
 * reaches the service.
 * Needs Chromium at /usr/bin/chromium (or $CHROMIUM_PATH): `apt-get update && apt-get install -y chromium`.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { assert, assertEquals } from "../support/assert.ts";
import { type Harness, startHarness } from "../support/harness.ts";

const CHROMIUM = [Deno.env.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((p) => {
    try {
      return !!p && Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });
if (!CHROMIUM) {
  console.warn(
    "SKIPPED /docs e2e: no Chromium at /usr/bin/chromium, /usr/bin/chromium-browser or " +
      "$CHROMIUM_PATH. Install it with: apt-get update && apt-get install -y chromium",
  );
}

// deno-lint-ignore no-explicit-any
type Json = any;

interface Opened {
  h: Harness;
  base: string;
  browser: Browser;
  page: Page;
  /** Console errors and warnings, page errors, failed or 4xx/5xx loads, calls to other origins. */
  problems: string[];
  close(): Promise<void>;
}

async function openDocs(width: number): Promise<Opened> {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const base = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM!,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  // Headless Chromium without a GPU draws the whole expanded reference in tens of seconds on a
  // shared 2-core machine; playwright's 30 s default would make the result depend on its load.
  page.setDefaultTimeout(120_000);
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    if (!r.url().startsWith(base + "/") && !r.url().startsWith("data:")) {
      problems.push(`request to another origin: ${r.url()}`);
    }
  });
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(`${base}/docs`);
  return {
    h,
    base,
    browser,
    page,
    problems,
    async close() {
      await browser.close();
      await server.shutdown();
      await h.close();
    },
  };
}

/** Every request body's top-level member names, by "METHOD /path". */
function requestBodyFields(doc: Json): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      let schema = op.requestBody?.content?.["application/json"]?.schema;
      if (!schema) continue;
      if (schema.$ref) schema = doc.components.schemas[schema.$ref.split("/").at(-1)];
      out.set(`${method.toUpperCase()} ${path}`, Object.keys(schema.properties));
    }
  }
  return out;
}

/** One operation's block: its method and its path as the reference draws them. */
const operation = (page: Page, method: string, path: string) =>
  page.locator(".opblock")
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) })
    .filter({ has: page.locator(".opblock-summary-method", { hasText: method.toUpperCase() }) })
    .first();

/** The names the request body's schema view shows as its top-level members' titles. */
const BODY_FIELDS = ".opblock-section-request-body " +
  'article[data-json-schema-level="1"] > .json-schema-2020-12-head .json-schema-2020-12__title';

/** One operation's text and request-body field names, once the reference has drawn them. */
async function operationText(
  page: Page,
  method: string,
  path: string,
  want: string[],
  wantText = "",
) {
  const section = operation(page, method, path);
  // The reference lists operations closed (docExpansion "list"): open this one as a reader would.
  if (want.length) await openOperation(section);
  let text = "";
  let fields = new Set<string>();
  // A generous bound, only so a missing field fails instead of hanging.
  for (let i = 0; i < 120; i++) {
    await section.scrollIntoViewIfNeeded();
    text = await section.innerText();
    fields = new Set((await section.locator(BODY_FIELDS).allInnerTexts()).map((t) => t.trim()));
    if (want.every((f) => fields.has(f)) && text.includes(wantText)) break;
    await page.waitForTimeout(250);
  }
  return { text, fields };
}

/** Opens an operation's block by its summary, unless it is open already. */
async function openOperation(section: ReturnType<typeof operation>) {
  await section.scrollIntoViewIfNeeded();
  if ((await section.getAttribute("class"))?.includes("is-open")) return;
  await section.locator(".opblock-summary").first().click();
}

Deno.test({
  name:
    "/docs lists every operation's request-body fields by name, with samples, from this origin only, with no console error",
  ignore: !CHROMIUM,
  async fn() {
    const o = await openDocs(1280);
    try {
      const doc = await (await fetch(`${o.base}/v1/openapi.json`)).json();
      const bodies = requestBodyFields(doc);
      // The contract's three POSTs at least; every operation with a body is checked below.
      for (const op of ["POST /v1/metadata", "POST /v1/tokens", "POST /v1/transactions"]) {
        assert(bodies.has(op), `${op} has no request body in the document`);
      }
      for (const [op, fields] of bodies) {
        const [method, path] = op.split(" ");
        const { text, fields: shown } = await operationText(o.page, method, path, fields);
        const missing = fields.filter((f) => !shown.has(f));
        assertEquals(missing, [], `${op}: fields not listed by name`);
        assert(!text.includes("[object "), `${op} renders an object as text`);
        // The request sample (our x-codeSamples' curl, in the description) is shown.
        assert(text.includes(`curl -X ${method}`), `${op}: no curl sample`);
      }
      // Every operation is drawn, with its summary.
      for (const [path, item] of Object.entries<Json>(doc.paths)) {
        for (const [method, op] of Object.entries<Json>(item)) {
          // Sections further down are drawn lazily: wait for this one's summary.
          const { text } = await operationText(o.page, method.toUpperCase(), path, [], op.summary);
          assert(text.includes(op.summary), `${method} ${path}: summary "${op.summary}" missing`);
        }
      }
      await Deno.mkdir(new URL("../../artifacts/docs/", import.meta.url), { recursive: true });
      await o.page.screenshot({
        path: new URL("../../artifacts/docs/desktop.png", import.meta.url).pathname,
      });
      assertEquals(o.problems, []);
    } finally {
      await o.close();
    }
  },
});

Deno.test({
  name: "/docs try-it sends a request to the running service and shows its answer",
  ignore: !CHROMIUM,
  async fn() {
    const o = await openDocs(1280);
    try {
      const section = operation(o.page, "GET", "/v1/pricing");
      await openOperation(section);
      await section.getByRole("button", { name: "Try it out" }).click();
      await section.getByRole("button", { name: "Execute" }).click();
      // The live answer, not the documented example: its request URL names this origin.
      await section.locator(".request-url", { hasText: `${o.base}/v1/pricing` }).waitFor();
      const live = section.locator(".live-responses-table");
      await live.locator(".response-col_status", { hasText: "200" }).first().waitFor();
      await live.locator(".response-col_description", { hasText: '"hostedItemsPerKey"' }).waitFor();
      assertEquals(o.problems, []);
    } finally {
      await o.close();
    }
  },
});

Deno.test({
  name: "/docs at 360 px: no sideways scrolling, the samples fit",
  ignore: !CHROMIUM,
  async fn() {
    const o = await openDocs(360);
    try {
      await operationText(o.page, "POST", "/v1/tokens", ["payer"]);
      const overflow = await o.page.evaluate<number>(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      assert(overflow <= 0, `the page scrolls sideways by ${overflow} px at 360 px`);
      await o.page.screenshot({
        path: new URL("../../artifacts/docs/phone.png", import.meta.url).pathname,
      });
      assertEquals(o.problems, []);
    } finally {
      await o.close();
    }
  },
});
