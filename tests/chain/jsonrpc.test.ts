import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from "@solana/web3.js";
import { connect, fund, rawPost, rpc, start } from "./helpers.ts";

Deno.test("JSON-RPC envelope: parse errors, invalid requests, unknown methods, batches", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const parse = await rawPost(chain, "{not json");
    assertEquals(parse.status, 200);
    assertEquals(parse.body, {
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error" },
      id: null,
    });

    for (
      const bad of [
        '{"jsonrpc":"1.0","id":1,"method":"getSlot"}',
        '{"jsonrpc":"2.0","id":1}',
        "[]",
        "42",
      ]
    ) {
      const r = await rawPost(chain, bad);
      assertEquals(r.body.error, { code: -32600, message: "Invalid request" }, bad);
    }

    const unknown = await rpc(chain, "getEverything");
    assertEquals(unknown.body, {
      jsonrpc: "2.0",
      error: { code: -32601, message: "Method not found" },
      id: 1,
    });

    const batch = await rawPost(
      chain,
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "getSlot", params: [{ commitment: "processed" }] },
        { jsonrpc: "2.0", id: "two", method: "nope" },
        { jsonrpc: "2.0", method: "getSlot" }, // notification: no answer
        { jsonrpc: "2.0", id: 3, method: "getHealth" },
      ]),
    );
    const replies = batch.body as unknown as { id: unknown; result?: unknown; error?: unknown }[];
    assertEquals(replies.map((r) => r.id), [1, "two", 3]);
    assertEquals(replies[0].result, chain.slot());
    assertEquals((replies[1].error as { code: number }).code, -32601);
    assertEquals(replies[2].result, "ok");

    const notification = await rawPost(chain, '{"jsonrpc":"2.0","method":"getSlot"}');
    assertEquals(notification.text, "");

    const get = await fetch(chain.url);
    assertEquals(get.status, 405);
    await get.body?.cancel();
    const health = await fetch(`${chain.url}/health`);
    assertEquals(await health.text(), "ok");
  } finally {
    await chain.close();
  }
});

Deno.test("bad params: pubkeys, signatures, encodings and transactions", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const err = async (method: string, params: unknown[]) =>
      (await rpc(chain, method, params)).body.error;

    assertEquals(await err("getBalance", ["not-base58-0OIl"]), {
      code: -32602,
      message: "Invalid param: Invalid",
    });
    assertEquals(await err("getBalance", ["abc"]), {
      code: -32602,
      message: "Invalid param: WrongSize",
    });
    assertEquals(await err("getBalance", []), {
      code: -32602,
      message: "Invalid params: invalid length 0, expected 1 element.",
    });
    assertEquals(await err("getBalance", [42]), {
      code: -32602,
      message: "Invalid params: invalid type: integer `42`, expected a string.",
    });
    assertEquals(
      (await err("getSignatureStatuses", [["xyz"]]))?.message,
      "Invalid param: WrongSize",
    );
    assertEquals(
      (await err("getAccountInfo", [Keypair.generate().publicKey.toBase58(), { encoding: "hex" }]))
        ?.code,
      -32602,
    );

    const b64 = await err("sendTransaction", ["@@@@", { encoding: "base64" }]);
    assertEquals(b64?.code, -32602);
    assertMatch(b64!.message, /^invalid base64 encoding: InvalidByte\(0, 64\)$/);
    const b58 = await err("sendTransaction", ["0OIl"]);
    assertEquals(b58?.code, -32602);
    assertMatch(b58!.message, /^invalid base58 encoding: InvalidCharacter/);
    const garbage = await err("simulateTransaction", ["AQID", { encoding: "base64" }]);
    assertEquals(garbage?.code, -32602);
    assertMatch(
      garbage!.message,
      /^failed to deserialize solana_transaction::versioned::VersionedTransaction: /,
    );
    const tooBig = await err("sendTransaction", ["A".repeat(2000), { encoding: "base64" }]);
    assertMatch(tooBig!.message, /too large/);
    const badEncoding = await err("sendTransaction", ["AA==", { encoding: "hex" }]);
    assertEquals(badEncoding?.code, -32602);

    // A structurally valid transaction whose header points past its keys fails sanitize.
    const wire = new Uint8Array(1 + 64 + 3 + 1 + 32 + 32 + 1);
    wire[0] = 1; // one signature
    wire[65] = 2; // requires 2 signers, has 1 key
    wire[68] = 1;
    const sanitize = await err("sendTransaction", [btoa(String.fromCharCode(...wire)), {
      encoding: "base64",
    }]);
    assertEquals(sanitize, {
      code: -32602,
      message: "invalid transaction: Transaction failed to sanitize accounts offsets correctly",
    });
  } finally {
    await chain.close();
  }
});

Deno.test("read methods: shapes, contexts and non-existent accounts", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const funded = Keypair.generate();
    const empty = Keypair.generate();
    await fund(chain, funded.publicKey, 3);

    const version = await conn.getVersion();
    assert(typeof version["solana-core"] === "string");
    assertEquals(await conn.getGenesisHash(), await conn.getGenesisHash());
    const epoch = await conn.getEpochInfo("processed");
    assertEquals(epoch.absoluteSlot, chain.slot());
    assertEquals(epoch.blockHeight, chain.blockHeight());
    assertEquals(await conn.getBlockHeight("processed"), chain.blockHeight());
    assertEquals(await conn.getMinimumBalanceForRentExemption(0), 890_880);
    assertEquals(await conn.getMinimumBalanceForRentExemption(165), 2_039_280);

    const info = await rpc(chain, "getAccountInfo", [
      funded.publicKey.toBase58(),
      { encoding: "base64", commitment: "processed" },
    ]);
    const value = info.body.result as { context: { slot: number }; value: Record<string, unknown> };
    assertEquals(value.context.slot, chain.slot());
    assertEquals(value.value.lamports, 3 * LAMPORTS_PER_SOL);
    assertEquals(value.value.owner, "11111111111111111111111111111111");
    assertEquals(value.value.data, ["", "base64"]);
    assertEquals(value.value.space, 0);
    assertEquals(value.value.executable, false);

    assertEquals(await conn.getAccountInfo(empty.publicKey, "processed"), null);
    const many = await conn.getMultipleAccountsInfo(
      [funded.publicKey, empty.publicKey],
      "processed",
    );
    assertEquals(many[0]?.lamports, 3 * LAMPORTS_PER_SOL);
    assertEquals(many[1], null);
    assertEquals(await conn.getBalance(empty.publicKey, "processed"), 0);

    const token = await conn.getAccountInfo(
      new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
      "processed",
    );
    assert(token?.executable);

    const latest = await rpc(chain, "getLatestBlockhash", [{ commitment: "processed" }]);
    const lb = latest.body.result as {
      context: { slot: number };
      value: { blockhash: string; lastValidBlockHeight: number };
    };
    assertEquals(lb.context.slot, chain.slot());
    assertEquals(lb.value.lastValidBlockHeight, chain.blockHeight() + 150);
    const min = await rpc(chain, "getSlot", [{ minContextSlot: chain.slot() + 10 }]);
    assertEquals(min.body.error?.code, -32016);
  } finally {
    await chain.close();
  }
});
