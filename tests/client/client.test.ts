/**
 * The typed client under client/: generated from the served document (fails while stale), and
 * working against the real app on the embedded chain.
 */
import { createClient } from "../../client/mod.ts";
import { clientDocumentJson } from "../../src/cli/openapi-json.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";

const ROOT = new URL("../../", import.meta.url);
const STALE = "client/ is stale: run `deno task client:generate` and commit the result";

Deno.test("client/openapi.json and client/schema.d.ts are what the generator makes from the current document", async () => {
  const committedDoc = await Deno.readTextFile(new URL("client/openapi.json", ROOT));
  assertEquals(committedDoc, clientDocumentJson(), STALE);

  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/openapi.json`, clientDocumentJson());
    // The task's second step, exactly (deno.json "client:generate"), writing into `dir`.
    const task: string = JSON.parse(
      await Deno.readTextFile(new URL("deno.json", ROOT)),
    ).tasks["client:generate"];
    const args = task.split("&&")[1].trim().split(/\s+/).slice(1).map((a) =>
      a.startsWith("client/") ? `${dir}/${a.slice("client/".length)}` : a
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: ROOT.pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr).slice(-2000));
    const fresh = await Deno.readTextFile(`${dir}/schema.d.ts`);
    const committed = await Deno.readTextFile(new URL("client/schema.d.ts", ROOT));
    assert(committed === fresh, STALE);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the typed client reads pricing, health and the build list, and registers a webhook, against the real app", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const fetch = (req: Request) => Promise.resolve(h.app.fetch(req));
    const publicApi = createClient({ baseUrl: h.base, fetch });
    const api = createClient({ baseUrl: h.base, apiKey, fetch });

    const pricing = await publicApi.GET("/v1/pricing");
    assertEquals(pricing.response.status, 200);
    assertEquals(pricing.data?.network, "localnet");
    const health = await publicApi.GET("/v1/health");
    assertEquals(health.data?.status, "ready");

    const list = await api.GET("/v1/tokens", { params: { query: { limit: 5 } } });
    assertEquals(list.data, { items: [], nextCursor: null });
    const bad = await api.GET("/v1/tokens", { params: { query: { limit: 500 } } });
    assertEquals(bad.response.status, 400);
    assertEquals(Object.keys(bad.error?.error.fields ?? {}), ["limit"]);
    const unauth = await publicApi.GET("/v1/me");
    assertEquals(unauth.error?.error.code, "unauthorized");

    const hook = await api.POST("/v1/webhooks", {
      body: { url: "https://hooks.example.com/tokens", events: ["token.confirmed"] },
    });
    assertEquals(hook.response.status, 201);
    assert(hook.data?.secret.startsWith("whsec_"));
    const hooks = await api.GET("/v1/webhooks");
    assertEquals(hooks.data?.items.map((i) => i.id), [hook.data!.id]);
  } finally {
    await h.close();
  }
});
