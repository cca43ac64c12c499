// Locates the packages scripts/test-deps.sh installed (outside this folder, in .test-deps/node),
// so these committed start scripts can load them without a node_modules next to them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const nodeModules =
  process.env.HELM_TEST_NODE_MODULES ?? resolve(here, "../../../.test-deps/node/node_modules");

export const requireInstalled = createRequire(join(nodeModules, "_resolve.cjs"));

export async function importInstalled(name) {
  const pkg = JSON.parse(readFileSync(join(nodeModules, name, "package.json"), "utf8"));
  return import(pathToFileURL(join(nodeModules, name, pkg.main)).href);
}

// Some servers call listen(port) with no host, which binds every interface. Tests must only ever
// be reachable on loopback, so give every such call an explicit host.
export async function forceLoopback(host = "127.0.0.1") {
  const net = await import("node:net");
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function patchedListen(...args) {
    const first = args[0];
    const portOnly = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
    if (portOnly && typeof args[1] !== "string") args.splice(1, 0, host);
    if (first !== null && typeof first === "object" && first.host === undefined && first.path === undefined) {
      args[0] = { ...first, host };
    }
    return listen.apply(this, args);
  };
}
