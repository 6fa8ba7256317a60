/**
 * Deno's built-in OpenTelemetry end to end: a child process runs the app with OTEL_DENO=true and
 * exports OTLP/JSON to a collector here. A build's request, its KV commits and the RPC calls of
 * its verification carry the build id, in the trace of Deno's own server span.
 */
import { assert, assertEquals } from "../support/assert.ts";

interface Span {
  scope: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attrs: Record<string, unknown>;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
};

function value(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}

Deno.test("OTEL_DENO=true: request, KV commit and RPC spans carry build.id inside Deno's server spans", async () => {
  const spans: Span[] = [];
  const collector = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const body = await req.text();
    if (new URL(req.url).pathname === "/v1/traces") {
      // deno-lint-ignore no-explicit-any
      for (const rs of JSON.parse(body).resourceSpans ?? [] as any[]) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              scope: ss.scope?.name ?? "",
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              attrs: Object.fromEntries(
                (s.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [
                  a.key,
                  value(a.value),
                ]),
              ),
            });
          }
        }
      }
    }
    return Response.json({});
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--unstable-kv",
        "--unstable-cron",
        new URL("./traced-flow.ts", import.meta.url).pathname,
      ],
      env: {
        OTEL_DENO: "true",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.addr.port}`,
        OTEL_DENO_CONSOLE: "ignore",
        OTEL_SERVICE_NAME: "token-creation-test",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr).slice(-2000));
    const { buildId } = JSON.parse(stdout.trim().split("\n").pop()!);
    // The exporter sends as the child exits; give the last batch a moment to be read.
    for (
      let i = 0;
      i < 100 && !spans.some((s) => s.name === "GET /v1/transactions/:signature");
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ours = (name: string) => spans.filter((s) => s.scope !== "deno" && s.name === name);

    const [buildReq] = ours("POST /v1/tokens");
    assert(buildReq, `no POST /v1/tokens span in ${spans.map((s) => s.name).join(", ")}`);
    assertEquals(buildReq.attrs["build.id"], buildId);
    assertEquals(buildReq.attrs["http.route"], "/v1/tokens");
    assertEquals(buildReq.attrs["http.response.status_code"], 201);
    // Deno's own span for the same request is its parent.
    const server = byId.get(buildReq.parentSpanId);
    assertEquals([server?.scope, server?.name], ["deno", "POST"]);

    const commits = spans.filter((s) => s.name === "kv.commit" && s.attrs["build.id"] === buildId);
    const builtCommit = commits.find((s) =>
      (s.attrs["events.types"] as string[]).includes("TokenBuilt")
    );
    assert(builtCommit, "the TokenBuilt commit has a span with the build id");
    assertEquals(builtCommit.traceId, buildReq.traceId);
    assert(
      commits.some((s) => (s.attrs["events.types"] as string[]).includes("CreationConfirmed")),
      "the confirmation's commit too",
    );

    const [verifyReq] = ours("GET /v1/transactions/:signature");
    assertEquals(verifyReq.attrs["build.id"], buildId);
    // The relay finds the build first, so its RPC call carries the id.
    const [relayReq] = ours("POST /v1/transactions");
    assertEquals(relayReq.attrs["build.id"], buildId);
    const rpc = spans.filter((s) =>
      s.parentSpanId === relayReq.spanId && s.name.startsWith("rpc ")
    );
    assert(
      rpc.some((s) =>
        s.name === "rpc sendTransaction" && s.attrs["build.id"] === buildId &&
        s.attrs["rpc.system"] === "jsonrpc"
      ),
      JSON.stringify(rpc.map((s) => [s.name, s.attrs])),
    );
    // Deno's fetch span for the RPC's HTTP call sits below an rpc span.
    assert(
      spans.some((s) => s.scope === "deno" && rpc.some((r) => r.spanId === s.parentSpanId)),
      "Deno's fetch spans nest under the rpc spans",
    );
  } finally {
    await collector.shutdown();
  }
});
