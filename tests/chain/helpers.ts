/** Shared setup for the chain tests: a chain per test file, clients, raw JSON-RPC calls. */
import {
  Connection,
  type Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  type Signer,
  Transaction,
  type TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import { type ChainOptions, type EmbeddedChain, startChain } from "../../src/chain/mod.ts";

export function start(opts: ChainOptions = {}): Promise<EmbeddedChain> {
  return startChain({ port: 0, quiet: true, ...opts });
}

/**
 * A "confirmed" Connection. With running slots, test chains are fast enough that web3.js's
 * 30 s blockhash cache would hand out hashes older than the 150-block window, so it is turned
 * off; with manual slots it stays on (web3.js would otherwise wait for a new blockhash).
 */
export function connect(chain: EmbeddedChain, opts: { manualSlots?: boolean } = {}): Connection {
  const conn = new Connection(chain.url, "confirmed");
  if (!opts.manualSlots) {
    (conn as unknown as { _disableBlockhashCaching: boolean })._disableBlockhashCaching = true;
  }
  return conn;
}

export interface RpcReply {
  status: number;
  body: {
    jsonrpc?: string;
    id?: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  };
}

export async function rpc(chain: EmbeddedChain, method: string, params: unknown[] = []) {
  const res = await fetch(chain.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: res.status, body: await res.json() } as RpcReply;
}

export async function rawPost(
  chain: EmbeddedChain,
  body: string,
): Promise<RpcReply & { text: string }> {
  const res = await fetch(chain.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, text };
}

/** Funds an account from the faucet and waits until it is visible at "confirmed". */
export async function fund(chain: EmbeddedChain, to: PublicKey, sol = 10): Promise<void> {
  chain.airdrop(to.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
  await Promise.resolve();
}

/** Builds and signs a legacy transaction on the chain's current blockhash. */
export async function signed(
  conn: Connection,
  payer: Keypair,
  ixs: TransactionInstruction[],
  extraSigners: Signer[] = [],
  commitment: "processed" | "confirmed" = "processed",
): Promise<Transaction> {
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash(commitment);
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight });
  tx.add(...ixs);
  tx.sign(payer, ...extraSigners);
  return tx;
}

export async function waitFor<T>(
  f: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 5_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * web3.js closes its PubSub socket 500 ms after the last subscription ends; waiting for that
 * keeps Deno's resource sanitizer quiet.
 */
export function settleWebSocket(): Promise<void> {
  return new Promise((r) => setTimeout(r, 650));
}

/**
 * Simulates exactly these bytes. (web3.js's legacy-Transaction overload swaps in a cached
 * blockhash, which would invalidate the signatures of the transaction we go on to send.)
 */
export function simulate(conn: Connection, tx: Transaction, accounts: PublicKey[] = []) {
  return conn.simulateTransaction(VersionedTransaction.deserialize(tx.serialize()), {
    commitment: "processed",
    accounts: accounts.length
      ? { encoding: "base64", addresses: accounts.map((a) => a.toBase58()) }
      : undefined,
  });
}
