/**
 * The portal page in a real browser (Debian's headless Chromium through playwright-core) against
 * the whole service on the embedded chain. A test wallet is registered on the page through the
 * Wallet Standard, exactly as an extension would; its signMessage / signAndSendTransaction call
 * back into this test, which signs with a local Keypair and sends to the embedded chain's RPC.
 * The page itself never sees a private key, and neither does the service.
 *
 * Screenshots of every step land in artifacts/portal/ (gitignored).
 * Needs Chromium at /usr/bin/chromium (or $CHROMIUM_PATH): `apt-get update && apt-get install -y chromium`.
 */
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { Connection, Keypair, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import {
  FixedPriceSource,
  type PriceSource,
  PriceUnavailable,
  type SolPrice,
} from "../../src/pricing/price-source.ts";
import { assert, assertEquals, assertMatch, assertNotEquals } from "../support/assert.ts";
import { bearer, type Harness, signMessage, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { allEvents } from "../reliability/support.ts";

const CHROMIUM = findChromium();
const ARTIFACTS = new URL("../../artifacts/portal/", import.meta.url);
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const WALLET_NAME = "E2E Test Wallet";

if (!CHROMIUM) {
  console.warn(
    "SKIPPED portal e2e: no Chromium at /usr/bin/chromium, /usr/bin/chromium-browser or $CHROMIUM_PATH. " +
      "Install it with: apt-get update && apt-get install -y chromium",
  );
}

function findChromium(): string | null {
  const candidates = [
    Deno.env.get("CHROMIUM_PATH"),
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
  ];
  for (const p of candidates) {
    if (!p) continue;
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // not here; try the next one
    }
  }
  return null;
}

/** A price feed the test can take down, for the "price unavailable" state, or move. */
class SwitchablePrice implements PriceSource {
  down = false;
  usd = 150;
  solUsd(): Promise<SolPrice> {
    if (this.down) return Promise.reject(new PriceUnavailable("test: feed down"));
    return new FixedPriceSource(this.usd, Date.now).solUsd();
  }
}

interface Served {
  h: Harness;
  base: string;
  price: SwitchablePrice;
  /** Moves the service's clock (the chain keeps the real time): a quote made in the past. */
  clockOffsetMs: number;
  close(): Promise<void>;
}

/** The service on a real port, with PUBLIC_BASE_URL equal to the origin the browser uses. */
async function serve(): Promise<Served> {
  let handler: (req: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (req) => handler(req),
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const price = new SwitchablePrice();
  const clock = () => Date.now() + served.clockOffsetMs;
  const h = await startHarness({ env: { PUBLIC_BASE_URL: base }, price, clock });
  handler = (req) => h.app.fetch(req);
  const served: Served = {
    h,
    base,
    price,
    clockOffsetMs: 0,
    async close() {
      await server.shutdown();
      await h.close();
    },
  };
  return served;
}

async function launch(): Promise<Browser> {
  // launch() gives every run a fresh temporary profile (its own --user-data-dir), removed on close.
  return await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: FLAGS });
}

type WalletMode = "normal" | "reject" | "hold" | "signOnly" | "declineFirstPayment";

interface TestWallet {
  keypair: Keypair;
  /** Transactions signed in "hold" mode and not yet sent. */
  held: Uint8Array[];
}

/**
 * Opens the page with a Wallet Standard wallet registered in it. `mode` picks its behaviour:
 * normal; reject (the user declines every request); hold (signs and reports a signature but
 * doesn't send yet, so the page has to wait); signOnly (no signAndSendTransaction feature);
 * declineFirstPayment (the user declines the first payment, then approves).
 */
async function openPage(
  ctx: BrowserContext,
  s: Served,
  wallet: TestWallet | null,
  mode: WalletMode = "normal",
): Promise<{ page: Page; problems: string[] }> {
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to (load|execute|apply|connect)/i.test(m.text())) {
      problems.push(`CSP: ${m.text()}`);
    }
  });
  if (wallet) {
    const connection = new Connection(s.h.chain.url, "confirmed");
    await page.exposeFunction("__e2eWallet", async (op: string, data: number[]) => {
      if (op === "signMessage") {
        return Array.from(await signMessage(wallet.keypair, Uint8Array.from(data)));
      }
      if (op === "signAndSend") {
        const tx = Transaction.from(Uint8Array.from(data));
        tx.partialSign(wallet.keypair);
        const raw = tx.serialize();
        if (mode === "hold") {
          wallet.held.push(raw);
          return Array.from(tx.signature!);
        }
        const sig = await connection.sendRawTransaction(raw, { preflightCommitment: "confirmed" });
        return Array.from(bs58.decode(sig));
      }
      if (op === "sign") {
        const tx = Transaction.from(Uint8Array.from(data));
        tx.partialSign(wallet.keypair);
        return Array.from(tx.serialize());
      }
      throw new Error(`unknown wallet op ${op}`);
    });
    await page.addInitScript(injectWallet, {
      name: WALLET_NAME,
      address: wallet.keypair.publicKey.toBase58(),
      publicKey: Array.from(wallet.keypair.publicKey.toBytes()),
      mode,
    });
  }
  await page.goto(s.base + "/");
  return { page, problems };
}

/**
 * Runs in the page before its scripts, like an extension's content script: a minimal wallet
 * announced with the Wallet Standard's register-wallet / app-ready events.
 */
function injectWallet(
  args: { name: string; address: string; publicKey: number[]; mode: WalletMode },
) {
  type Bridge = (op: string, data: number[]) => Promise<number[]>;
  const bridge = (globalThis as unknown as { __e2eWallet: Bridge }).__e2eWallet;
  const chains = ["solana:mainnet", "solana:devnet", "solana:testnet", "solana:localnet"];
  const account = Object.freeze({
    address: args.address,
    publicKey: Uint8Array.from(args.publicKey),
    chains,
    features: ["solana:signMessage", "solana:signAndSendTransaction", "solana:signTransaction"],
  });
  let accounts: readonly unknown[] = [];
  const listeners = new Set<(p: unknown) => void>();
  const rejected = () => Object.assign(new Error("User rejected the request."), { code: 4001 });
  let paymentsAsked = 0;
  const features: Record<string, unknown> = {
    "standard:connect": {
      version: "1.0.0",
      connect() {
        accounts = [account];
        for (const l of listeners) l({ accounts });
        return Promise.resolve({ accounts });
      },
    },
    "standard:disconnect": {
      version: "1.0.0",
      disconnect() {
        accounts = [];
        return Promise.resolve();
      },
    },
    "standard:events": {
      version: "1.0.0",
      on(_event: string, l: (p: unknown) => void) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    },
    "solana:signMessage": {
      version: "1.0.0",
      signMessage(...inputs: { message: Uint8Array }[]) {
        if (args.mode === "reject") return Promise.reject(rejected());
        return Promise.all(inputs.map(async (i) => ({
          signedMessage: i.message,
          signature: Uint8Array.from(await bridge("signMessage", Array.from(i.message))),
        })));
      },
    },
    "solana:signTransaction": {
      version: "1.0.0",
      supportedTransactionVersions: ["legacy", 0],
      signTransaction(...inputs: { transaction: Uint8Array }[]) {
        if (args.mode === "reject") return Promise.reject(rejected());
        return Promise.all(inputs.map(async (i) => ({
          signedTransaction: Uint8Array.from(await bridge("sign", Array.from(i.transaction))),
        })));
      },
    },
  };
  if (args.mode !== "signOnly") {
    features["solana:signAndSendTransaction"] = {
      version: "1.0.0",
      supportedTransactionVersions: ["legacy", 0],
      signAndSendTransaction(...inputs: { transaction: Uint8Array; chain: string }[]) {
        if (args.mode === "declineFirstPayment" && paymentsAsked++ === 0) {
          return Promise.reject(rejected());
        }
        return Promise.all(inputs.map(async (i) => {
          if (!chains.includes(i.chain)) throw new Error(`unsupported chain ${i.chain}`);
          return {
            signature: Uint8Array.from(await bridge("signAndSend", Array.from(i.transaction))),
          };
        }));
      },
    };
  }
  const wallet = {
    version: "1.0.0",
    name: args.name,
    icon:
      "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiPjxyZWN0IHdpZHRoPSIxIiBoZWlnaHQ9IjEiIGZpbGw9IiM2NjMzOTkiLz48L3N2Zz4=",
    chains,
    features,
    get accounts() {
      return accounts;
    },
  };
  const callback = ({ register }: { register: (w: unknown) => void }) => register(wallet);
  globalThis.dispatchEvent(
    new CustomEvent("wallet-standard:register-wallet", { detail: callback }),
  );
  globalThis.addEventListener(
    "wallet-standard:app-ready",
    (e) => callback((e as CustomEvent).detail),
  );
}

let shotNo = 0;
async function shot(page: Page, name: string) {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  const file = new URL(`${String(++shotNo).padStart(2, "0")}-${name}.png`, ARTIFACTS);
  // The notice bar sticks to the screen bottom, so a full-page capture would show it across the
  // middle; the page's print styles put it back in the flow (an injected style would break CSP).
  await page.emulateMedia({ media: "print" });
  await page.screenshot({ path: file.pathname, fullPage: true });
  await page.emulateMedia({ media: "screen" });
}

const me = (s: Served, apiKey: string) => s.h.request("/v1/me", { headers: bearer(apiKey) });

async function statusOf(s: Served, apiKey: string) {
  const res = await me(s, apiKey);
  await res.body?.cancel();
  return res.status;
}

async function connectAndSignIn(page: Page, wallet: TestWallet) {
  await page.getByRole("button", { name: `Connect ${WALLET_NAME}` }).click();
  await page.locator("#signed-in-address").waitFor();
  assertEquals(
    await page.locator("#signed-in-address").textContent(),
    wallet.keypair.publicKey.toBase58(),
  );
}

async function revealedKey(page: Page) {
  const input = page.locator("#api-key");
  await input.waitFor();
  return await input.inputValue();
}

Deno.test({
  name:
    "portal e2e: connect -> pay in SOL -> key once -> works -> rotate -> delete -> create again",
  ignore: !CHROMIUM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const s = await serve();
    const browser = await launch();
    try {
      const ctx = await browser.newContext({
        viewport: { width: 1100, height: 900 },
        permissions: ["clipboard-read", "clipboard-write"],
      });
      const wallet: TestWallet = { keypair: s.h.fundedWallet(2), held: [] };
      const { page, problems } = await openPage(ctx, s, wallet);

      // Pricing from /v1/pricing and the wallet found through the Wallet Standard.
      await page.getByText("$10.00 once per purchase").waitFor();
      await page.getByRole("button", { name: `Connect ${WALLET_NAME}` }).waitFor();
      await shot(page, "landing");

      await connectAndSignIn(page, wallet);
      await shot(page, "signed-in");

      const before = await s.h.services.connection.getBalance(s.h.treasury.publicKey);
      // The progress panel may be up for only a moment (the chain confirms in a few 40 ms slots),
      // so its appearance is recorded in the page instead of raced by a locator.
      await page.evaluate(`(() => {
        globalThis.__sawPayment = false;
        new MutationObserver(() => {
          if (document.getElementById("payment")) globalThis.__sawPayment = true;
        }).observe(document.body, { subtree: true, childList: true });
      })()`);
      await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
      if (await page.locator("#payment").isVisible()) await shot(page, "payment-in-progress");
      const create = page.getByRole("button", { name: "Create API key" });
      await create.waitFor({ timeout: 60_000 });
      assert(await page.evaluate("globalThis.__sawPayment"), "payment progress was shown");
      const after = await s.h.services.connection.getBalance(s.h.treasury.publicKey);
      assertEquals(after - before, 66_666_667, "USD 10 at 150 USD/SOL reached the treasury");
      await page.getByText("Paid 0.066666667 SOL ($10.00)").waitFor();
      await shot(page, "paid");

      // The key, shown once, with the warning; the copy button puts exactly it on the clipboard.
      await create.click();
      const key1 = await revealedKey(page);
      assertMatch(key1, /^tcb_live_[0-9a-f]+_[1-9A-HJ-NP-Za-km-z]+$/);
      await page.getByText("You will not see this key again").waitFor();
      await page.getByRole("button", { name: "Copy key" }).click();
      await page.getByText("API key copied to the clipboard.").waitFor();
      assertEquals(await page.evaluate("navigator.clipboard.readText()"), key1);
      await shot(page, "key-shown-once");

      assertEquals(await statusOf(s, key1), 200);
      // The call above counts as today's usage, which the page shows against the limits.
      await page.getByRole("button", { name: "Refresh usage" }).click();
      await page.getByText("1 today").waitFor();
      assertEquals(await page.locator("meter").count(), 2);

      await page.getByRole("button", { name: "I've stored it safely" }).click();
      assertEquals(await page.locator("#api-key").count(), 0);
      assert(!(await page.content()).includes(key1), "the key is gone from the page");

      // Webhooks: an endpoint added on the page shows its secret once and is the key's.
      await page.getByLabel("Endpoint URL").fill("https://hooks.example.com/tokens");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const hookSecret = await page.locator("#webhook-secret").inputValue();
      assertMatch(hookSecret, /^whsec_/);
      const hooks = await (await s.h.request("/v1/webhooks", { headers: bearer(key1) })).json();
      assertEquals(hooks.items.map((i: { url: string }) => i.url), [
        "https://hooks.example.com/tokens",
      ]);
      await shot(page, "webhook-added");
      await page.getByRole("button", { name: "Secret stored" }).click();
      assert(!(await page.content()).includes(hookSecret), "the secret is gone from the page");
      await page.getByRole("button", { name: "Remove" }).click();
      await page.getByText("No endpoints yet.").waitFor();

      // Keyboard: Enter opens the confirmation, Escape cancels it and focus returns.
      const rotateBtn = page.getByRole("button", { name: "Rotate key…" });
      await rotateBtn.focus();
      await page.keyboard.press("Enter");
      await page.getByText("Rotate this key?").waitFor();
      await shot(page, "rotate-confirm");
      await page.keyboard.press("Escape");
      await page.getByText("Cancelled. Nothing changed.").waitFor();
      assertEquals(await page.evaluate("document.activeElement?.textContent"), "Rotate key…");
      assertEquals(await statusOf(s, key1), 200, "cancel changed nothing");
      // Escape cancels even when the focus has left the confirmation (a re-render, a click).
      await page.keyboard.press("Enter");
      await page.getByText("Rotate this key?").waitFor();
      await page.evaluate("document.activeElement?.blur()");
      await page.keyboard.press("Escape");
      await page.getByText("Rotate this key?").waitFor({ state: "detached" });

      await rotateBtn.click();
      await page.getByRole("button", { name: "Yes, rotate the key" }).click();
      await page.getByRole("heading", { name: "Your rotated API key" }).waitFor();
      const key2 = await revealedKey(page);
      assertNotEquals(key2, key1);
      await shot(page, "rotated");
      assertEquals(await statusOf(s, key1), 401, "the old key stopped at once");
      assertEquals(await statusOf(s, key2), 200);
      await page.getByRole("button", { name: "I've stored it safely" }).click();

      await page.getByRole("button", { name: "Delete key…" }).click();
      await page.getByText("Delete this key?").waitFor();
      await shot(page, "delete-confirm");
      await page.getByRole("button", { name: "Yes, delete the key" }).click();
      await page.getByText("No active API key on this purchase.").waitFor();
      await shot(page, "deleted");
      assertEquals(await statusOf(s, key2), 401);

      await page.getByRole("button", { name: "Create API key" }).click();
      const key3 = await revealedKey(page);
      assert(key3 !== key1 && key3 !== key2);
      assertEquals(await statusOf(s, key3), 200);
      assertNotEquals(key3.split("_")[2], key1.split("_")[2], "a new key id");
      assertEquals(await page.locator("article[data-purchase]").count(), 1, "same purchase");
      await shot(page, "created-again");

      // The session survives a reload (HttpOnly cookie): the key can be managed without the
      // wallet, and the secret is not shown again.
      await page.getByRole("button", { name: "I've stored it safely" }).click();
      await page.reload();
      await page.locator("#signed-in-address").waitFor();
      await page.getByText("To pay, connect the same wallet again.").waitFor();
      await page.getByRole("button", { name: "Rotate key…" }).waitFor();
      assert(!(await page.content()).includes(key3));

      await page.setViewportSize({ width: 390, height: 844 });
      await shot(page, "phone");
      // Nothing wider than the phone screen.
      const overflow = await page.evaluate("document.documentElement.scrollWidth") as number;
      assert(overflow <= 390, `page is ${overflow}px wide on a 390px screen`);

      await page.setViewportSize({ width: 1100, height: 900 });
      await page.getByRole("button", { name: "Sign out" }).click();
      // Signed in but not connected, the page shows Connect too: wait for the signed-out state.
      await page.locator("#signed-in-address").waitFor({ state: "detached" });
      await page.getByRole("button", { name: `Connect ${WALLET_NAME}` }).waitFor();
      // The Connect button was already there (signed in after the reload, wallet not connected):
      // wait for sign-out to clear the keys rather than count them at once.
      await page.getByRole("button", { name: "Rotate key…" }).waitFor({ state: "detached" });
      assertEquals(await statusOf(s, key3), 200, "signing out of the portal doesn't touch the key");

      assertEquals(problems, []);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});

Deno.test({
  name: "portal e2e: every failure state is explained",
  ignore: !CHROMIUM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const s = await serve();
    const browser = await launch();
    const fresh = () => browser.newContext({ viewport: { width: 900, height: 800 } });
    const allProblems: string[] = [];
    try {
      await t.step("no wallet installed", async () => {
        const ctx = await fresh();
        const { page, problems } = await openPage(ctx, s, null);
        await page.getByText("No Solana wallet found in this browser.").waitFor();
        await shot(page, "fail-no-wallet");
        allProblems.push(...problems);
        await ctx.close();
      });

      await t.step("user rejected the sign-in", async () => {
        const ctx = await fresh();
        const wallet = { keypair: s.h.fundedWallet(1), held: [] };
        const { page, problems } = await openPage(ctx, s, wallet, "reject");
        await page.getByRole("button", { name: `Connect ${WALLET_NAME}` }).click();
        await page.getByRole("alert").getByText("You declined the request in your wallet")
          .waitFor();
        assertEquals(await page.locator("#signed-in-address").count(), 0);
        await shot(page, "fail-rejected");
        allProblems.push(...problems);
        await ctx.close();
      });

      await t.step("insufficient balance", async () => {
        const ctx = await fresh();
        const wallet = { keypair: Keypair.generate(), held: [] }; // never funded
        const { page, problems } = await openPage(ctx, s, wallet);
        await connectAndSignIn(page, wallet);
        await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
        await page.getByRole("alert").getByText("doesn't have enough balance").waitFor();
        // Back to a state where paying again is possible.
        await page.getByRole("button", { name: "Pay $10.00 for access" }).waitFor();
        await shot(page, "fail-insufficient-balance");
        allProblems.push(...problems);
        await ctx.close();
      });

      await t.step("payment sent but not yet confirmed: progress, then confirmed", async () => {
        const ctx = await fresh();
        const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
        const { page, problems } = await openPage(ctx, s, wallet, "hold");
        await connectAndSignIn(page, wallet);
        await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
        await page.getByText("Payment sent. Waiting for the network to confirm it.").first()
          .waitFor();
        await page.locator("#payment progress").waitFor();
        await page.getByText(/\d+ s elapsed/).waitFor();
        assertEquals(await page.getByRole("button", { name: "Create API key" }).count(), 0);
        await shot(page, "fail-payment-pending");
        // The wallet's transaction reaches the network late; the page notices by itself.
        assertEquals(wallet.held.length, 1);
        await new Connection(s.h.chain.url, "confirmed").sendRawTransaction(wallet.held[0]);
        await page.getByRole("button", { name: "Create API key" }).waitFor({ timeout: 60_000 });
        await shot(page, "fail-payment-confirmed-late");
        allProblems.push(...problems);
        await ctx.close();
      });

      await t.step(
        "paid after the quote expired, the price having halved: the difference is offered and buys access",
        async () => {
          const ctx = await fresh();
          const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
          const { page, problems } = await openPage(ctx, s, wallet, "hold");
          const connection = new Connection(s.h.chain.url, "confirmed");
          // Quoted two hours ago at $300/SOL; it lands now, at $150/SOL.
          s.clockOffsetMs = -2 * 3_600_000;
          s.price.usd = 300;
          await connectAndSignIn(page, wallet);
          await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
          await page.getByText("Payment sent. Waiting for the network to confirm it.").first()
            .waitFor();
          s.clockOffsetMs = 0;
          s.price.usd = 150;
          await connection.sendRawTransaction(wallet.held[0]);
          const difference = page.getByRole("button", { name: "Pay the difference" });
          await difference.waitFor({ timeout: 60_000 });
          await page.getByText(/short of the fee at the price when it landed/).waitFor();
          assertEquals(await page.getByRole("button", { name: "Create API key" }).count(), 0);
          await shot(page, "fail-underpaid");
          await difference.click();
          await page.getByText("Payment sent. Waiting for the network to confirm it.").first()
            .waitFor();
          assertEquals(wallet.held.length, 2);
          await connection.sendRawTransaction(wallet.held[1]);
          await page.getByRole("button", { name: "Create API key" }).waitFor({ timeout: 60_000 });
          await shot(page, "fail-underpaid-topped-up");
          allProblems.push(...problems);
          await ctx.close();
        },
      );

      await t.step("wallet that can sign but not send", async () => {
        const ctx = await fresh();
        const wallet = { keypair: s.h.fundedWallet(1), held: [] };
        const { page, problems } = await openPage(ctx, s, wallet, "signOnly");
        await connectAndSignIn(page, wallet);
        await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
        await page.getByRole("alert").getByText("can sign transactions but can't send them")
          .waitFor();
        await shot(page, "fail-sign-only-wallet");
        allProblems.push(...problems);
        await ctx.close();
      });

      await t.step("price unavailable, then back", async () => {
        s.price.down = true;
        const ctx = await fresh();
        const wallet = { keypair: s.h.fundedWallet(1), held: [] };
        const { page, problems } = await openPage(ctx, s, wallet);
        await page.getByText("Prices are temporarily unavailable").waitFor();
        await connectAndSignIn(page, wallet);
        const pay = page.getByRole("button", { name: /^Pay .*for access$/ });
        assert(await pay.isDisabled(), "no SOL payment without a price");
        await page.getByText("Paying in SOL needs a current SOL price").waitFor();
        await shot(page, "fail-price-unavailable");
        s.price.down = false;
        await page.getByRole("button", { name: "Retry now" }).click();
        await page.getByText("$10.00 once per purchase").waitFor();
        assert(await page.getByRole("button", { name: "Pay $10.00 for access" }).isEnabled());
        allProblems.push(...problems);
        await ctx.close();
      });

      assertEquals(allProblems, []);
    } finally {
      s.price.down = false;
      s.price.usd = 150;
      s.clockOffsetMs = 0;
      await browser.close();
      await s.close();
    }
  },
});

/** Console errors and warnings from every page of the context, from the first load on. */
function consoleProblems(ctx: BrowserContext): string[] {
  const out: string[] = [];
  ctx.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") out.push(`${m.type()}: ${m.text()}`);
  });
  ctx.on("weberror", (e) => out.push(`page error: ${e.error().message}`));
  return out;
}

/** The settled text of the polite status line, which must never claim what didn't happen. */
const statusText = (page: Page) => page.locator("#status").textContent();

Deno.test({
  name:
    "portal e2e: a timed-out payment can be checked again or abandoned, and no message claims a payment that did not happen",
  ignore: !CHROMIUM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const s = await serve();
    const browser = await launch();
    const conn = new Connection(s.h.chain.url, "confirmed");
    try {
      const timedOut = async (ctx: BrowserContext, wallet: TestWallet) => {
        const { page, problems } = await openPage(ctx, s, wallet, "hold");
        await connectAndSignIn(page, wallet);
        await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
        await page.locator("#payment-step").getByText("Payment sent.").waitFor();
        // The page's clock, not the test's: 90 s pass at once.
        await ctx.clock.fastForward(91_000);
        await page.getByText("Not confirmed after 90 s.").waitFor();
        await page.getByRole("button", { name: "Check again" }).waitFor();
        await page.getByRole("button", { name: "Stop waiting" }).waitFor();
        assertEquals(await page.getByRole("button", { name: /^Pay / }).count(), 0);
        return { page, problems };
      };

      await t.step(
        "stop waiting: buy again is possible, the quote stays listed and is checked honestly",
        async () => {
          const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
          await ctx.clock.install();
          const errors = consoleProblems(ctx);
          const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
          const { page, problems } = await timedOut(ctx, wallet);
          await shot(page, "payment-timed-out");

          await page.getByRole("button", { name: "Stop waiting" }).click();
          await page.getByRole("button", { name: "Pay $10.00 for access" }).waitFor();
          assert(!(await statusText(page))?.includes("Payment sent"), await statusText(page) ?? "");
          await page.getByText("Payments not confirmed (1)").click();
          await page.getByRole("button", { name: "Check payment" }).click();
          await page.getByText("No payment for that quote has reached the network.").waitFor();
          assert(!(await page.content()).includes("Payment sent"), "nothing was sent yet");
          await shot(page, "payment-abandoned-checked");

          // The wallet's transaction lands after all: checking the listed quote finds it.
          await conn.sendRawTransaction(wallet.held[0]);
          await page.getByText("Payments not confirmed (1)").click();
          await page.getByRole("button", { name: "Check payment" }).click();
          await page.getByRole("button", { name: "Create API key" }).waitFor({ timeout: 60_000 });
          assertEquals(await page.getByText("Payments not confirmed").count(), 0);
          assertEquals(problems, []);
          assertEquals(errors, []);
          await ctx.close();
        },
      );

      await t.step("check again: the late payment is found", async () => {
        const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
        await ctx.clock.install();
        const errors = consoleProblems(ctx);
        const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
        const { page, problems } = await timedOut(ctx, wallet);
        await conn.sendRawTransaction(wallet.held[0]);
        await page.getByRole("button", { name: "Check again" }).click();
        await page.getByRole("button", { name: "Create API key" }).waitFor({ timeout: 60_000 });
        await page.getByText("Payment confirmed. You can create your API key now.").waitFor();
        assertEquals(problems, []);
        assertEquals(errors, []);
        await ctx.close();
      });
    } finally {
      await browser.close();
      await s.close();
    }
  },
});

Deno.test({
  name: "portal e2e: a declined quote is replaced by the next one, which pays",
  ignore: !CHROMIUM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const s = await serve();
    const browser = await launch();
    try {
      const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
      const errors = consoleProblems(ctx);
      const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
      const { page, problems } = await openPage(ctx, s, wallet, "declineFirstPayment");
      await connectAndSignIn(page, wallet);
      const pay = page.getByRole("button", { name: "Pay $10.00 for access" });
      await pay.click();
      await page.getByRole("alert").getByText("You declined the request in your wallet").waitFor();
      await pay.waitFor();
      // Never signed, so never payable: not listed as a payment to check.
      assertEquals(await page.getByText("Payments not confirmed").count(), 0);
      await shot(page, "quote-declined");

      await pay.click();
      await page.getByRole("button", { name: "Create API key" }).waitFor({ timeout: 60_000 });
      assertEquals(await page.locator("article[data-purchase]").count(), 1);
      // The service keeps both quotes; the page lists only what can still matter, reload or not.
      const state = await page.evaluate("fetch('/portal/api/state').then((r) => r.json())") as {
        purchases: { status: string }[];
      };
      assertEquals(state.purchases.map((p) => p.status).sort(), ["paid", "quoted"]);
      await page.reload();
      await page.getByRole("button", { name: "Create API key" }).waitFor();
      assertEquals(await page.getByText("Payments not confirmed").count(), 0);
      await shot(page, "quote-replaced-paid");
      assertEquals(problems, []);
      assertEquals(errors, []);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});

/**
 * What a tap at the centre of the named button would reach: "" when it is the button itself,
 * else a description of what covers it.
 */
/**
 * A build its payer did not sign in time: the watcher expires it, the key panel lists it with
 * "Refresh build", the refresh shows the same mint under a new blockhash with the fee as quoted,
 * and the wallet signs and sends the refreshed transaction from the page; it lands. At 360 px
 * nothing covers the buttons and nothing scrolls sideways (long addresses, the base64 box).
 */
async function slowSignerRefresh(
  s: Served,
  page: Page,
  wallet: TestWallet,
  key: string,
): Promise<string> {
  const res = await s.h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(key),
    json: {
      payer: wallet.keypair.publicKey.toBase58(),
      name: "Slow Signer",
      symbol: "SLOW",
      metadataUri: "https://example.com/m/slow.json",
      supply: "1000",
    },
  });
  const built = await res.json();
  assertEquals(res.status, 201, JSON.stringify(built));
  const height = await s.h.services.connection.getBlockHeight("confirmed");
  s.h.chain.advanceSlots(built.lastValidBlockHeight - height + 2);
  await sweepOpenBuilds(s.h.services);

  await page.getByRole("button", { name: "Refresh usage" }).click();
  const row = page.locator(`li[data-build="${built.mint}"]`);
  await row.getByText("expired").waitFor();
  assertEquals(await coverOf(page, "Refresh build"), "", "Refresh build is covered");
  await shot(page, "phone-build-expired");
  await page.getByRole("button", { name: "Refresh build" }).click();
  await page.locator("#refreshed-heading").getByText("Slow Signer refreshed").waitFor();
  // The chain keeps making 40 ms slots, so the refreshed blockhash lives about 6 s here: only
  // quick DOM reads until it is sent; the slower checks come after.
  const blockhash = await page.locator("#refreshed-blockhash").textContent();
  const sendName = `Sign and send with ${WALLET_NAME}`;
  assertEquals(await coverOf(page, sendName), "", "the send button is covered");
  const overflow = await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  ) as number;
  assert(overflow <= 0, `the refreshed build scrolls sideways by ${overflow} px at 360 px`);
  await page.getByRole("button", { name: sendName }).click();
  const sent = (await page.locator("#refreshed-sent code").textContent())!;
  assertNotEquals(blockhash, built.recentBlockhash);
  assertMatch((await page.locator("#refreshed-fee").textContent())!, /^Service fee as quoted: /);
  await shot(page, "phone-build-refreshed-sent");
  await s.h.waitForConfirmation(sent);
  await sweepOpenBuilds(s.h.services);
  const landed = await (await s.h.request(`/v1/tokens/${built.mint}`, { headers: bearer(key) }))
    .json();
  assertEquals([landed.status, landed.signature, landed.feeVerified], ["confirmed", sent, true]);
  const tx = await s.h.services.connection.getTransaction(sent, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  assertEquals(tx!.transaction.message.recentBlockhash, blockhash, "the refreshed message landed");
  await page.getByRole("button", { name: "Refresh usage" }).click();
  await row.getByText("confirmed").waitFor();
  assertEquals(await row.getByRole("button", { name: "Refresh build" }).count(), 0);
  return built.mint;
}

/**
 * The confirmed build's Update: a new uri in the form, the changes and costs shown, signed by the
 * connected authority on the page and relayed; once recorded landed the page says so and the
 * list shows the new uri. At 360 px nothing covers the send button or scrolls sideways.
 */
async function updateFromPage(s: Served, page: Page, key: string, mint: string) {
  const row = page.locator(`li[data-build="${mint}"]`);
  await row.getByText("https://example.com/m/slow.json").waitFor();
  await row.getByRole("button", { name: "Update", exact: true }).click();
  const uri = "https://example.com/m/slow-v2.json";
  await page.locator("#update-uri").fill(uri);
  await page.getByRole("button", { name: "Prepare update" }).click();
  await page.locator("#update-changes").getByText(uri).waitFor();
  assertMatch((await page.locator("#update-costs").textContent())!, /^Costs the authority /);
  const sendName = `Sign and send with ${WALLET_NAME}`;
  assertEquals(await coverOf(page, sendName), "", "the update's send button is covered");
  const overflow = await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  ) as number;
  assert(overflow <= 0, `the update scrolls sideways by ${overflow} px at 360 px`);
  await page.getByRole("button", { name: sendName }).click();
  await page.locator("#update-status").getByText("Update submitted.").waitFor();
  // The relay's follow-up job runs in the watcher, which this service doesn't start: the
  // landing is recorded through the update's own verification instead.
  const submitted = (await allEvents(s.h.kv)).find((e) => e.type === "TokenUpdateSubmitted");
  const { updateId, signature } = submitted!.data as { updateId: string; signature: string };
  await s.h.waitForConfirmation(signature);
  const verified = await s.h.request(
    `/v1/tokens/${mint}/updates/${updateId}?signature=${signature}`,
    { headers: bearer(key) },
  );
  assertEquals((await verified.json()).status, "landed");
  await page.locator("#update-status").getByText("Update landed.").waitFor({ timeout: 60_000 });
  await row.getByText(uri).waitFor();
  await shot(page, "phone-build-updated");
}

async function coverOf(page: Page, name: string): Promise<string> {
  // The page rebuilds its sections on each render (a reload of the state, an announcement), so
  // the button found may be replaced before it is measured: look again, a bounded number of times.
  for (let attempt = 1;; attempt++) {
    try {
      return await measureCover(page, name);
    } catch (e) {
      if (attempt >= 20 || !/not attached|detached/i.test(String(e))) throw e;
      await page.waitForTimeout(100);
    }
  }
}

async function measureCover(page: Page, name: string): Promise<string> {
  const button = page.getByRole("button", { name });
  await button.scrollIntoViewIfNeeded({ timeout: 5_000 });
  // Runs in the page; this file is type-checked without the DOM library, hence the anys.
  // deno-lint-ignore no-explicit-any
  return await button.evaluate((el: any) => {
    // deno-lint-ignore no-explicit-any
    const doc = (globalThis as any).document;
    const r = el.getBoundingClientRect();
    // Replaced by a re-render between finding and measuring it.
    if (!el.isConnected || r.width === 0) throw new Error("detached");
    const hit = doc.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit !== null && el.contains(hit)) return "";
    return hit
      ? `${hit.tagName}#${hit.id}.${hit.className} at ${JSON.stringify(r)}`
      : `nothing (off screen) at ${JSON.stringify(r)}`;
  });
}

Deno.test({
  name:
    "portal e2e: at 360 px wide everything is usable, nothing covers a button, no console error, localnet explained",
  ignore: !CHROMIUM,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const s = await serve();
    const browser = await launch();
    try {
      const ctx = await browser.newContext({
        viewport: { width: 360, height: 740 },
        permissions: ["clipboard-read", "clipboard-write"],
      });
      const errors = consoleProblems(ctx);
      const wallet: TestWallet = { keypair: s.h.fundedWallet(1), held: [] };
      const { page, problems } = await openPage(ctx, s, wallet);
      await page.getByText("$10.00 once per purchase").waitFor();
      await page.getByRole("button", { name: `Connect ${WALLET_NAME}` }).waitFor();
      // Signed out: no 401 in the console, no favicon 404.
      assertEquals(errors, []);
      // On the local chain the page says how to get a key instead.
      await page.locator("#localnet").getByText("task dev:key").waitFor();
      await page.locator("#localnet").getByText("task demo").waitFor();
      for (
        const [name, href] of [
          ["API reference", "/docs"],
          ["OpenAPI document", "/v1/openapi.json"],
          ["Example client (TypeScript)", "/examples/create-token.ts"],
        ]
      ) {
        const link = page.getByRole("navigation", { name: "For developers" })
          .getByRole("link", { name, exact: true });
        assertEquals(await link.getAttribute("href"), href);
        const res = await fetch(s.base + href);
        assertEquals(res.status, 200, href);
        await res.body?.cancel();
      }
      // What a token costs the network under each program, as /v1/pricing works it out, and a
      // pointer to the Token-2022 and vanity options.
      const { token } = await (await fetch(`${s.base}/v1/pricing`)).json();
      const costs = (await page.locator("#network-costs").textContent())!;
      for (
        const [program, lamports] of [
          ["SPL Token: ", token.networkLamports],
          ["Token-2022: at most ", token.token2022NetworkLamports],
        ]
      ) {
        const sol = `${Number(lamports) / 1e9} SOL`;
        const shown = `${program}${sol}${program.startsWith("SPL") ? " per token" : ""} (${
          BigInt(lamports).toLocaleString("en-US")
        } lamports)`;
        assert(costs.includes(shown), `"${shown}" in "${costs}"`);
      }
      const options = page.locator("#token-options");
      await options.getByText("vanity").waitFor();
      assertEquals(
        await options.getByRole("link", { name: "API reference" }).getAttribute("href"),
        "/docs",
      );
      // Only the configured currency is offered (no stablecoin configured here).
      await shot(page, "phone-signed-out");

      await connectAndSignIn(page, wallet);
      assertEquals(await page.getByText("Stablecoin").count(), 0);
      assertEquals(await page.locator('input[name="currency"]').count(), 0);
      // The status line is up ("Signed in as …") and must not sit on the Pay button.
      assert((await statusText(page))?.startsWith("Signed in"), await statusText(page) ?? "");
      assertEquals(await coverOf(page, "Pay $10.00 for access"), "", "the Pay button is covered");
      await shot(page, "phone-signed-in");

      await page.getByRole("button", { name: "Pay $10.00 for access" }).click();
      await page.getByRole("button", { name: "Create API key" }).click({ timeout: 60_000 });
      const key = await revealedKey(page);
      await page.getByText("Your API key is ready.").waitFor();
      // A copyable command using the key, right after it is shown.
      const command = await page.locator("#try-it").textContent();
      assertEquals(command, `curl -H "Authorization: Bearer ${key}" ${s.base}/v1/me`);
      assertEquals(await coverOf(page, "Copy command"), "", "Copy command is covered");
      await page.getByRole("button", { name: "Copy command" }).click();
      assertEquals(await page.evaluate("navigator.clipboard.readText()"), command);
      for (const name of ["Copy key", "I've stored it safely", "Refresh usage", "Rotate key…"]) {
        assertEquals(await coverOf(page, name), "", `${name} is covered`);
      }
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      ) as number;
      assert(overflow <= 0, `the page scrolls sideways by ${overflow} px at 360 px`);
      await shot(page, "phone-key-shown");
      const mint = await slowSignerRefresh(s, page, wallet, key);
      await updateFromPage(s, page, key, mint);

      await page.setViewportSize({ width: 1280, height: 900 });
      await shot(page, "desktop-key-shown");
      assertEquals(problems, []);
      assertEquals(errors, []);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});
