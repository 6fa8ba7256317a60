/**
 * `deno task demo` as a newcomer runs it: a subprocess against the service served over HTTP on the
 * embedded chain (the harness). It buys a dev key, creates a token through examples/, and prints
 * what a newcomer needs; a second run reuses the key; a wrong address fails with one clear line.
 */
import { PublicKey } from "@solana/web3.js";
import {
  getMint,
  getTokenMetadata,
  getTransferFeeConfig,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { decodeMetadataAccount, metadataPda } from "../../src/solana/token-metadata.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function demo(env: Record<string, string>, args: string[] = []) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "demo", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

const field = (out: string, name: string) => new RegExp(`^  ${name}\\s+(\\S+)`, "m").exec(out)?.[1];

Deno.test("deno task demo: dev key, metadata, build, sign, submit, verified; a second run reuses the key", async () => {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-demo-" });
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const env = { SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir };
  try {
    const first = await demo(env);
    assertEquals(first.code, 0, first.stdout + first.stderr);
    const out = first.stdout;
    for (
      const step of [
        "dev key: made",
        "1. hosting metadata",
        "2. building",
        "3. review",
        "5. submitting",
        "6. waiting for verification",
      ]
    ) {
      assert(out.includes(step), `missing step "${step}":\n${out}`);
    }
    assertMatch(out, /^ {2}feeVerified:\s+true$/m);
    assertMatch(out, /^ {2}program\s+SPL Token \(the mint's owner on the chain\)$/m);
    const mint = field(out, "mint")!;
    const signature = field(out, "signature")!;
    const metadataUri = field(out, "metadata")!;
    const spent = BigInt(field(out, "lamports spent")!);

    // What it printed is on the chain and in the service.
    const onChain = await getMint(h.services.connection, new PublicKey(mint), "confirmed");
    assertEquals(onChain.supply, 1_000_000_000_000n);
    const saved = JSON.parse(await Deno.readTextFile(`${dataDir}/demo-key.json`));
    assertEquals((await Deno.stat(`${dataDir}/demo-key.json`)).mode! & 0o777, 0o600);
    const v = await h.request(`/v1/transactions/${signature}`, { headers: bearer(saved.apiKey) });
    const verification = await v.json();
    assertEquals([verification.status, verification.feeVerified, verification.mint], [
      "confirmed",
      true,
      mint,
    ]);
    const hosted = await h.request(new URL(metadataUri).pathname);
    assertEquals((await hosted.json()).symbol, "DEMO");
    // The wallet's spend, read from the chain: the service fee, rents, the network fee.
    const tx = await h.services.connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    const payerIndex = 0;
    assertEquals(
      spent,
      BigInt(tx!.meta!.preBalances[payerIndex] - tx!.meta!.postBalances[payerIndex]),
    );

    const second = await demo(env);
    assertEquals(second.code, 0, second.stdout + second.stderr);
    assert(second.stdout.includes("dev key: reusing"), second.stdout);
    assert(field(second.stdout, "mint") !== mint, "a new token each run");
    assertEquals(JSON.parse(await Deno.readTextFile(`${dataDir}/demo-key.json`)), saved);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task demo: no service, a port that is not the service, no chain: exit 1 with one clear line", async () => {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-demo-" });
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  // A port nothing listens on: bind one, note it, free it.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = (probe.addr as Deno.NetAddr).port;
  probe.close();
  try {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { SERVICE_URL: `http://127.0.0.1:${closedPort}`, SOLANA_RPC_URL: h.chain.url },
        /^demo failed: no service answers at http:\/\/127\.0\.0\.1:\d+ \(.*refused.*\): start it with `deno task start`/,
      ],
      [
        { SERVICE_URL: h.chain.url, SOLANA_RPC_URL: h.chain.url },
        /^demo failed: http:\/\/127\.0\.0\.1:\d+ answered HTTP \d+ but is not the token-creation service \(wrong port\?/,
      ],
      [
        { SERVICE_URL: service, SOLANA_RPC_URL: `http://127.0.0.1:${closedPort}` },
        /^demo failed: no Solana RPC answers at http:\/\/127\.0\.0\.1:\d+ .*CHAIN_PORT/,
      ],
    ];
    for (const [env, message] of cases) {
      const r = await demo({ ...env, DATA_DIR: dataDir });
      assertEquals(r.code, 1, r.stdout + r.stderr);
      assertMatch(r.stderr.trim().split("\n").at(-1)!, message);
    }
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task demo --token-2022 with a transfer fee and a vanity suffix: the options reach the build, the program and the spend are printed", async () => {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-demo-" });
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const env = { SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir };
  try {
    const r = await demo(env, [
      "--token-2022",
      "--transfer-fee-bps",
      "50",
      "--transfer-fee-max",
      "1000000",
      "--vanity-suffix",
      "z",
      "--vanity-ignore-case",
    ]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const out = r.stdout;
    assertMatch(out, /^ {2}program\s+Token-2022 \(the mint's owner on the chain\)$/m);
    assertMatch(out, /vanity address after \d+ tries/);
    assert(out.includes("Token-2022: the metadata lives in the mint"), out);
    const mint = field(out, "mint")!;
    assertMatch(mint, /[zZ]$/);

    // What the demo asked for is what landed, read with the Token-2022 helpers.
    const c = h.services.connection;
    const onChain = await getMint(c, new PublicKey(mint), "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals(onChain.supply, 1_000_000_000_000n);
    const fee = getTransferFeeConfig(onChain)!;
    assertEquals(fee.newerTransferFee.transferFeeBasisPoints, 50);
    assertEquals(fee.newerTransferFee.maximumFee, 1_000_000n);
    const meta = await getTokenMetadata(c, new PublicKey(mint), "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals([meta?.name, meta?.symbol], ["Demo Token", "DEMO"]);

    // The spend it prints is the payer's drop in the landed transaction, and the build's costs.
    const signature = field(out, "signature")!;
    const spent = BigInt(field(out, "lamports spent")!);
    const tx = await c.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assertEquals(spent, BigInt(tx!.meta!.preBalances[0] - tx!.meta!.postBalances[0]));
    const said = /the build's costs said (\d+)$/m.exec(out)?.[1];
    assertEquals(said, spent.toString(), out);
    const network = /service fee (\d+), network (\d+) \(rent of the mint with its metadata/m
      .exec(out);
    assert(network, out);
    assertEquals(BigInt(network[1]) + BigInt(network[2]), spent);
    // Beside it, both programs' network figures as GET /v1/pricing states them.
    const { token } = await (await h.request("/v1/pricing")).json();
    assertMatch(
      out,
      new RegExp(
        `^ {2}per token {6}the network takes ${token.networkLamports} lamports for SPL Token, ` +
          `at most ${token.token2022NetworkLamports} for Token-2022 \\(GET /v1/pricing`,
        "m",
      ),
    );
    assert(BigInt(network[2]) <= BigInt(token.token2022NetworkLamports), out);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task demo --refresh: a slow signer's transaction expires unsent, the build is refreshed (same mint, new blockhash, fee as quoted, not counted again) and lands", async () => {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-demo-" });
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const env = { SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir };
  try {
    const r = await demo(env, ["--refresh"]);
    if (Deno.env.get("SHOW_DEMO")) console.log(r.stdout);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const out = r.stdout;
    for (
      const step of [
        "--refresh: a slow signer; moving the local chain",
        "refused: the blockhash expired before it was sent; refreshing the build",
        "3. review of the refreshed transaction:",
        "signed again; submitting",
      ]
    ) {
      assert(out.includes(step), `missing "${step}":\n${out}`);
    }
    const mint = field(out, "mint")!;
    assertMatch(out, new RegExp(`refreshed: the same mint ${mint}, blockhash`));
    const expired = /^ {4}blockhash {4}(\S+) \(expired\)$/m.exec(out)?.[1];
    const fresh = /^ {14}-> (\S+) \(refreshed\)$/m.exec(out)?.[1];
    const landed = /^ {4}landed with {2}(\S+) \(read from the chain\)$/m.exec(out)?.[1];
    assert(expired && fresh && landed, out);
    assert(expired !== fresh, "a new blockhash");
    const fee = /^ {4}fee {10}as quoted: (\d+) lamports \(the expired message's: (\d+)\)$/m
      .exec(out);
    assert(fee, out);
    assertEquals(fee[1], fee[2]);

    // What it printed is what the chain holds: the landed message carries the refreshed blockhash.
    const signature = field(out, "signature")!;
    const tx = await h.services.connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assertEquals(tx!.transaction.message.recentBlockhash, fresh);
    assertEquals(landed, fresh);
    const saved = JSON.parse(await Deno.readTextFile(`${dataDir}/demo-key.json`));
    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(saved.apiKey) }))
      .json();
    assertEquals([rec.status, rec.signature, rec.feeVerified], ["confirmed", signature, true]);
    // One build, counted once, whatever the refresh did.
    const me = await (await h.request("/v1/me", { headers: bearer(saved.apiKey) })).json();
    assertEquals(me.usageToday.tokens, 1);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task demo --update: the token then points at a second hosted document and its update authority is handed over, before and after read from the chain", async () => {
  // The relay's follow-up (on the service's queue) records the update's landing.
  const h = await startHarness({ watch: true });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-demo-" });
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const env = { SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir };
  try {
    const r = await demo(env, ["--update"]);
    if (Deno.env.get("SHOW_DEMO")) console.log(r.stdout);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const out = r.stdout;
    for (
      const step of [
        "--update: a second hosted document",
        "1. building the update of",
        "2. review:",
        "4. submitting through the relay",
        "   landed",
        "token updated (update ",
      ]
    ) {
      assert(out.includes(step), `missing "${step}":\n${out}`);
    }
    const mint = field(out, "mint")!;
    const row = (k: string) => new RegExp(`^ {4}${k}\\s+(\\S+) -> (\\S+)$`, "m").exec(out);
    const name = /^ {4}name\s+(.+) -> (.+)$/m.exec(out);
    const uri = row("uri");
    const authority = row("updateAuthority");
    assert(name && uri && authority, out);
    assertEquals([name[1], name[2]], ["Demo Token", "Demo Token v2"]);
    assert(uri[1] !== uri[2], "a new document");
    assert(authority[1] !== authority[2], "a new update authority");

    // What it printed is what the chain holds now.
    const md = decodeMetadataAccount(
      (await h.services.connection.getAccountInfo(
        metadataPda(new PublicKey(mint)),
        "confirmed",
      ))!.data,
    );
    assertEquals([md.name, md.symbol, md.uri, md.updateAuthority], [
      "Demo Token v2",
      "DEMO2",
      uri[2],
      authority[2],
    ]);
    const hosted = await h.request(new URL(uri[2]).pathname);
    assertEquals((await hosted.json()).symbol, "DEMO2");
    // The spend it printed, from the chain, is the update's costs to the lamport.
    const spent =
      /^ {2}lamports spent (\d+) \(read from the chain\); the update's costs said (\d+)$/m
        .exec(out);
    assert(spent, out);
    assertEquals(spent[1], spent[2]);
    // And what the service records: the build's current state after the relayed update.
    const saved = JSON.parse(await Deno.readTextFile(`${dataDir}/demo-key.json`));
    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(saved.apiKey) }))
      .json();
    assertEquals([rec.current.uri, rec.current.updateAuthority, rec.current.updates], [
      uri[2],
      authority[2],
      1,
    ]);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task demo --help lists the program, transfer-fee and vanity options; an unknown one exits 2 with the usage", async () => {
  const help = await demo({}, ["--help"]);
  assertEquals(help.code, 0, help.stderr);
  for (
    const flag of [
      "--token-2022",
      "--transfer-fee-bps",
      "--transfer-fee-max",
      "--permanent-fee",
      "--vanity-prefix",
      "--vanity-suffix",
      "--vanity-ignore-case",
      "--refresh",
      "--update",
    ]
  ) {
    assertMatch(help.stdout, new RegExp(`^  ${flag} `, "m"), flag);
  }
  const bad = await demo({}, ["--vanity"]);
  assertEquals(bad.code, 2);
  assert(bad.stderr.includes("Unknown option '--vanity'"), bad.stderr);
  assert(bad.stderr.includes("usage: deno task demo"), bad.stderr);
});
