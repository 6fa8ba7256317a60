/**
 * The contract as a tool we did not write reads it: Portman (@apideck/portman) turns the served
 * /v1/openapi.json into a Postman collection with its own contract tests (status, content type,
 * JSON body, the response's JSON Schema, the required headers) plus the variations in
 * ./portman-config.json (every keyed operation without a key: 401; the document's path examples:
 * 404; fuzzed bodies: 400; each with the Error schema), and newman runs it against `src/main.ts`
 * on the embedded chain, started as `task start` starts it, with a key bought through the real
 * portal flow (`dev:key`'s).
 *
 * Setup makes what no static document can hold: a funded payer, a webhook with a delivery (a
 * confirmed creation, whose mint the update operations change), and a build signed by its payer
 * for POST /v1/transactions (newman cannot sign ed25519). Everything else comes from the
 * document's own examples and from the responses newman chains (hosted metadataUri -> build ->
 * mint; submitted signature -> verification; built update -> its record).
 * docs/contract-suite.md says how to run it alone and what it covers.
 *
 * The tools run through npx at pinned versions; when npx cannot fetch them the test fails, it does
 * not skip. Portman 1.33.0 requires tslib without declaring it, hence the third package.
 */
import { Keypair, Transaction } from "@solana/web3.js";
import { Buffer } from "node:buffer";
import { assert, assertEquals } from "../support/assert.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { makeDevKey } from "../../src/cli/make-dev-key.ts";

export const TOOLS = ["tslib@2.8.1", "@apideck/portman@1.33.0", "newman@6.2.2"];
const CONFIG = new URL("./portman-config.json", import.meta.url).pathname;

/**
 * Assertions the suite may fail, by Portman's test name, with the reason. Empty: the one
 * operation that needs a payer's signature (POST /v1/transactions) gets one from setup.
 */
export const EXCLUDED: Record<string, string> = {};

type Json = Record<string, unknown>;

/** Runs one of the pinned tools through npx; a failure to start it is the test's failure. */
async function npx(bin: string, args: string[], cwd: string) {
  const out = await new Deno.Command("npx", {
    args: ["-y", ...TOOLS.flatMap((p) => ["-p", p]), bin, ...args],
    cwd,
    env: { NO_COLOR: "1", npm_config_update_notifier: "false", npm_config_fund: "false" },
    stdout: "piped",
    stderr: "piped",
  }).output().catch((e) => {
    throw new Error(`npx could not be started (Node.js and npm are needed): ${e}`);
  });
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

interface Api {
  call(method: string, path: string, body?: unknown): Promise<Json>;
}

function api(base: string, key: string): Api {
  return {
    async call(method, path, body) {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
  };
}

const signed = (tx: string, payer: Keypair) => {
  const t = Transaction.from(Buffer.from(tx, "base64"));
  t.partialSign(payer);
  return t.serialize().toString("base64");
};

async function until<T>(what: string, fn: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await fn();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** What the collection needs beside the document: a funded payer, a delivery, a signed build. */
async function setUp(a: Api, payer: Keypair) {
  const webhook = await a.call("POST", "/v1/webhooks", {
    url: "https://example.com/hooks/contract-setup",
    events: ["token.confirmed"],
  });
  const { metadataUri } = await a.call("POST", "/v1/metadata", {
    name: "Contract Setup",
    symbol: "CSET",
    imageBase64:
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4XmP4PlnqPwAGzQKkHBC0ZQAAAABJRU5ErkJggg==",
  });
  const build = () =>
    a.call("POST", "/v1/tokens", {
      payer: payer.publicKey.toBase58(),
      name: "Contract Setup",
      symbol: "CSET",
      metadataUri,
      supply: "1000",
      decimals: 0,
    });
  const first = await build();
  const { signature } = await a.call("POST", "/v1/transactions", {
    transaction: signed(first.transaction as string, payer),
  });
  await until("the setup creation to confirm", async () => {
    const v = await a.call("GET", `/v1/transactions/${signature}`);
    assert(v.status === "pending" || v.status === "confirmed", JSON.stringify(v));
    return v.status === "confirmed" ? v : null;
  });
  const deliveryId = await until("the setup webhook's delivery", async () => {
    const { items } = await a.call("GET", `/v1/webhooks/${webhook.id}/deliveries`);
    return (items as Json[])[0]?.id as string ?? null;
  });
  // Signed now, submitted by newman's POST /v1/transactions well inside its 60 s.
  const second = await build();
  return {
    webhookId: webhook.id as string,
    deliveryId,
    // A token on the chain, its payer the authority: POST /v1/tokens/{mint}/update needs one.
    landedMint: first.mint as string,
    signedTransaction: signed(second.transaction as string, payer),
  };
}

/** Each path parameter's example in the document, as example.<name>: the 404 variations use them. */
export function examples(doc: { paths: Record<string, Record<string, Json>> }) {
  const out: Record<string, string> = {};
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === "path") out[`example.${p.name}`] = p.example as string;
      }
    }
  }
  return out;
}

interface PmItem {
  id: string;
  name: string;
  item?: PmItem[];
  request?: { method: string; url: { path: string[] }; body?: { raw?: string } };
}

/**
 * Portman's fuzzer also "fuzzes" members the example body does not have (supplyRaw beside
 * supply, imageUrl beside imageBase64, the members of an absent transferFee, a required inside
 * an if), sending the valid body unchanged and expecting a 400. Those requests test nothing but
 * would build tokens against the day's limit: they are dropped, and counted.
 */
const leaves = (items: PmItem[]): PmItem[] => items.flatMap((i) => i.item ? leaves(i.item) : [i]);

export function dropUnchangedFuzz(collection: { item: PmItem[] }): number {
  const id = (i: PmItem) => `${i.request!.method} ${i.request!.url.path.join("/")}`;
  const body = (i: PmItem) => {
    const raw = i.request?.body?.raw;
    return raw ? JSON.stringify(JSON.parse(raw)) : "";
  };
  const main = new Map(
    leaves(collection.item).filter((i) => !i.name.includes("[")).map((i) => [id(i), body(i)]),
  );
  let dropped = 0;
  const prune = (items: PmItem[]): PmItem[] =>
    items.flatMap((i) => {
      if (i.item) return [{ ...i, item: prune(i.item) }];
      const unchanged = i.name.includes("[fuzzed]") && body(i) === main.get(id(i));
      if (unchanged) dropped++;
      return unchanged ? [] : [i];
    });
  collection.item = prune(collection.item);
  return dropped;
}

interface Assertion {
  assertion: string;
  error?: { message: string };
}
interface Execution {
  item: { id: string; name: string };
  request: { method: string; url: { path: string[] } };
  response?: { code: number; stream?: { data: number[] } };
  requestError?: { message: string };
  assertions?: Assertion[];
}

/** Every failed assertion and request error of newman's JSON report, one line each. */
export function failures(report: { run: { executions: Execution[] } }): string[] {
  const out: string[] = [];
  for (const e of report.run.executions) {
    const where = `${e.request.method} /${e.request.url.path.join("/")} (${e.item.name})`;
    if (e.requestError) out.push(`${where}: request error ${e.requestError.message}`);
    for (const a of e.assertions ?? []) {
      if (!a.error || a.assertion in EXCLUDED) continue;
      const body = e.response?.stream
        ? new TextDecoder().decode(new Uint8Array(e.response.stream.data)).slice(0, 400)
        : "";
      out.push(`${where}: ${a.assertion}: ${a.error.message} [${e.response?.code}] ${body}`);
    }
  }
  return out;
}

Deno.test("Portman + newman: the suite generated from /v1/openapi.json passes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-contract-" });
  const dataDir = `${dir}/data`;
  const service = await startServiceProcess({ dataDir, env: { CHAIN_PORT: "0" } });
  try {
    assert(service.chainUrl, "the service runs the embedded chain");
    const doc = await (await fetch(`${service.url}/v1/openapi.json`)).json();
    await Deno.writeTextFile(`${dir}/openapi.json`, JSON.stringify(doc));
    // The collection first: on a fresh machine this npx call fetches the tools, which must not
    // eat into the signed build's 60 s.
    const portman = await npx("portman", [
      "-l",
      "openapi.json",
      "-b",
      service.url,
      "-c",
      CONFIG,
      "-o",
      "collection.json",
      "--logAssignVariables",
      "false",
    ], dir);
    assertEquals(portman.code, 0, `portman failed:\n${portman.stdout}\n${portman.stderr}`);
    const collection = JSON.parse(await Deno.readTextFile(`${dir}/collection.json`));
    const dropped = dropUnchangedFuzz(collection);
    await Deno.writeTextFile(`${dir}/collection.json`, JSON.stringify(collection));

    const key = await makeDevKey({ service: service.url, rpcUrl: service.chainUrl, dataDir });
    const payer = Keypair.fromSecretKey(
      Uint8Array.from(JSON.parse(await Deno.readTextFile(key.keypairPath))),
    );
    const made = await setUp(api(service.url, key.apiKey), payer);

    const values: Record<string, string> = {
      apiKey: key.apiKey,
      payer: key.wallet,
      ...examples(doc),
      ...made,
    };
    await Deno.writeTextFile(
      `${dir}/environment.json`,
      JSON.stringify({
        name: "embedded service",
        values: Object.entries(values).map(([k, value]) => ({ key: k, value, enabled: true })),
      }),
    );
    const newman = await npx("newman", [
      "run",
      "collection.json",
      "-e",
      "environment.json",
      "-r",
      "json",
      "--reporter-json-export",
      "report.json",
    ], dir);
    const report = await Deno.readTextFile(`${dir}/report.json`).then(JSON.parse).catch(() => {
      throw new Error(`newman wrote no report:\n${newman.stdout}\n${newman.stderr}`);
    });
    const failed = failures(report);
    assertEquals(failed, [], `newman: ${failed.length} failed\n${failed.join("\n")}`);

    // Every operation of the document was requested, and every request asserted something.
    const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`)
    ).sort();
    const items = leaves((collection as { item: PmItem[] }).item);
    const main = items.filter((i) => !i.name.includes("["))
      .map((i) => `${i.request!.method} /${i.request!.url.path.join("/")}`).sort();
    assertEquals(main, operations, "the collection has each operation once");
    const executions = report.run.executions as Execution[];
    assertEquals(
      new Set(executions.map((e) => e.item.id)),
      new Set(items.map((i) => i.id)),
      "newman ran every request of the collection",
    );
    for (const e of executions) assert(e.assertions?.length, `${e.item.name} asserts nothing`);
    const fuzzed = executions.filter((e) => e.item.name.includes("[fuzzed]")).length;
    assert(fuzzed >= 20, `${fuzzed} fuzzed requests ran (${dropped} unchanged ones dropped)`);
  } finally {
    const { code, stderr } = await service.stop();
    if (code !== 0 && code !== 143) console.error(stderr);
    // CONTRACT_KEEP=1 keeps the collection, environment and newman's report for a look.
    if (Deno.env.get("CONTRACT_KEEP")) console.log(`contract suite files kept in ${dir}`);
    else await Deno.remove(dir, { recursive: true });
  }
});
