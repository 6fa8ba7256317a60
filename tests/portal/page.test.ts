/**
 * The portal page as served: security headers, a CSP that forbids inline code, no inline script
 * or style in the HTML, every asset the page loads actually served, and the page's hand-written
 * helpers (base58, Wallet Standard discovery, error classification, formatting).
 */
import bs58 from "bs58";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import { routeGroups } from "../../src/routes/index.ts";
import { PORTAL_ASSETS, PORTAL_CSP, portalPageRoutes } from "../../src/routes/portal-page.ts";
import type { Services } from "../../src/services.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import {
  base58Decode,
  base58Encode,
  base64Decode,
  base64Encode,
} from "../../src/kernel/encoding.ts";
import {
  chainFor,
  classifyWalletError,
  discoverWallets,
} from "../../src/portal/browser/wallets.js";
import { formatSol, formatUnits, shortAddress } from "../../src/portal/browser/format.js";

const PAGE_DIR = new URL("../../src/portal/page/", import.meta.url);

/** Only what the page routes and the app's outer middleware touch; no chain needed. */
async function pageApp(network = "devnet") {
  const config = loadConfig({
    NETWORK: network,
    PUBLIC_BASE_URL: "https://tokens.example.test",
    LOG_LEVEL: "silent",
  });
  const kv = await Deno.openKv(":memory:");
  const s = { config, kv, clock: Date.now, logger: memoryLogger() } as unknown as Services;
  return { app: createApp(s, [portalPageRoutes]), close: () => kv.close() };
}

function directives(csp: string) {
  return new Map(
    csp.split(";").map((d) => d.trim()).filter(Boolean).map((d) => {
      const [name, ...values] = d.split(/\s+/);
      return [name, values] as const;
    }),
  );
}

Deno.test("GET / serves the page with a strict CSP and the security headers", async () => {
  const { app, close } = await pageApp();
  try {
    const res = await app.request("http://localhost/");
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), "text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    assertEquals(csp, PORTAL_CSP);
    const d = directives(csp);
    assertEquals(d.get("default-src"), ["'self'"]);
    assertEquals(d.get("script-src"), ["'self'"]);
    assertEquals(d.get("style-src"), ["'self'"]);
    assertEquals(d.get("connect-src"), ["'self'"]);
    assertEquals(d.get("img-src"), ["'self'", "data:"]);
    assertEquals(d.get("frame-ancestors"), ["'none'"]);
    assertEquals(d.get("base-uri"), ["'none'"]);
    assertEquals(d.get("form-action"), ["'self'"]);
    // Nothing that would let inline code or a third party back in.
    assert(!/unsafe-inline|unsafe-eval|unsafe-hashes|strict-dynamic|https?:|\*/.test(csp), csp);
    assertEquals(res.headers.get("x-content-type-options"), "nosniff");
    assertEquals(res.headers.get("referrer-policy"), "no-referrer");
    assertEquals(res.headers.get("x-frame-options"), "DENY");
    assert(res.headers.get("x-request-id"));
    await res.body?.cancel();
  } finally {
    close();
  }
});

Deno.test("the HTML has no inline script, inline style, event handler or third-party URL", async () => {
  const { app, close } = await pageApp();
  try {
    const html = await (await app.request("http://localhost/")).text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert(scripts.length >= 1, "the page loads its module");
    for (const [, attrs, body] of scripts) {
      assertMatch(attrs, /\bsrc="\/portal\/assets\/[a-z0-9-]+\.js"/);
      assertEquals(body.trim(), "", "a script element with a body is inline code");
    }
    assertEquals((html.match(/<script\b/gi) ?? []).length, scripts.length);
    assert(!/<style\b/i.test(html), "no <style> element");
    assert(!/\sstyle\s*=/i.test(html), "no style attribute");
    assert(!/\son[a-z]+\s*=/i.test(html), "no inline event handler");
    assert(!/javascript:/i.test(html), "no javascript: URL");
    assert(!/\b(src|href|action)\s*=\s*"(https?:)?\/\//i.test(html), "no third-party resource");
    assert(!/<(iframe|object|embed|base)\b/i.test(html));
  } finally {
    close();
  }
});

Deno.test("the network is filled into the page; the placeholder never leaks", async () => {
  const { app, close } = await pageApp("devnet");
  try {
    const html = await (await app.request("http://localhost/")).text();
    assertMatch(html, /<meta name="tcb-network" content="devnet">/);
    assert(!html.includes("__TCB_NETWORK__"));
  } finally {
    close();
  }
});

Deno.test("every asset the page references, and every module import, is served with the headers", async () => {
  const { app, close } = await pageApp();
  try {
    const html = await (await app.request("http://localhost/")).text();
    const refs = [...html.matchAll(/(?:src|href)="(\/portal\/assets\/[^"]+)"/g)].map((m) => m[1]);
    for (const name of Object.keys(PORTAL_ASSETS)) {
      if (!name.endsWith(".js")) continue;
      const text = await Deno.readTextFile(new URL(name, PAGE_DIR));
      for (const m of text.matchAll(/\bfrom\s+"\.\/([^"]+)"/g)) refs.push(`/portal/assets/${m[1]}`);
      // Modules import only siblings: no bare specifiers, no CDN.
      for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
        assertMatch(m[1], /^\.\/[a-z0-9-]+\.js$/, `${name} imports ${m[1]}`);
      }
    }
    assert(refs.includes("/portal/assets/app.js") && refs.includes("/portal/assets/styles.css"));
    for (const ref of new Set(refs)) {
      const res = await app.request(`http://localhost${ref}`);
      assertEquals(res.status, 200, ref);
      const type = res.headers.get("content-type") ?? "";
      assertEquals(
        type,
        ref.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8",
      );
      assertEquals(res.headers.get("content-security-policy"), PORTAL_CSP, ref);
      assertEquals(res.headers.get("x-content-type-options"), "nosniff", ref);
      const body = await res.text();
      assert(
        !/\beval\s*\(|new Function\s*\(|innerHTML|outerHTML|insertAdjacentHTML|document\.write/
          .test(body),
        `${ref} has no eval or HTML injection`,
      );
      assert(!/https?:\/\/(?!localhost)/.test(body), `${ref} names no third-party origin`);
    }
    // Every file in the directory is either served or the page itself.
    for await (const f of Deno.readDir(PAGE_DIR)) {
      assert(f.name === "index.html" || f.name in PORTAL_ASSETS, `${f.name} is not served`);
    }
  } finally {
    close();
  }
});

Deno.test("unknown asset names and traversal attempts are 404 in the API's error shape", async () => {
  const { app, close } = await pageApp();
  try {
    for (
      const path of [
        "/portal/assets/nope.js",
        "/portal/assets/index.html",
        "/portal/assets/..%2F..%2Froutes%2Fportal-page.ts",
        "/portal/assets/%2e%2e/%2e%2e/config.ts",
        "/portal/assets/constructor",
        "/portal/assets/__proto__",
      ]
    ) {
      const res = await app.request(`http://localhost${path}`);
      assertEquals(res.status, 404, path);
      assertEquals((await res.json()).error.code, "not_found");
    }
  } finally {
    close();
  }
});

Deno.test("assets revalidate with an ETag: 304 when unchanged", async () => {
  const { app, close } = await pageApp();
  try {
    const first = await app.request("http://localhost/portal/assets/app.js");
    const etag = first.headers.get("etag")!;
    await first.body?.cancel();
    assertMatch(etag, /^"[0-9a-f]{32}"$/);
    assertEquals(first.headers.get("cache-control"), "no-cache");
    const again = await app.request("http://localhost/portal/assets/app.js", {
      headers: { "if-none-match": etag },
    });
    assertEquals(again.status, 304);
    assertEquals(again.headers.get("content-security-policy"), PORTAL_CSP);
    assertEquals(await again.text(), "");
  } finally {
    close();
  }
});

Deno.test("the page routes are mounted in the service", () => {
  assert(routeGroups.includes(portalPageRoutes));
});

Deno.test("base58 and base64 match the reference implementations", () => {
  const cases = [
    new Uint8Array([]),
    new Uint8Array([0]),
    new Uint8Array([0, 0, 1, 2, 255]),
    new Uint8Array(64).fill(255),
    ...Array.from({ length: 50 }, (_, i) => crypto.getRandomValues(new Uint8Array(1 + i * 2))),
  ];
  for (const bytes of cases) {
    const b58 = base58Encode(bytes);
    assertEquals(b58, bs58.encode(bytes));
    assertEquals([...base58Decode(b58)], [...bytes]);
    const b64 = base64Encode(bytes);
    assertEquals([...base64Decode(b64)], [...bytes]);
  }
  let threw = false;
  try {
    base58Decode("0OIl");
  } catch {
    threw = true;
  }
  assert(threw, "characters outside the alphabet are refused");
});

function fakeWallet(name: string, chains = ["solana:devnet"]) {
  return {
    version: "1.0.0",
    name,
    icon: "data:image/svg+xml;base64,PHN2Zy8+",
    chains,
    accounts: [],
    features: {
      "standard:connect": { version: "1.0.0", connect: () => Promise.resolve({ accounts: [] }) },
    },
  };
}

Deno.test("Wallet Standard discovery: wallets registered before and after the page loads", () => {
  const target = new EventTarget();
  const announce = (wallet: unknown) => {
    const callback = ({ register }: { register: (w: unknown) => void }) => register(wallet);
    target.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: callback }));
    target.addEventListener(
      "wallet-standard:app-ready",
      (e) => callback((e as CustomEvent).detail),
    );
  };
  // Loaded before the page: nobody hears this dispatch; the wallet waits for app-ready.
  announce(fakeWallet("Early"));
  const registry = discoverWallets(target);
  const names = () => (registry.get() as { name: string }[]).map((w) => w.name);
  assertEquals(names(), ["Early"]);

  let changes = 0;
  registry.on(() => changes++);
  announce(fakeWallet("Late"));
  assertEquals(names(), ["Early", "Late"]);
  assertEquals(changes, 1);

  // Not Solana, no connect feature, or a duplicate name: not offered to the user.
  announce(fakeWallet("Sui only", ["sui:mainnet"]));
  announce({ ...fakeWallet("No connect"), features: {} });
  announce(fakeWallet("Late"));
  assertEquals(names(), ["Early", "Late"]);

  // A throwing callback can't break discovery.
  const logged: unknown[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => logged.push(a);
  try {
    target.dispatchEvent(
      new CustomEvent("wallet-standard:register-wallet", {
        detail: () => {
          throw new Error("boom");
        },
      }),
    );
  } finally {
    console.error = error;
  }
  assertEquals(logged.length, 1);
  announce(fakeWallet("After boom"));
  assertEquals(registry.get().length, 3);
});

Deno.test("wallet errors are classified the way the page explains them", () => {
  assertEquals(classifyWalletError({ code: 4001, message: "x" }), "rejected");
  assertEquals(classifyWalletError(new Error("User rejected the request.")), "rejected");
  assertEquals(classifyWalletError(new Error("Approval Denied")), "rejected");
  assertEquals(
    classifyWalletError(
      new Error(
        "Simulation failed: Attempt to debit an account but found no record of a prior credit.",
      ),
    ),
    "insufficient",
  );
  assertEquals(
    classifyWalletError(new Error("Transfer: insufficient lamports 5, need 66666667")),
    "insufficient",
  );
  assertEquals(classifyWalletError(new Error("custom program error: 0x1")), "insufficient");
  assertEquals(classifyWalletError({ code: 4100, message: "Unauthorized" }), "unauthorized");
  assertEquals(classifyWalletError(new Error("blockhash not found")), "other");
  assertEquals(classifyWalletError("weird"), "other");
});

Deno.test("chains, amounts and addresses are shown as a user expects", () => {
  assertEquals(chainFor("mainnet-beta"), "solana:mainnet");
  assertEquals(chainFor("devnet"), "solana:devnet");
  assertEquals(chainFor("localnet"), "solana:localnet");
  assertEquals(formatSol("66666667"), "0.066666667 SOL");
  assertEquals(formatSol("1000000000"), "1 SOL");
  assertEquals(formatSol("18446744073709551615"), "18446744073.709551615 SOL");
  assertEquals(formatUnits("10000000", 6), "10");
  assertEquals(formatUnits("0", 9), "0");
  assertEquals(shortAddress("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"), "9xQe…VFin");
});
