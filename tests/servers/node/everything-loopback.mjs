// Runs @modelcontextprotocol/server-everything with every listening socket bound to 127.0.0.1.
// Usage: node everything-loopback.mjs streamableHttp   (PORT in the environment)
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { forceLoopback, nodeModules } from "./modules.mjs";

await forceLoopback(process.env.HOST ?? "127.0.0.1");
const entry = join(nodeModules, "@modelcontextprotocol/server-everything/dist/index.js");
process.argv = [process.argv[0], entry, ...process.argv.slice(2)];
await import(pathToFileURL(entry).href);
