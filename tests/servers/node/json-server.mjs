// json-server 0.17 with a reset endpoint, so one server can serve a whole test session.
// Usage: node json-server.mjs DB_JSON PORT
//   POST /__helm/reset  restores the data the file held at start-up.
import { readFileSync } from "node:fs";
import { requireInstalled } from "./modules.mjs";

const [dbPath, port] = process.argv.slice(2);
const jsonServer = requireInstalled("json-server");
const initial = readFileSync(dbPath, "utf8");

const app = jsonServer.create();
const router = jsonServer.router(dbPath);
app.post("/__helm/reset", (_req, res) => {
  router.db.setState(JSON.parse(initial)).write();
  res.status(204).end();
});
app.use(jsonServer.defaults({ logger: false }));
app.use(router);
app.listen(Number(port), "127.0.0.1", () => {
  console.log(`json-server ready on 127.0.0.1:${port}`);
});
