/**
 * `deno task sign` refuses what a token creation's signer must not sign: a transaction someone
 * else pays for, or one running a program a creation does not use. (Signing a real build is
 * covered end to end by the README walk-through test.)
 */
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from "@solana/web3.js";
import { Buffer } from "node:buffer";
import { assert, assertEquals } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BLOCKHASH = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N";

async function sign(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "sign", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function keypairFile(k: Keypair) {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(path, JSON.stringify([...k.secretKey]));
  return path;
}

const unsigned = (payer: PublicKey, ...ixs: TransactionInstruction[]) => {
  const tx = new Transaction({ feePayer: payer, recentBlockhash: BLOCKHASH }).add(...ixs);
  return tx.serialize({ requireAllSignatures: false }).toString("base64");
};

Deno.test("deno task sign: refuses a transaction another wallet pays, and an unknown program", async () => {
  const me = Keypair.generate();
  const other = Keypair.generate().publicKey;
  const path = await keypairFile(me);
  try {
    const transfer = SystemProgram.transfer({ fromPubkey: other, toPubkey: other, lamports: 1 });
    const notMine = await sign([unsigned(other, transfer), path]);
    assertEquals(notMine.code, 1, notMine.stderr);
    assert(notMine.stderr.includes("exactly one signer: your payer wallet"), notMine.stderr);
    assertEquals(notMine.stdout, "", "nothing signed is printed");

    const odd = new TransactionInstruction({
      programId: Keypair.generate().publicKey,
      keys: [],
      data: Buffer.from([1]),
    });
    const unknown = await sign([unsigned(me.publicKey, odd), path]);
    assertEquals(unknown.code, 1, unknown.stderr);
    assert(unknown.stderr.includes("calls an unexpected program"), unknown.stderr);
    assertEquals(unknown.stdout, "");
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("deno task sign: without both arguments it prints its usage and exits 2", async () => {
  const r = await sign(["AAAA"]);
  assertEquals(r.code, 2);
  assert(r.stderr.includes("usage: deno task sign <base64-transaction> <keypair.json>"), r.stderr);
});
