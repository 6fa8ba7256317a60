/**
 * Local defaults kept under DATA_DIR: a generated treasury keypair and key pepper, created on
 * first start with owner-only permissions and reused afterwards. Deploy mode never comes here.
 */
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";

export interface LocalSecrets {
  treasury: Keypair;
  pepper: string;
}

async function readOrCreate(path: string, create: () => string): Promise<string> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    const value = create();
    await Deno.writeTextFile(path, value + "\n", { mode: 0o600, createNew: true });
    return value;
  }
}

export async function localSecrets(dataDir: string): Promise<LocalSecrets> {
  await Deno.mkdir(dataDir, { recursive: true });
  const treasuryJson = await readOrCreate(
    `${dataDir}/treasury.json`,
    () => JSON.stringify(Array.from(Keypair.generate().secretKey)),
  );
  const pepper = await readOrCreate(
    `${dataDir}/key-pepper`,
    () => bs58.encode(crypto.getRandomValues(new Uint8Array(32))),
  );
  return { treasury: Keypair.fromSecretKey(Uint8Array.from(JSON.parse(treasuryJson))), pepper };
}

/** A keypair in the Solana CLI's JSON format (an array of 64 numbers). */
export async function saveKeypair(path: string, kp: Keypair): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(Array.from(kp.secretKey)), { mode: 0o600 });
}
