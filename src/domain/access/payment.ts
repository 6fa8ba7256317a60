/**
 * The access-fee payment on chain: the unsigned transfer the wallet signs, and the check that
 * finds it again by its reference key once it is confirmed.
 */
import {
  type Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";

export interface PaymentRequest {
  wallet: PublicKey;
  treasury: PublicKey;
  currency: "SOL" | "STABLECOIN";
  amount: bigint;
  reference: PublicKey;
  stablecoin?: { mint: PublicKey; decimals: number };
}

export function paymentInstructions(r: PaymentRequest): TransactionInstruction[] {
  const ref = { pubkey: r.reference, isSigner: false, isWritable: false };
  if (r.currency === "SOL") {
    const ix = SystemProgram.transfer({
      fromPubkey: r.wallet,
      toPubkey: r.treasury,
      lamports: r.amount,
    });
    ix.keys.push(ref);
    return [ix];
  }
  if (!r.stablecoin) throw new Error("no stablecoin configured");
  const { mint, decimals } = r.stablecoin;
  const from = getAssociatedTokenAddressSync(mint, r.wallet, true);
  const to = getAssociatedTokenAddressSync(mint, r.treasury, true);
  const transfer = createTransferCheckedInstruction(from, mint, to, r.wallet, r.amount, decimals);
  transfer.keys.push(ref);
  return [
    createAssociatedTokenAccountIdempotentInstruction(r.wallet, to, r.treasury, mint),
    transfer,
  ];
}

export async function buildPaymentTransaction(connection: Connection, r: PaymentRequest) {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash("confirmed");
  const tx = new Transaction({ feePayer: r.wallet, blockhash, lastValidBlockHeight });
  tx.add(...paymentInstructions(r));
  const bytes = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
  return { transaction: bytes.toString("base64"), blockhash, lastValidBlockHeight };
}

export const newReference = () => Keypair.generate().publicKey;

export interface FoundPayment {
  signature: string;
  slot: number;
}

/**
 * Looks the reference up with getSignaturesForAddress and accepts the first landed transaction
 * signed by the wallet that moved at least the amount into the treasury.
 */
export async function findPayment(
  connection: Connection,
  r: PaymentRequest,
): Promise<FoundPayment | null> {
  const sigs = await connection.getSignaturesForAddress(r.reference, { limit: 20 }, "confirmed");
  for (const s of sigs) {
    if (s.err) continue;
    const tx = await connection.getTransaction(s.signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    if (!tx?.meta || tx.meta.err) continue;
    const keys = tx.transaction.message.getAccountKeys().staticAccountKeys;
    const signers = keys.slice(0, tx.transaction.message.header.numRequiredSignatures);
    if (!signers.some((k) => k.equals(r.wallet))) continue;
    if (received(tx.meta, keys, r) >= r.amount) return { signature: s.signature, slot: tx.slot };
  }
  return null;
}

function received(
  meta: {
    preBalances: number[];
    postBalances: number[];
    preTokenBalances?: TokenBalance[] | null;
    postTokenBalances?: TokenBalance[] | null;
  },
  keys: PublicKey[],
  r: PaymentRequest,
): bigint {
  if (r.currency === "SOL") {
    const i = keys.findIndex((k) => k.equals(r.treasury));
    return i < 0 ? 0n : BigInt(meta.postBalances[i]) - BigInt(meta.preBalances[i]);
  }
  const mint = r.stablecoin!.mint.toBase58();
  const owner = r.treasury.toBase58();
  const sum = (list: TokenBalance[] | null | undefined) =>
    (list ?? []).filter((b) => b.mint === mint && b.owner === owner)
      .reduce((acc, b) => acc + BigInt(b.uiTokenAmount.amount), 0n);
  return sum(meta.postTokenBalances) - sum(meta.preTokenBalances);
}

interface TokenBalance {
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string };
}
