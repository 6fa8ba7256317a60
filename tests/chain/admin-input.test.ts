/**
 * Malformed input to the embedded chain: /admin answers 400 with a JSON error naming every bad
 * field (never the text of an exception), and the RPC path answers JSON-RPC error objects as the
 * node does, never an exception's message.
 */
import { Keypair } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { handleJsonRpc } from "../../src/chain/jsonrpc.ts";
import { connect, rawPost, start } from "./helpers.ts";

const RAW_EXCEPTION = /Cannot convert|TypeError|SyntaxError|undefined|BigInt|at [\w.]+ \(/;

Deno.test("chain /admin: malformed bodies are 400 JSON errors naming each bad field", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const post = async (path: string, body: string) => {
      const res = await fetch(`${chain.url}/admin/${path}`, { method: "POST", body });
      const text = await res.text();
      assert(!RAW_EXCEPTION.test(text), `${path} ${body}: ${text}`);
      assertEquals(res.headers.get("content-type"), "application/json; charset=utf-8");
      return { status: res.status, body: JSON.parse(text) };
    };
    const refusal = (fields: Record<string, string>) => ({
      error: { code: "invalid_request", message: "Request is invalid", fields },
    });
    const someone = Keypair.generate().publicKey.toBase58();
    const cases: [string, string, Record<string, string>][] = [
      ["airdrop", "{}", { address: "required", lamports: "required" }],
      ["airdrop", '{"address":"nope","lamports":"ten"}', {
        address: "must be a base58 address (32 bytes)",
        lamports: "must be a whole number of lamports, 1 to 2^64-1",
      }],
      ["airdrop", `{"address":"${someone}","lamports":18446744073709551616}`, {
        lamports: "must be a whole number of lamports, 1 to 2^64-1",
      }],
      ["airdrop", `{"address":"${someone}","lamports":1,"memo":"x"}`, { memo: "unknown member" }],
      ["airdrop", "not json", { body: "must be JSON" }],
      ["airdrop", "[1,2]", { body: "must be a JSON object" }],
      ["faults", '{"failureRate":2,"down":"yes"}', {
        failureRate: "must be <= 1",
        down: "must be true or false",
      }],
      ["faults", '{"latencyMs":-1}', { latencyMs: "must be >= 0" }],
      ["slots", '{"advance":"x"}', { advance: "must be a number" }],
      ["slots", '{"advance":1.5}', { advance: "must be a whole number" }],
      ["price", '{"usd":0,"paused":1}', { usd: "must be > 0", paused: "must be true or false" }],
    ];
    for (const [path, body, fields] of cases) {
      const r = await post(path, body);
      assertEquals([r.status, r.body], [400, refusal(fields)], `${path} ${body}`);
    }
    // Nothing was changed by the refused calls.
    assertEquals(chain.faults(), { latencyMs: 0, failureRate: 0, down: false });

    const wrongMethod = await fetch(`${chain.url}/admin/airdrop`);
    assertEquals(wrongMethod.status, 405);
    assertEquals((await wrongMethod.json()).error.code, "method_not_allowed");
    const unknown = await fetch(`${chain.url}/admin/nope`, { method: "POST", body: "{}" });
    assertEquals(unknown.status, 404);
    assertEquals((await unknown.json()).error.code, "not_found");

    // Well-formed: lamports as a string of digits or a number, as docs/chain.md says.
    for (const lamports of ['"2500000000"', "2500000000"]) {
      const who = Keypair.generate().publicKey;
      const ok = await post("airdrop", `{"address":"${who.toBase58()}","lamports":${lamports}}`);
      assertEquals(ok.status, 200);
      assertEquals(typeof ok.body.signature, "string");
      assertEquals(await connect(chain, { manualSlots: true }).getBalance(who), 2_500_000_000);
    }
    const slots = await post("slots", "");
    assertEquals(slots.status, 200, "an empty body is {}: advance defaults to 1");
  } finally {
    await chain.close();
  }
});

Deno.test("chain RPC: malformed params are JSON-RPC errors as the node words them; an internal fault shows no exception text", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const who = Keypair.generate().publicKey.toBase58();
    const cases: [unknown, number, string][] = [
      [[who, 1e30], -32602, "Invalid params: invalid type: floating point `1e+30`, expected u64."],
      [[who, "x"], -32602, 'Invalid params: invalid type: string "x", expected u64.'],
      [[who], -32602, "Invalid params: invalid length 1, expected 2 elements."],
    ];
    for (const [params, code, message] of cases) {
      const res = await rawPost(
        chain,
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "requestAirdrop", params }),
      );
      assertEquals(res.body, { jsonrpc: "2.0", error: { code, message }, id: 3 });
    }
    const notJson = await rawPost(chain, "{not json");
    assertEquals(notJson.body, {
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error" },
      id: null,
    });
  } finally {
    await chain.close();
  }
  const out = handleJsonRpc('{"jsonrpc":"2.0","id":1,"method":"boom"}', () => {
    throw new TypeError("Cannot convert undefined to a BigInt");
  });
  assertEquals(JSON.parse(out!), {
    jsonrpc: "2.0",
    error: { code: -32603, message: "Internal error" },
    id: 1,
  });
});
