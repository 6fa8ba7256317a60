/**
 * Security properties across the whole service: keys never reach logs or events, one purchase's
 * key cannot read or relay another's builds, the key check is constant-time (asserted on the
 * implementation path: a statistical timing test would be noise on a shared 2-core machine), and
 * the SSRF list from design.md is refused through POST /v1/metadata.
 */
import net from "node:net";
import { readEvents } from "../../events/log.ts";
import { imageUrlProblem } from "../../src/metadata/image/fetch-image.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { assertErrorShape } from "./support.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

const utf8 = new TextDecoder();

const build = (h: Harness, apiKey: string, payer: string, i = 0) =>
  h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer,
      name: `Sec ${i}`,
      symbol: "SEC",
      metadataUri: "https://example.com/m/s.json",
      supply: "1000",
    },
  });

Deno.test("security: keys never in logs, events or any stored value; no cross-key reads or relays", async () => {
  const h = await startHarness({ env: { REQUESTS_PER_HOUR: "100000", TOKENS_PER_DAY: "1000" } });
  try {
    const a = await h.newApiKey();
    const b = await h.newApiKey();
    const secrets = [a.apiKey, b.apiKey];

    // A's build, signed and relayed, then verified: every keyed path A's key travels through.
    const builtRes = await build(h, a.apiKey, a.wallet.publicKey.toBase58());
    const built = await builtRes.json();
    assertEquals(builtRes.status, 201, JSON.stringify(built));
    const tx = decodeTx(built.transaction);
    tx.sign([a.wallet]);
    const transaction = btoa(String.fromCharCode(...tx.serialize()));

    // B may not read, relay or verify A's build, and learns nothing it could not guess.
    const read = await h.request(`/v1/tokens/${built.mint}`, { headers: bearer(b.apiKey) });
    assertEquals(read.status, 404);
    assertErrorShape(await read.json(), "B reads A's mint");
    const relayB = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(b.apiKey),
      json: { transaction },
    });
    const relayBBody = await relayB.json();
    assertEquals(relayB.status, 400, JSON.stringify(relayBBody));
    assertEquals(relayBBody.error.code, "invalid_request");
    assert(!JSON.stringify(relayBBody).includes(built.mint), "B's refusal names A's mint");

    const relayA = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(a.apiKey),
      json: { transaction },
    });
    const { signature } = await relayA.json();
    assertEquals(relayA.status, 202);
    await h.waitForConfirmation(signature);
    const verifyA =
      await (await h.request(`/v1/transactions/${signature}`, { headers: bearer(a.apiKey) }))
        .json();
    assertEquals(verifyA.status, "confirmed");
    const verifyB =
      await (await h.request(`/v1/transactions/${signature}`, { headers: bearer(b.apiKey) }))
        .json();
    assertEquals([verifyB.status, verifyB.mint], ["unverified", null], "B sees A's creation");
    // Even after A's answer is final, B still gets nothing of A's.
    const verifyB2 =
      await (await h.request(`/v1/transactions/${signature}`, { headers: bearer(b.apiKey) }))
        .json();
    assertEquals(verifyB2.mint, null);
    const readA = await h.request(`/v1/tokens/${built.mint}`, { headers: bearer(a.apiKey) });
    assertEquals(readA.status, 200);

    // Near-misses of A's key: wrong secret, wrong id, truncated, other prefix.
    const [prefix, live, id, secret] = a.apiKey.split("_");
    const flip = (s: string) => s.slice(0, -7) + (s.at(-7) === "2" ? "3" : "2") + s.slice(-6);
    for (
      const bad of [
        `${prefix}_${live}_${id}_${flip(secret)}`,
        `${prefix}_${live}_${b.keyId}_${secret}`,
        a.apiKey.slice(0, -1),
        `x${a.apiKey}`,
        `${a.apiKey}x`,
      ]
    ) {
      const r = await h.request("/v1/me", { headers: { authorization: `Bearer ${bad}` } });
      assertEquals(r.status, 401, `${bad} (a: ${a.apiKey}, b: ${b.keyId})`);
      assertErrorShape(await r.json(), "bad key");
    }

    // Rotation: the old key stops at once and the new one never shows up in storage either.
    const rot = await h.portal(a.cookie, `/portal/api/keys/${a.keyId}/rotate`, {});
    assertEquals(rot.status, 200, await rot.clone().text());
    const rotated = (await rot.json()).apiKey as string;
    assert(typeof rotated === "string" && rotated !== a.apiKey);
    secrets.push(rotated);
    assertEquals((await h.request("/v1/me", { headers: bearer(a.apiKey) })).status, 401);
    assertEquals((await h.request("/v1/me", { headers: bearer(rotated) })).status, 200);

    const needles = secrets.flatMap((k) => [k, k.split("_").at(-1)!]);
    for (const line of h.logs) {
      for (const n of needles) {
        assert(!line.includes(n), `a key is in the log: ${line.slice(0, 200)}`);
      }
    }
    let values = 0;
    for await (const e of h.kv.list({ prefix: [] })) {
      values++;
      const text = JSON.stringify(
        e,
        (_k, v) =>
          // Bytes are read as text: the event log is stored as UTF-8 lines (events/codec.ts).
          typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? utf8.decode(v) : v,
      );
      for (const n of needles) {
        assert(!text.includes(n), `a key is stored under ${JSON.stringify(e.key)}`);
      }
    }
    assert(values > 20, "nothing was scanned");
    let events = 0;
    for await (const _ of readEvents(h.kv)) events++;
    assert(events > 5);
  } finally {
    await h.close();
  }
});

Deno.test("security: the key check is constant-time (HMAC verify in WebCrypto, no string compare)", async () => {
  const src = await Deno.readTextFile(new URL("../../src/keys/api-key.ts", import.meta.url));
  const verify = /export function verifySecret[\s\S]*?\n}/.exec(src)?.[0] ?? "";
  assert(
    verify.includes('crypto.subtle.verify("HMAC"'),
    "verifySecret must use crypto.subtle.verify",
  );
  assert(!/===|!==|==/.test(verify), "verifySecret compares with ===");
  const auth = await Deno.readTextFile(new URL("../../src/http/auth.ts", import.meta.url));
  assert(auth.includes("verifySecret("), "auth goes through verifySecret");
  assert(!/secretMac\s*[!=]==?|[!=]==?\s*\w*\.secretMac/.test(auth), "auth compares MACs itself");

  // And at run time: one authenticated request is exactly one HMAC verify over the secret.
  const h = await startHarness();
  const original = crypto.subtle.verify;
  let calls = 0;
  try {
    const k = await h.newApiKey();
    crypto.subtle.verify = ((...args: Parameters<SubtleCrypto["verify"]>) => {
      if ((args[0] as string) === "HMAC") calls++;
      return original.apply(crypto.subtle, args);
    }) as SubtleCrypto["verify"];
    assertEquals((await h.request("/v1/me", { headers: bearer(k.apiKey) })).status, 200);
    assertEquals(calls, 1, "a good key is checked by one HMAC verify");
    const [p, l, id, secret] = k.apiKey.split("_");
    const wrong = `${p}_${l}_${id}_${secret.slice(0, 10)}${secret[10] === "A" ? "B" : "A"}${
      secret.slice(11)
    }`;
    await (await h.request("/v1/me", { headers: { authorization: `Bearer ${wrong}` } }))
      .arrayBuffer();
    // A typo breaks the checksum: refused before any lookup or verify.
    assertEquals(calls, 1);
  } finally {
    crypto.subtle.verify = original;
    await h.close();
  }
});

/** design.md's SSRF list, each as an https URL an attacker could hand us. IP literals only. */
const SSRF = [
  ["http (not https)", "http://93.184.216.34/a.png"],
  ["credentials in the URL", "https://user:pass@93.184.216.34/a.png"],
  ["loopback", "https://127.0.0.1/a.png"],
  ["loopback, other", "https://127.8.9.10/a.png"],
  ["localhost", "https://localhost/a.png"],
  ["localhost subdomain", "https://a.localhost/a.png"],
  ["unspecified", "https://0.0.0.0/a.png"],
  ["private 10/8", "https://10.1.2.3/a.png"],
  ["private 172.16/12", "https://172.16.0.1/a.png"],
  ["private 192.168/16", "https://192.168.1.1/a.png"],
  ["link-local / metadata service", "https://169.254.169.254/latest/meta-data"],
  ["CGNAT 100.64/10", "https://100.64.0.1/a.png"],
  ["multicast", "https://224.0.0.1/a.png"],
  ["broadcast", "https://255.255.255.255/a.png"],
  ["benchmarking 198.18/15", "https://198.18.0.1/a.png"],
  ["IPv6 loopback", "https://[::1]/a.png"],
  ["IPv6 unspecified", "https://[::]/a.png"],
  ["IPv6 link-local", "https://[fe80::1]/a.png"],
  ["IPv6 unique local", "https://[fd00::1]/a.png"],
  ["IPv6 multicast", "https://[ff02::1]/a.png"],
  ["IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]/a.png"],
  ["IPv4-mapped IPv6, hex", "https://[::ffff:7f00:1]/a.png"],
  ["NAT64 of loopback", "https://[64:ff9b::7f00:1]/a.png"],
  ["6to4 of private", "https://[2002:c0a8:101::1]/a.png"],
  ["decimal IPv4", "https://2130706433/a.png"],
  ["octal IPv4", "https://0177.0.0.1/a.png"],
  ["hex IPv4", "https://0x7f.0.0.1/a.png"],
  ["hex IPv4, whole", "https://0x7f000001/a.png"],
  ["short IPv4", "https://127.1/a.png"],
  ["trailing dot", "https://127.0.0.1./a.png"],
  ["file scheme", "file:///etc/passwd"],
  ["gopher", "gopher://127.0.0.1:70/"],
  ["data URL in imageUrl", "data:image/png;base64,iVBORw0KGgo="],
] as const;

Deno.test("security: every SSRF form of design.md is refused through POST /v1/metadata, without a connection; only https URLs count", async () => {
  // Mid-hour: the usage it reads back is the day's it counted.
  const h = await startHarness({
    ...midHourHarness(),
    env: { REQUESTS_PER_HOUR: "100000", METADATA_PER_DAY: "1000" },
  });
  // Nothing here may open a socket: a refused URL is refused before any connect.
  const connect = Deno.connect;
  const connectTls = Deno.connectTls;
  // The image fetcher's transport is node:http(s), which dials through node:net sockets.
  const socketConnect = net.Socket.prototype.connect;
  const attempts: string[] = [];
  try {
    const k = await h.newApiKey();
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      const o = args[0] as { host?: string; port?: number } | undefined;
      attempts.push(`node ${o?.host}:${o?.port}`);
      return (socketConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    } as typeof socketConnect;
    (Deno as { connect: unknown }).connect = (o: Deno.ConnectOptions) => {
      attempts.push(`${o.hostname}:${o.port}`);
      return connect(o);
    };
    (Deno as { connectTls: unknown }).connectTls = (o: Deno.ConnectTlsOptions) => {
      attempts.push(`tls ${o.hostname}:${o.port}`);
      return connectTls(o);
    };
    for (const [what, imageUrl] of SSRF) {
      const res = await h.request("/v1/metadata", {
        method: "POST",
        headers: bearer(k.apiKey),
        json: { name: "Probe", symbol: "PRB", imageUrl },
      });
      const body = await res.json();
      assertEquals(
        res.status,
        400,
        `${what}: ${imageUrl} -> ${res.status} ${JSON.stringify(body)}`,
      );
      assertErrorShape(body, what);
      assertEquals(body.error.code, "invalid_request", what);
      assert(typeof body.error.fields.imageUrl === "string", `${what}: fields.imageUrl`);
    }
    assertEquals(attempts, [], "a refused URL was connected to");
    // An https URL refused by the address policy was accepted for processing and counts
    // (design.md); one that is no https URL at all is bad input and does not.
    const accepted = SSRF.filter(([, url]) => imageUrlProblem(url) === null).length;
    assert(accepted > 0 && accepted < SSRF.length);
    const me = await (await h.request("/v1/me", { headers: bearer(k.apiKey) })).json();
    assertEquals(me.usageToday.metadata, accepted);
  } finally {
    (Deno as { connect: unknown }).connect = connect;
    (Deno as { connectTls: unknown }).connectTls = connectTls;
    net.Socket.prototype.connect = socketConnect;
    await h.close();
  }
});

Deno.test("security: a rotation that lands while a build or upload is under way wins over its write; the 401 is not recorded", async () => {
  const h = await startHarness({ env: { TOKENS_PER_DAY: "100", METADATA_PER_DAY: "100" } });
  try {
    const k = await h.newApiKey();
    const store = h.services.store;
    const transact = store.transact.bind(store);
    /** Runs `action` just before the request's own commit, as if it landed mid-request. */
    const midRequest = (action: () => Promise<void>) => {
      let armed = true;
      store.transact = (async (fn: Parameters<typeof transact>[0]) => {
        if (armed) {
          armed = false;
          await action();
        }
        return await transact(fn);
      }) as typeof store.transact;
    };
    let apiKey = k.apiKey;
    const rotate = async () => {
      const res = await h.portal(k.cookie, `/portal/api/keys/${k.keyId}/rotate`, {});
      apiKey = (await res.json()).apiKey;
    };
    const build = (key: string, idem: string) =>
      h.request("/v1/tokens", {
        method: "POST",
        headers: { ...bearer(key), "idempotency-key": idem },
        json: {
          payer: k.wallet.publicKey.toBase58(),
          name: "Mid",
          symbol: "MID",
          metadataUri: "https://example.com/m/mid.json",
          supply: "1",
        },
      });
    const upload = (key: string) =>
      h.request("/v1/metadata", {
        method: "POST",
        headers: bearer(key),
        json: { name: "Mid", symbol: "MID", imageBase64: toBase64(makePng(2, 2)) },
      });
    const count = async (type: string) => {
      let n = 0;
      for await (const e of store.readAll()) if (e.type === type) n++;
      return n;
    };

    midRequest(rotate);
    const old = apiKey;
    const built = await build(old, "mid-1");
    assertEquals([built.status, (await built.json()).error.code], [401, "unauthorized"]);
    midRequest(rotate);
    const hosted = await upload(apiKey);
    assertEquals(hosted.status, 401);
    await hosted.body?.cancel();
    store.transact = transact;
    assertEquals([await count("TokenBuilt"), await count("MetadataHosted")], [0, 0]);

    // The same Idempotency-Key with the key id's new secret runs; the 401 was not recorded.
    const retried = await build(apiKey, "mid-1");
    assertEquals(retried.status, 201, JSON.stringify(await retried.clone().json()));
    await retried.body?.cancel();
    assertEquals(await count("TokenBuilt"), 1);
  } finally {
    await h.close();
  }
});
