/**
 * Who may receive the supply. The whole supply goes to one address in a transaction nobody can
 * undo, so a recipient that can never move tokens is refused before anything is built.
 *
 * - A wallet address (on the ed25519 curve) is always accepted, funded or not: a fresh wallet is
 *   a normal recipient, and a typo of one can't be told from one anyway.
 * - An off-curve address (a PDA: multisig vault, program-owned escrow) is accepted only when an
 *   account already lives at it. Real vaults exist before they are used (a Squads vault holds
 *   the SOL that pays its rent); a mistyped address almost never lands on an existing off-curve
 *   account, so this keeps the multisig use case and catches the typo.
 * - An account owned by a token program (a token account or a mint) is refused: the tokens would
 *   go to an associated account of a token account, which no wallet controls.
 * - An executable account (a program) is refused for the same reason.
 *
 * The account is read in the build's RPC round trip together with the payer and beside the
 * simulation, so the policy costs no extra round trip.
 */
import { PublicKey, SystemProgram } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";

export interface RecipientAccount {
  owner: PublicKey;
  executable: boolean;
  lamports: number;
}

/** A message for `fields.recipient`, or null when the recipient is acceptable. */
export function recipientProblem(
  recipient: PublicKey,
  account: RecipientAccount | null,
): string | null {
  if (account) {
    if (account.owner.equals(TOKEN_PROGRAM_ID) || account.owner.equals(TOKEN_2022_PROGRAM_ID)) {
      return "is a token account or mint; pass the wallet that should own the tokens";
    }
    if (account.executable) return "is a program; pass the wallet that should own the tokens";
    return null;
  }
  if (!PublicKey.isOnCurve(recipient.toBytes())) {
    return "is an off-curve address (a program-derived address) with no account on chain; " +
      "fund it first if it is a vault you control, or check the address for a typo";
  }
  return null;
}

/**
 * The payer pays the network fee, which the runtime only takes from an account the System
 * program owns and that holds no data; anything else would only fail later in simulation with a
 * less helpful message.
 */
export function payerProblem(
  account: (RecipientAccount & { dataLength: number }) | null,
): string | null {
  if (!account) return null;
  if (
    !account.owner.equals(SystemProgram.programId) || account.dataLength > 0 || account.executable
  ) {
    return "is not a plain wallet account (owned by the System program, no data), so it cannot pay fees";
  }
  return null;
}
