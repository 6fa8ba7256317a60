import { assert, assertEquals } from "../support/assert.ts";
import { MAX_EVENT_BYTES } from "../../events/store.ts";
import { buildMetadataJson, imageUri, metadataUri } from "../../src/metadata/document.ts";
import { LIMITS, parseMetadataRequest } from "../../src/metadata/request.ts";

const IMG = { uri: "https://h.example/i/" + "a".repeat(64) + ".png", mime: "image/png" };

Deno.test("document: the full Metaplex fungible shape, members in a fixed order", () => {
  const req = parseMetadataRequest({
    attributes: [{ trait_type: "kind", value: "meme" }, { value: 7, trait_type: "rank" }],
    discord: "https://discord.gg/abc",
    website: "https://example.com",
    name: "My Token",
    twitter: "https://x.com/my",
    symbol: "MYT",
    telegram: "https://t.me/my",
    description: "About",
    imageBase64: "AAAA",
  });
  const json = buildMetadataJson(req, IMG);
  assertEquals(
    json,
    JSON.stringify({
      name: "My Token",
      symbol: "MYT",
      description: "About",
      image: IMG.uri,
      external_url: "https://example.com/",
      attributes: [{ trait_type: "kind", value: "meme" }, { trait_type: "rank", value: 7 }],
      properties: { files: [{ uri: IMG.uri, type: "image/png" }], category: "image" },
      extensions: {
        website: "https://example.com/",
        twitter: "https://x.com/my",
        telegram: "https://t.me/my",
        discord: "https://discord.gg/abc",
      },
    }),
  );
  assertEquals(buildMetadataJson(req, IMG), json);
});

Deno.test("document: absent optional inputs are absent members", () => {
  const req = parseMetadataRequest({ name: "N", symbol: "S", imageBase64: "AAAA", attributes: [] });
  assertEquals(JSON.parse(buildMetadataJson(req, IMG)), {
    name: "N",
    symbol: "S",
    image: IMG.uri,
    properties: { files: [{ uri: IMG.uri, type: "image/png" }], category: "image" },
  });
  const onlyTwitter = parseMetadataRequest({
    name: "N",
    symbol: "S",
    imageBase64: "A",
    twitter: "https://x.com/a",
  });
  assertEquals(JSON.parse(buildMetadataJson(onlyTwitter, IMG)).extensions, {
    twitter: "https://x.com/a",
  });
});

Deno.test("document: URL shapes", () => {
  assertEquals(metadataUri("https://h.example", "ab12"), "https://h.example/m/ab12.json");
  assertEquals(imageUri("https://h.example", "cd34", "webp"), "https://h.example/i/cd34.webp");
});

Deno.test("document: the largest valid document, escaped twice inside its event, fits one KV value", () => {
  // U+0001 costs 6 bytes as JSON and 7 once the document is itself a JSON string in the event;
  // it is refused in names, but the worst case must hold even if a rule loosens.
  const worst = "\u0001";
  const url = (host: string) => `https://${host}/` + "%22".repeat(80);
  const req = {
    name: worst.repeat(LIMITS.name),
    symbol: '"'.repeat(LIMITS.symbol),
    description: worst.repeat(LIMITS.description),
    website: url("example.com").slice(0, LIMITS.linkUrl),
    twitter: url("x.com").slice(0, LIMITS.linkUrl),
    telegram: url("t.me").slice(0, LIMITS.linkUrl),
    discord: url("discord.gg").slice(0, LIMITS.linkUrl),
    attributes: Array.from({ length: LIMITS.attributes }, () => ({
      trait_type: worst.repeat(LIMITS.traitType),
      value: worst.repeat(LIMITS.attributeValue),
    })),
  };
  const json = buildMetadataJson(req, {
    uri: "https://" + "h".repeat(200) + "/i/x.webp",
    mime: "image/webp",
  });
  const envelope = JSON.stringify({
    type: "MetadataHosted",
    data: { json },
    pad: "x".repeat(2048),
  });
  const bytes = new TextEncoder().encode(envelope).length;
  assert(bytes < MAX_EVENT_BYTES, `${bytes} bytes`);
});

Deno.test("document: the README's example is exactly what the service builds for its inputs", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const section = readme.slice(readme.indexOf("## Hosted metadata document"));
  const start = section.indexOf("```json") + "```json".length;
  const example = section.slice(start, section.indexOf("```", start));
  const documented = JSON.parse(example);
  const uri = documented.image as string;
  const req = parseMetadataRequest({
    name: documented.name,
    symbol: documented.symbol,
    description: documented.description,
    imageBase64: "AAAA",
    website: documented.extensions.website,
    twitter: documented.extensions.twitter,
    telegram: documented.extensions.telegram,
    discord: documented.extensions.discord,
    attributes: documented.attributes,
  });
  assertEquals(buildMetadataJson(req, { uri, mime: "image/png" }), JSON.stringify(documented));
});
