/**
 * The "create a token" Solana Action: what its GET answers (the form a wallet renders) and its
 * POST (the metadata hosted, then the very build POST /v1/tokens makes, with the user's wallet as
 * payer and recipient). Every rule of a build applies; a refusal is an `ApiError` the route
 * answers as the spec's ActionError.
 */
import type { ActionGetResponse, ActionPostResponse } from "@solana/actions-spec";
import { currentWellKnownMatcher } from "../admin/well-known-names.ts";
import { ApiError } from "../kernel/errors.ts";
import { hostMetadata } from "../metadata/handle.ts";
import { imageUrlProblem } from "../metadata/image/fetch-image.ts";
import { parseMetadataRequest } from "../metadata/request.ts";
import type { Services } from "../services.ts";
import { keyUsable } from "../../projections/keys.ts";
import { buildToken } from "../tokens/build-token.ts";
import { checkHostedDocumentMatch } from "../tokens/hosted-match.ts";
import { type BuildRequest, parseBuildRequest } from "../tokens/request-schema.ts";
import { actionsChannel, channelServices } from "./channel.ts";
import { defaultImageBase64 } from "./default-image.ts";
import { countWalletBuild } from "./limits.ts";

export const ACTION_PATH = "/v1/actions/create-token";
export const ICON_PATH = `${ACTION_PATH}/icon.png`;

const PARAMS = ["name", "symbol", "supply", "decimals", "imageUrl", "description"] as const;
type Params = Partial<Record<(typeof PARAMS)[number], string>>;

/** GET: the form. The icon is served by this origin (the default token image). */
export function actionForm(s: Services): ActionGetResponse {
  const href = `${ACTION_PATH}?${PARAMS.map((p) => `${p}={${p}}`).join("&")}`;
  return {
    type: "action",
    icon: `${s.config.publicBaseUrl}${ICON_PATH}`,
    title: "Create a token",
    description: "Create an SPL token with its metadata in one transaction you sign: the full " +
      "supply is minted to your wallet, and you pay the network costs plus a service fee of " +
      `${s.config.fees.tokenUsd} USD in SOL, shown before you sign.`,
    label: "Create token",
    links: {
      actions: [{
        type: "transaction",
        label: "Create token",
        href,
        parameters: [
          { type: "text", name: "name", label: "Token name (up to 32 bytes)", required: true },
          { type: "text", name: "symbol", label: "Symbol (up to 10 bytes)", required: true },
          {
            type: "text",
            name: "supply",
            label: "Supply in whole tokens",
            required: true,
            pattern: "^[0-9]{1,20}$",
            patternDescription: "whole tokens, digits only",
          },
          {
            type: "number",
            name: "decimals",
            label: "Decimals (0 to 9)",
            required: true,
            min: 0,
            max: 9,
          },
          { type: "url", name: "imageUrl", label: "Image URL (https; optional)" },
          { type: "textarea", name: "description", label: "Description (optional)" },
        ],
      }],
    },
  };
}

/** POST: host the metadata, build, answer the transaction with what it costs. */
export async function createTokenAction(
  s: Services,
  query: Params,
  account: unknown,
): Promise<ActionPostResponse> {
  const wellKnown = await currentWellKnownMatcher(s);
  const base = s.config.hostedBaseUrl ?? s.config.publicBaseUrl;
  // Every bad field at once, before anything is fetched, counted or hosted.
  const fields: Record<string, string> = {};
  const metadata = collect(fields, () => parseMetadataRequest(metadataBody(query), wellKnown));
  const draft = (metadataUri: string) => buildBody(query, account, metadataUri);
  collect(fields, () => parseBuildRequest(draft("https://placeholder.invalid/m"), wellKnown));
  const imageUrl = given(query.imageUrl);
  const allowLoopbackHttpForTests = s.config.allowLoopbackImageFetchForTests;
  const imageProblem = imageUrl && imageUrlProblem(imageUrl, { allowLoopbackHttpForTests });
  if (imageProblem) fields.imageUrl ??= imageProblem;
  if (Object.keys(fields).length > 0 || !metadata) {
    throw new ApiError("invalid_request", "Request is invalid", fields);
  }
  const channel = await actionsChannel(s);
  // A ban or suspension of the channel (by the operator, or the conduct rules) pauses the Action;
  // a command inside would refuse it too, as "API key no longer valid", which means nothing here.
  if (!keyUsable(channel)) {
    throw new ApiError("forbidden", "This Action is paused by its operator; try again later");
  }
  await countWalletBuild(s, String(account));

  const cs = channelServices(s);
  const hosted = await hostMetadata(cs, { key: channel, idempotency: null, body: metadata });
  const req = parseBuildRequest(draft(hosted.metadataUri), wellKnown, base);
  await checkHostedDocumentMatch(s.kv, [s.config.publicBaseUrl, base], req);
  const built = await buildToken(cs, channel, req);
  return {
    type: "transaction",
    transaction: built.transaction,
    message: costMessage(req, built.costs.totalLamports, built.fee),
  };
}

function collect<T>(fields: Record<string, string>, parse: () => T): T | null {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    for (const [k, v] of Object.entries(e.fields)) {
      fields[k === "payer" ? "account" : k] ??= String(v);
    }
    return null;
  }
}

/** An optional parameter a client left empty (`{imageUrl}` replaced by nothing) is absent. */
const given = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v);

function metadataBody(q: Params): unknown {
  const imageUrl = given(q.imageUrl);
  return {
    name: q.name,
    symbol: q.symbol,
    ...(given(q.description) !== undefined ? { description: q.description } : {}),
    ...(imageUrl !== undefined ? { imageUrl } : { imageBase64: defaultImageBase64() }),
  };
}

function buildBody(q: Params, account: unknown, metadataUri: string): unknown {
  const decimals = q.decimals !== undefined && /^[0-9]{1,2}$/.test(q.decimals)
    ? Number(q.decimals)
    : q.decimals;
  return {
    payer: account,
    name: q.name,
    symbol: q.symbol,
    supply: q.supply,
    decimals,
    metadataUri,
  };
}

const sol = (lamports: string | bigint) => (Number(lamports) / 1e9).toFixed(6).replace(/0+$/, "0");

function costMessage(
  req: BuildRequest,
  totalLamports: string,
  fee: { usd: number; lamports: string },
): string {
  return `Creates ${req.name} (${req.symbol}) and mints its full supply to your wallet. ` +
    `You pay ${sol(totalLamports)} SOL in all: the service fee of ${sol(fee.lamports)} SOL ` +
    `(${fee.usd} USD), rent and network fees.`;
}

/** The one line a wallet shows for a refusal: the message, then each bad field. */
export function actionErrorMessage(e: ApiError): string {
  const fields = Object.entries(e.fields).filter(([, v]) => typeof v === "string");
  if (e.code !== "invalid_request" || fields.length === 0) return e.message;
  return `${e.message}: ${fields.map(([k, v]) => `${k} ${v}`).join("; ")}`;
}
