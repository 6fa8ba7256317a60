/**
 * Traces through Deno's built-in OpenTelemetry (`OTEL_DENO=true`). Deno exports on its own a span
 * per request Deno.serve handles and per outgoing fetch (the RPC's HTTP calls among them), with
 * W3C trace context; it has no spans for Deno KV and knows neither our routes nor our build ids.
 * The spans here add them through `@opentelemetry/api`, which Deno wires to its exporter:
 *
 * - `METHOD /route` per request (http.route), tagged `build.id` once a build is known;
 * - `rpc <method>` per JSON-RPC call (rpc.system, rpc.method), tagged `build.id` when the request
 *   concerns a known build;
 * - `kv.commit` per event-store commit, tagged with the build ids of the events it writes.
 *
 * Without OTEL_DENO the API is a no-op: nothing is recorded and the code paths are unchanged.
 */
import { type Attributes, context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

const tracer = trace.getTracer("token-creation-service", "1.0.0");
export const BUILD_ID = "build.id";

/** Per request, shared by its spans: the build it concerns once known. */
interface RequestTrace {
  span: Span;
  buildId: number | null;
}
const REQUEST = Symbol.for("token-creation.request-trace");
const requestTrace = () => context.active().getValue(REQUEST) as RequestTrace | undefined;

/** Hono middleware: one span per request, named by its route once routing has picked one. */
export function traceRequests() {
  return async function traceRequest(
    c: {
      req: { method: string; path: string; matchedRoutes: { method: string; path: string }[] };
      res: { status: number };
    },
    next: () => Promise<void>,
  ) {
    const span = tracer.startSpan(`${c.req.method} ${c.req.path}`, {
      attributes: { "http.request.method": c.req.method },
    });
    const state: RequestTrace = { span, buildId: null };
    const ctx = trace.setSpan(context.active(), span).setValue(REQUEST, state);
    await ending(span, async () => {
      await context.with(ctx, next);
      const route = c.req.matchedRoutes.findLast((r) => r.method !== "ALL")?.path;
      if (route) {
        span.updateName(`${c.req.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    });
  };
}

/** Runs `fn`, then ends the span; an error thrown on the way is recorded on it and rethrown. */
async function ending<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    span.recordException(e as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw e;
  } finally {
    span.end();
  }
}

/** Marks the current request (and the active span) as concerning this build. */
export function tagBuild(buildId: number): void {
  const r = requestTrace();
  if (r && r.buildId === null) {
    r.buildId = buildId;
    r.span.setAttribute(BUILD_ID, buildId);
  }
  trace.getActiveSpan()?.setAttribute(BUILD_ID, buildId);
}

/** Runs `fn` in a child span of the active one; the request's build id is added when known. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const buildId = requestTrace()?.buildId;
  const attrs = buildId == null ? attributes : { ...attributes, [BUILD_ID]: buildId };
  return await tracer.startActiveSpan(
    name,
    { attributes: attrs },
    (span) => ending(span, () => fn(span)),
  );
}

/** The build ids events name, for a commit's span. */
export function buildIdsOf(events: { data: unknown }[]): number[] {
  const ids = new Set<number>();
  for (const e of events) {
    const id = (e.data as { buildId?: unknown } | null)?.buildId;
    if (typeof id === "number") ids.add(id);
  }
  return [...ids];
}

/** EventStore's `aroundCommit`: a `kv.commit` span naming the events and the builds they touch. */
export function traceKvCommit<T>(
  events: { type: string; data: unknown }[],
  commit: () => Promise<T>,
): Promise<T> {
  const ids = buildIdsOf(events);
  for (const id of ids) tagBuild(id);
  const attributes: Attributes = {
    "db.system.name": "deno_kv",
    "db.operation.name": "atomic.commit",
    "events.count": events.length,
    "events.types": [...new Set(events.map((e) => e.type))],
  };
  if (ids.length === 1) attributes[BUILD_ID] = ids[0];
  if (ids.length > 1) attributes["build.ids"] = ids;
  return inSpan("kv.commit", attributes, async (span) => {
    const res = await commit();
    const ok = (res as { ok?: boolean })?.ok;
    if (ok === false) span.setAttribute("kv.commit.conflict", true);
    return res;
  });
}
