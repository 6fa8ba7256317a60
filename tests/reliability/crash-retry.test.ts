/**
 * A crash in the middle of a request: the service (its own process, KV on disk) is killed with
 * SIGKILL while a build holds its Idempotency-Key, then restarted on the same KV. The dead
 * request's lease, which names its process instance, ends within 5 s of the crash, so the retry
 * with the same key runs within 5 s of the restarted service being ready; and the build is done
 * once. The chain runs in its own process and is slowed while the request is in flight, so the
 * kill lands inside it.
 */
import { Keypair, LAMPORTS_PER_SOL } from "@solana/web3.js";
import { startChainProcess } from "../../bench/lib/chain-process.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { httpClient, startServiceProcess } from "../support/service-process.ts";
import { allEvents, holdNextCommit, sleep } from "./support.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

Deno.test("kill -9 in the middle of a request: its in-flight marker is released within 5 s, the retry after restart runs within 5 s of ready, and it is built once", async () => {
  const chain = await startChainProcess({ slotMs: 100 });
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-crash-" });
  const env = {
    SOLANA_RPC_URL: chain.url,
    PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
    TOKENS_PER_DAY: "1000",
    REQUESTS_PER_HOUR: "100000",
  };
  const faults = (latencyMs: number) =>
    fetch(`${chain.url}/admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ latencyMs }),
    }).then((r) => r.body?.cancel());
  let svc = await startServiceProcess({ dataDir, env });
  try {
    const wallet = Keypair.generate();
    await chain.airdrop(wallet.publicKey.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
    const k = await httpClient(svc.url, chain.url).newApiKey(wallet);
    const idem = crypto.randomUUID();
    const build = (url: string) =>
      fetch(`${url}/v1/tokens`, {
        method: "POST",
        headers: {
          ...bearer(k.apiKey),
          "idempotency-key": idem,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          payer: wallet.publicKey.toBase58(),
          name: "Crash",
          symbol: "CRSH",
          metadataUri: "https://example.com/m/crash.json",
          supply: "1000",
          decimals: 6,
        }),
      });

    // Every RPC call now takes 1.5 s: the build is in flight for several seconds.
    await faults(1_500);
    const inFlight = build(svc.url).then((r) => r.body?.cancel(), () => null);
    const kvPath = `${dataDir}/kv.sqlite3`;
    let kv = await Deno.openKv(kvPath);
    type Lease = { instance: string; leaseUntil: number };
    const findLease = async () => {
      for await (const e of kv.list<Lease>({ prefix: ["idem_lease"] })) {
        if (e.key.at(-1) === idem) return e;
      }
      return null;
    };
    let lease = await findLease();
    for (let i = 0; i < 600 && !lease; i++) {
      await sleep(100);
      lease = await findLease();
    }
    assert(lease, "the request took its Idempotency-Key");
    assert(UUID.test(lease.value.instance), "the lease names the process instance holding it");

    await svc.kill9();
    const killedAt = Date.now();
    await inFlight;
    const left = (await kv.get<{ leaseUntil: number }>(lease.key)).value!;
    assert(
      left.leaseUntil - killedAt <= 5_000,
      `the dead request's lease ran ${left.leaseUntil - killedAt} ms past the crash`,
    );
    const built = (await allEvents(kv)).filter((e) => e.type === "TokenBuilt").length;
    assertEquals(built, 0, "killed before its commit");
    kv.close();

    await faults(0);
    svc = await startServiceProcess({ dataDir, env });
    let waited = 0;
    let res: Response;
    let ranAt: number;
    for (;;) {
      ranAt = performance.now();
      res = await build(svc.url);
      if (res.status !== 409) break;
      assertEquals((await res.json()).error.code, "idempotency_key_in_flight");
      waited++;
      assert(waited < 300, "the retry never ran");
      await sleep(100);
    }
    const body = await res.json();
    assertEquals(res.status, 201, JSON.stringify(body));
    const afterReady = ranAt - svc.readyAt;
    assert(afterReady <= 5_000, `the retry ran ${Math.round(afterReady)} ms after ready`);

    // Nothing done twice: one build, and the same answer replayed.
    const again = await build(svc.url);
    assertEquals(again.headers.get("idempotent-replayed"), "true");
    assertEquals((await again.json()).mint, body.mint);
    const stopped = await svc.stop();
    assertEquals(stopped.code, 0, stopped.stderr);
    kv = await Deno.openKv(kvPath);
    try {
      const events = await allEvents(kv);
      assertEquals(events.filter((e) => e.type === "TokenBuilt").length, 1);
    } finally {
      kv.close();
    }
  } finally {
    await svc.kill9().catch(() => {});
    await chain.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("a live request renews its lease: past the first lease a retry with its key is still 409, then replays its answer", async () => {
  const h = await startHarness({ env: { METADATA_PER_DAY: "1000" } });
  try {
    const k = await h.newApiKey();
    const { atCommit, release, restore } = holdNextCommit(h.services.store);
    const send = () =>
      h.request("/v1/metadata", {
        method: "POST",
        headers: { ...bearer(k.apiKey), "idempotency-key": "long-one" },
        json: { name: "Long", symbol: "LNG", imageBase64: toBase64(makePng(3, 3)) },
      });
    const a = send();
    await atCommit;
    const leaseOf = async () => {
      for await (const e of h.kv.list<{ leaseUntil: number }>({ prefix: ["idem_lease"] })) {
        return e.value;
      }
      return null;
    };
    const firstLease = (await leaseOf())!;
    // Wait (real time) until the first lease would have run out.
    while (Date.now() <= firstLease.leaseUntil) await sleep(200);
    const renewed = (await leaseOf())!;
    assert(renewed.leaseUntil > firstLease.leaseUntil, "the lease was renewed");
    const b = await send();
    assertEquals([b.status, (await b.json()).error.code], [409, "idempotency_key_in_flight"]);
    release();
    const aDone = await a;
    assertEquals(aDone.status, 201);
    const body = await aDone.json();
    restore();
    const replay = await send();
    assertEquals(replay.headers.get("idempotent-replayed"), "true");
    assertEquals(await replay.json(), body);
  } finally {
    await h.close();
  }
});
