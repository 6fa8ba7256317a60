/**
 * The update decision and the pieces around it, pure: refusals named before anything is built,
 * the token after the changes, the Token-2022 length and rent top-up, the update folds.
 */
import { Keypair } from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { decideUpdate, type UpdateChanges } from "../../src/tokens/update-decide.ts";
import type { UpdateRequest } from "../../src/tokens/update-request.ts";
import type { TokenState } from "../../src/tokens/update-state.ts";
import { rentTopUp, token2022LengthAfter } from "../../src/tokens/update-transaction.ts";
import { isRejection, type Rejection } from "../../src/kernel/rejection.ts";
import { tokenCurrentProjection, updatesProjection } from "../../projections/updates.ts";
import { fold, SAMPLES, stored } from "../projections/support/events.ts";

const me = Keypair.generate().publicKey.toBase58();
const other = Keypair.generate().publicKey.toBase58();

const state = (over: Partial<TokenState> = {}): TokenState => ({
  tokenProgram: "spl-token",
  mintAuthority: me,
  freezeAuthority: me,
  metadata: {
    name: "A",
    symbol: "A",
    uri: "https://a.test/a.json",
    updateAuthority: me,
    isMutable: true,
  },
  metadataPointerAuthority: null,
  mintLamports: 1_000n,
  mintDataLength: 300,
  ...over,
});

const req = (over: Partial<UpdateRequest> = {}): UpdateRequest => ({
  authority: me,
  metadataUri: null,
  name: null,
  symbol: null,
  updateAuthority: null,
  makeImmutable: false,
  mintAuthority: undefined,
  freezeAuthority: undefined,
  ...over,
});

const decide = (r: Partial<UpdateRequest>, s: Partial<TokenState> = {}, hosted = null as never) =>
  decideUpdate({ req: req(r), state: state(s), hosted, handedAccounts: new Map() });

const fields = (x: UpdateChanges | Rejection) => {
  assert(isRejection(x), "expected a refusal");
  return x.fields as Record<string, string>;
};

Deno.test("update decide: a signer that holds no authority the change needs is named as authority", () => {
  const f = fields(
    decide({ authority: other, metadataUri: "https://b.test/b.json", mintAuthority: null }),
  );
  assertEquals(Object.keys(f), ["authority"]);
  assertMatch(f.authority, /update authority is .*; the mint authority is/);
});

Deno.test("update decide: immutable metadata and a revoked authority are refused, each field named", () => {
  const immutable = { metadata: { ...state().metadata!, isMutable: false } };
  assertEquals(Object.keys(fields(decide({ metadataUri: "https://b.test/b.json" }, immutable))), [
    "metadataUri",
  ]);
  assertEquals(Object.keys(fields(decide({ makeImmutable: true }, immutable))), ["isMutable"]);
  const revoked = fields(decide({ freezeAuthority: other }, { freezeAuthority: null }));
  assertMatch(revoked.freezeAuthority, /revoked/);
});

Deno.test("update decide: the hosted document's name and symbol win; a missing one is named", () => {
  const d = decide(
    { metadataUri: "https://b.test/m/x.json" },
    {},
    { name: "B", symbol: "BB" } as never,
  );
  assert(!isRejection(d));
  assertEquals([d.after.name, d.after.symbol, d.after.uri], ["B", "BB", "https://b.test/m/x.json"]);
  const missing = fields(
    decide({ metadataUri: "https://b.test/m/x.json" }, {}, "missing" as never),
  );
  assertMatch(missing.metadataUri, /POST \/v1\/metadata/);
  const same = fields(decide({ metadataUri: "https://a.test/a.json" }));
  assertMatch(same.metadataUri, /nothing would change/);
});

Deno.test("update decide: immutability clears the update authority on Token-2022 only", () => {
  const spl = decide({ makeImmutable: true });
  const t22 = decide({ makeImmutable: true }, { tokenProgram: "token-2022" });
  assert(!isRejection(spl) && !isRejection(t22));
  assertEquals([spl.after.updateAuthority, spl.after.isMutable], [me, false]);
  assertEquals([t22.after.updateAuthority, t22.after.isMutable], [null, false]);
});

Deno.test("update: Token-2022 length follows the UTF-8 bytes of each field; the top-up is the gap", () => {
  const d = decide({ metadataUri: "https://a.test/" + "é".repeat(10) }, {
    tokenProgram: "token-2022",
  });
  assert(!isRejection(d));
  // "a.json" (6 bytes) becomes ten two-byte characters (20 bytes).
  assertEquals(token2022LengthAfter(state(), d), 300 + 14);
  assertEquals(rentTopUp(state(), 1_500n), 500n);
  assertEquals(rentTopUp(state(), 900n), 0n);
});

Deno.test("update folds: built then landed; the token's current state counts landed updates only", () => {
  const built = stored(SAMPLES.TokenUpdateBuilt);
  const landed = stored(SAMPLES.TokenUpdateLanded, 1_000);
  const failedLate = stored(SAMPLES.TokenUpdateFailed, 2_000);
  const docs = fold(updatesProjection, [built, landed, failedLate]);
  const doc = [...docs.values()][0] as { status: string; signature: string };
  // A late failure never moves a landed update.
  assertEquals([doc.status, doc.signature], ["landed", "Sig333"]);
  const current = [...fold(tokenCurrentProjection, [built, landed, failedLate]).values()];
  assertEquals(current.length, 1);
  assertEquals((current[0] as { updates: number; uri: string }).updates, 1);
  assertEquals((current[0] as { uri: string }).uri, "https://example.com/new.json");
});

Deno.test("token current: two updates built from one state both apply; a late-verified older one loses", () => {
  const landed = SAMPLES.TokenUpdateLanded;
  const at = (slot: number, set: Record<string, unknown>, id: string) =>
    stored(
      {
        ...landed,
        data: {
          ...landed.data,
          updateId: id,
          slot,
          set,
          after: { ...landed.data.after, ...set },
        },
      } as typeof landed,
    );
  // B (slot 20) revokes the mint authority; A (slot 10, verified after B) changed the uri and
  // had handed the mint authority over: the later slot's mint authority stands.
  const b = at(20, { mintAuthority: null }, "b");
  const a = at(10, { uri: "https://example.com/a.json", mintAuthority: "Auth111" }, "a");
  const [doc] = [...fold(tokenCurrentProjection, [b, a]).values()] as {
    uri: string;
    mintAuthority: string | null;
    updates: number;
    lastUpdateId: string;
  }[];
  assertEquals([doc.uri, doc.mintAuthority, doc.updates, doc.lastUpdateId], [
    "https://example.com/a.json",
    null,
    2,
    "b",
  ]);
});
