/**
 * Whether a path names an endpoint the app serves, so an unknown /v1 path is a 404 for everyone
 * instead of a 401 that would tell a caller without a key nothing useful. Built from the app's own
 * route table on first use (after every group is mounted), so it cannot drift from the routes.
 */
import type { Hono } from "hono";
import type { AppEnv } from "./env.ts";

export function routeExists(app: Hono<AppEnv>): (path: string) => boolean {
  let patterns: RegExp[] | null = null;
  return (path) => {
    patterns ??= app.routes
      // Middleware is registered as ALL with a wildcard; it serves nothing by itself.
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) =>
        new RegExp(
          "^" + r.path.split("/").map((seg) =>
            seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
          ).join("/") + "$",
        )
      );
    return patterns.some((p) => p.test(path));
  };
}
