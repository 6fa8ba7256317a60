/**
 * `deno task demo --update`: after the demo's creation, the token changes through the example
 * client's `updateToken` (examples/create-token.ts): its metadata points at a second hosted
 * document (its name and symbol come with it), and its metadata update authority goes to a new
 * address. Before and after are read from the chain, not from the service's answers.
 */
import { type Connection, Keypair, PublicKey } from "@solana/web3.js";
import { getTokenMetadata, TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import { updateToken, type UpdateTokenResult } from "../../examples/create-token.ts";
import { decodeMetadataAccount, metadataPda } from "../solana/token-metadata.ts";

export class DemoUpdateError extends Error {}

/** The token's metadata as the chain holds it. */
export interface OnChainMetadata {
  name: string;
  symbol: string;
  uri: string;
  updateAuthority: string | null;
}

export interface DemoUpdateResult {
  update: UpdateTokenResult;
  metadataUri: string;
  newUpdateAuthority: string;
  before: OnChainMetadata;
  after: OnChainMetadata;
  /** The authority's balance drop over the update, read from the chain. */
  lamportsSpent: bigint;
}

export async function readMetadata(connection: Connection, mint: string): Promise<OnChainMetadata> {
  const key = new PublicKey(mint);
  const account = await connection.getAccountInfo(key, "confirmed");
  if (account?.owner.equals(TOKEN_2022_PROGRAM_ID)) {
    const m = await getTokenMetadata(connection, key, "confirmed", TOKEN_2022_PROGRAM_ID);
    if (!m) throw new DemoUpdateError(`the mint ${mint} has no metadata on the chain`);
    return {
      name: m.name,
      symbol: m.symbol,
      uri: m.uri,
      updateAuthority: m.updateAuthority?.toBase58() ?? null,
    };
  }
  const md = await connection.getAccountInfo(metadataPda(key), "confirmed");
  if (!md) throw new DemoUpdateError(`the mint ${mint} has no Metaplex metadata account`);
  const m = decodeMetadataAccount(md.data);
  return { name: m.name, symbol: m.symbol, uri: m.uri, updateAuthority: m.updateAuthority };
}

export async function demoUpdate(o: {
  service: string;
  apiKey: string;
  authority: Keypair;
  mint: string;
  connection: Connection;
  imageBase64: string;
  log: (line: string) => void;
}): Promise<DemoUpdateResult> {
  const { log } = o;
  const before = await readMetadata(o.connection, o.mint);
  const balance = () => o.connection.getBalance(o.authority.publicKey, "confirmed");
  const balanceBefore = BigInt(await balance());
  log("");
  log("--update: a second hosted document, and the update authority to a new address");
  const hosted = await fetch(`${o.service}/v1/metadata`, {
    method: "POST",
    headers: { authorization: `Bearer ${o.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "Demo Token v2",
      symbol: "DEMO2",
      description: "The second document of deno task demo --update.",
      imageBase64: o.imageBase64,
    }),
  });
  const doc = await hosted.json();
  if (hosted.status !== 201) {
    throw new DemoUpdateError(
      `hosting the second document: ${hosted.status} ${JSON.stringify(doc)}`,
    );
  }
  // A fresh wallet address stands for the team's; the demo keeps no key to it.
  const team = Keypair.generate().publicKey.toBase58();
  const update = await updateToken({
    baseUrl: o.service,
    apiKey: o.apiKey,
    mint: o.mint,
    authority: o.authority,
    changes: { metadataUri: doc.metadataUri, updateAuthority: team },
    log: (line) => log(line),
    landTimeoutMs: 25_000,
  });
  if (update.status !== "landed") {
    throw new DemoUpdateError(
      `the update is ${update.status}, not landed${update.reason ? `: ${update.reason}` : ""}`,
    );
  }
  const after = await readMetadata(o.connection, o.mint);
  log("");
  log(`token updated (update ${update.updateId})`);
  log(`  update signature ${update.signature}`);
  log("  read from the chain   before -> after");
  for (const k of ["name", "symbol", "uri", "updateAuthority"] as const) {
    log(`    ${k.padEnd(16)} ${before[k]} -> ${after[k]}`);
  }
  const lamportsSpent = balanceBefore - BigInt(await balance());
  log(
    `  lamports spent ${lamportsSpent} (read from the chain); the update's costs said ` +
      update.totalLamports,
  );
  return {
    update,
    metadataUri: doc.metadataUri,
    newUpdateAuthority: team,
    before,
    after,
    lamportsSpent,
  };
}
