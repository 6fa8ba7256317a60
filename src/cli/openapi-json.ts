/**
 * `deno task client:generate`, step one: writes the OpenAPI document the service serves at
 * /v1/openapi.json (the same `openApiDocument`, with a placeholder server) to the given file, the
 * input of the typed client under client/.
 */
import { openApiDocument } from "../openapi/document.ts";

export const CLIENT_SERVER_URL = "http://127.0.0.1:8000";

export function clientDocumentJson(): string {
  return JSON.stringify(openApiDocument({ serverUrl: CLIENT_SERVER_URL }), null, 2) + "\n";
}

if (import.meta.main) {
  const out = Deno.args[0];
  if (!out) {
    console.error("usage: openapi-json.ts <output file>");
    Deno.exit(2);
  }
  await Deno.writeTextFile(out, clientDocumentJson());
}
