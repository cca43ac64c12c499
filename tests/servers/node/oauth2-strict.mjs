// oauth2-mock-server made strict the way real authorization servers are:
// - an authorization code is accepted once, only by the client and redirect_uri it was issued to;
// - a code issued with a PKCE challenge needs the matching S256 code_verifier, and a code issued
//   without one is refused (Helm always uses PKCE);
// - refresh tokens must be ones this server issued and not revoked.
// Control endpoints for tests (loopback only, never part of a real server):
//   POST /__helm/config {"scope": "a b" | null, "expires_in": 3600}  scope null echoes the request
//   POST /__helm/revoke-refresh-tokens     GET /__helm/stats
// Usage: node oauth2-strict.mjs PORT
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { importInstalled } from "./modules.mjs";

const { OAuth2Issuer, OAuth2Service } = await importInstalled("oauth2-mock-server");
const port = Number(process.argv[2]);
const host = "127.0.0.1";

const issuer = new OAuth2Issuer();
issuer.url = `http://${host}:${port}`;
await issuer.keys.generate("RS256");
const service = new OAuth2Service(issuer);

const config = { scope: null, expires_in: 3600 };
const codes = new Map(); // code -> {challenge, method, clientId, redirectUri, used}
const refreshTokens = new Set();
const stats = { authorize: 0, token: 0, refused: 0 };

service.on("beforeAuthorizeRedirect", (redirect, req) => {
  stats.authorize += 1;
  const code = redirect.url.searchParams.get("code");
  if (!code) return;
  const q = new URL(req.url, issuer.url).searchParams;
  codes.set(code, {
    challenge: q.get("code_challenge"),
    method: q.get("code_challenge_method") ?? "plain",
    clientId: q.get("client_id"),
    redirectUri: q.get("redirect_uri"),
    used: false,
  });
});

function s256(verifier) {
  return createHash("sha256").update(verifier).digest("base64url");
}

function refusal(body) {
  if (body.grant_type === "authorization_code") {
    const issued = codes.get(body.code);
    if (!issued) return "unknown authorization code";
    if (issued.used) return "authorization code already used";
    issued.used = true;
    if (issued.clientId !== body.client_id) return "code was issued to another client";
    if (issued.redirectUri !== body.redirect_uri) return "redirect_uri does not match";
    if (!issued.challenge || issued.method !== "S256") return "code was issued without S256 PKCE";
    if (!body.code_verifier || s256(body.code_verifier) !== issued.challenge) {
      return "code_verifier does not match code_challenge";
    }
  }
  if (body.grant_type === "refresh_token" && !refreshTokens.has(body.refresh_token)) {
    return "unknown or revoked refresh token";
  }
  return null;
}

service.on("beforeTokenSigning", (token) => {
  token.payload.exp = token.payload.iat + config.expires_in;
  if (config.scope !== null) token.payload.scope = config.scope;
});

service.on("beforeResponse", (response) => {
  if (config.scope !== null) response.body.scope = config.scope;
  response.body.expires_in = config.expires_in;
  if (response.body.refresh_token) refreshTokens.add(response.body.refresh_token);
});

function control(req, res) {
  const reply = (status, body) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  if (req.method === "GET" && req.url === "/__helm/stats") return reply(200, stats);
  if (req.method === "POST" && req.url === "/__helm/revoke-refresh-tokens") {
    refreshTokens.clear();
    return reply(200, {});
  }
  let text = "";
  req.on("data", (chunk) => (text += chunk));
  req.on("end", () => {
    const update = JSON.parse(text || "{}");
    if ("scope" in update) config.scope = update.scope;
    if ("expires_in" in update) config.expires_in = Number(update.expires_in);
    reply(200, config);
  });
}

// The token request is checked before the library sees it, so a refused grant gets the
// invalid_grant answer a real server gives. Reading the body here leaves the request finished;
// the library's body parser then keeps the req.body set below.
function token(req, res) {
  let text = "";
  req.on("data", (chunk) => (text += chunk));
  req.on("end", () => {
    stats.token += 1;
    req.body = Object.fromEntries(new URLSearchParams(text));
    const reason = refusal(req.body);
    if (!reason) return service.requestHandler(req, res);
    stats.refused += 1;
    res.writeHead(400, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify({ error: "invalid_grant", error_description: reason }));
  });
}

const server = createServer((req, res) => {
  if (req.url.startsWith("/__helm/")) return control(req, res);
  if (req.method === "POST" && req.url.split("?")[0] === "/token") return token(req, res);
  return service.requestHandler(req, res);
});
server.listen(port, host, () => console.log(`oauth2 ready on ${issuer.url}`));
