/**
 * UpdateMetadataAccountV2 on the emulated and on the real Token Metadata program (skipped cleanly
 * without its binary): the same refusals with the same error codes (a signer that is not the update
 * authority, new data on immutable metadata, is_mutable flipped back), and compute within what
 * the emulation reports, so a limit sized on the emulation holds on the real program.
 */
import { Keypair, PublicKey, Transaction } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";
import { METADATA_PROGRAM_MODES, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import { createToken } from "../support/token-update-flow.ts";
import { updateMetadataAccountV2Instruction } from "../../src/solana/token-metadata-update.ts";
import { getUpdateMetadataAccountV2InstructionDataSerializer } from "@metaplex-foundation/mpl-token-metadata";
import { some } from "@metaplex-foundation/umi";
import { metadataPda, TOKEN_METADATA_PROGRAM_ID } from "../../src/solana/token-metadata.ts";
import { CU_UPDATE } from "../../src/chain/token-metadata-update.ts";

for (const { mode, so } of METADATA_PROGRAM_MODES) {
  Deno.test({
    name: `UpdateMetadataAccountV2 refusals and compute (${mode} Token Metadata program)`,
    ...(mode === "real" ? needsMetaplexSo() : {}),
    fn: async () => {
      const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
      try {
        const c = h.services.connection;
        const { apiKey, wallet } = await h.newApiKey();
        const mint = new PublicKey(await createToken(h, apiKey, wallet));
        const run = async (
          signer: Keypair,
          ix: ReturnType<typeof updateMetadataAccountV2Instruction>,
        ) => {
          const tx = new Transaction().add(ix);
          tx.feePayer = signer.publicKey;
          tx.recentBlockhash = (await c.getLatestBlockhash("confirmed")).blockhash;
          tx.sign(signer);
          const sim = await c.simulateTransaction(tx);
          return sim.value;
        };
        const data = { name: "N", symbol: "S", uri: "https://example.com/n.json" };
        const stranger = h.fundedWallet(1);
        const wrong = await run(
          stranger,
          updateMetadataAccountV2Instruction({
            mint,
            updateAuthority: stranger.publicKey,
            data,
            newUpdateAuthority: null,
            isMutable: null,
          }),
        );
        assertEquals(wrong.err, { InstructionError: [0, { Custom: 7 }] });

        const ok = await run(
          wallet,
          updateMetadataAccountV2Instruction({
            mint,
            updateAuthority: wallet.publicKey,
            data,
            newUpdateAuthority: null,
            isMutable: null,
          }),
        );
        assertEquals(ok.err, null, (ok.logs ?? []).join("\n"));
        console.log(`${mode}: UpdateMetadataAccountV2 used ${ok.unitsConsumed} compute units`);
        // The emulation reports at least what the real program uses (24,861 CU measured).
        assert((ok.unitsConsumed ?? 0) <= CU_UPDATE, `${ok.unitsConsumed} CU`);

        // Made immutable (landed), then new data and a flip back are refused.
        const tx = new Transaction().add(updateMetadataAccountV2Instruction({
          mint,
          updateAuthority: wallet.publicKey,
          data: null,
          newUpdateAuthority: null,
          isMutable: false,
        }));
        tx.feePayer = wallet.publicKey;
        tx.recentBlockhash = (await c.getLatestBlockhash("confirmed")).blockhash;
        tx.sign(wallet);
        await h.waitForConfirmation(await c.sendRawTransaction(tx.serialize()));
        const immutable = await run(
          wallet,
          updateMetadataAccountV2Instruction({
            mint,
            updateAuthority: wallet.publicKey,
            data,
            newUpdateAuthority: null,
            isMutable: null,
          }),
        );
        assertEquals(immutable.err, { InstructionError: [0, { Custom: 59 }] });
        const flipBack = updateMetadataAccountV2Instruction({
          mint,
          updateAuthority: wallet.publicKey,
          data: null,
          newUpdateAuthority: null,
          isMutable: null,
        });
        flipBack.data = Buffer.from(
          getUpdateMetadataAccountV2InstructionDataSerializer().serialize({
            isMutable: some(true),
          }),
        );
        const back = await run(wallet, flipBack);
        assertEquals(back.err, { InstructionError: [0, { Custom: 73 }] });
        assertEquals(flipBack.keys[0].pubkey.toBase58(), metadataPda(mint).toBase58());
        assertEquals(flipBack.programId.toBase58(), TOKEN_METADATA_PROGRAM_ID.toBase58());
      } finally {
        await h.close();
      }
    },
  });
}
