/**
 * The stablecoin the access fee can be paid in, as the chain has it: read once at start, so the
 * decimals in a quote and the token program the payment goes through are the mint's own, never a
 * remembered constant. A mint the portal's plain TransferChecked could not pay in full (a transfer
 * fee, a transfer hook, non-transferable) is refused at start rather than at the first payment.
 */
import { type Connection, PublicKey } from "@solana/web3.js";
import {
  getNonTransferable,
  getTransferFeeConfig,
  getTransferHook,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackMint,
} from "@solana/spl-token";

export interface Stablecoin {
  mint: PublicKey;
  decimals: number;
  /** SPL Token or Token-2022: the program that owns the mint and carries its transfers. */
  programId: PublicKey;
}

/** Why the configured stablecoin cannot be used; the message names the setting and the mint. */
export class StablecoinRefused extends Error {}

export async function readStablecoin(
  connection: Connection,
  mint: PublicKey,
  configuredDecimals: number | null,
): Promise<Stablecoin> {
  const name = `STABLECOIN_MINT: ${mint.toBase58()}`;
  const info = await connection.getAccountInfo(mint, "confirmed");
  if (!info) throw new StablecoinRefused(`${name} does not exist on this chain`);
  const programId = [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID].find((p) => p.equals(info.owner));
  if (!programId) {
    throw new StablecoinRefused(
      `${name} is owned by ${info.owner.toBase58()}, not the SPL Token or Token-2022 program`,
    );
  }
  let parsed;
  try {
    parsed = unpackMint(mint, info, programId);
  } catch {
    throw new StablecoinRefused(`${name} is not an initialized token mint`);
  }
  if (!parsed.isInitialized) throw new StablecoinRefused(`${name} is not initialized`);
  if (configuredDecimals !== null && configuredDecimals !== parsed.decimals) {
    throw new StablecoinRefused(
      `STABLECOIN_DECIMALS: ${configuredDecimals}, but the mint ${mint.toBase58()} has ${parsed.decimals} decimals (leave it unset to use the mint's)`,
    );
  }
  const fee = getTransferFeeConfig(parsed);
  if (
    fee &&
    (fee.olderTransferFee.transferFeeBasisPoints > 0 ||
      fee.newerTransferFee.transferFeeBasisPoints > 0)
  ) {
    throw new StablecoinRefused(`${name} charges a transfer fee: the treasury would get less`);
  }
  const hook = getTransferHook(parsed);
  if (hook && !hook.programId.equals(PublicKey.default)) {
    throw new StablecoinRefused(`${name} has a transfer hook, which a payment cannot carry`);
  }
  if (getNonTransferable(parsed)) throw new StablecoinRefused(`${name} is non-transferable`);
  return { mint, decimals: parsed.decimals, programId };
}
