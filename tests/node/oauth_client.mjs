// The official MCP TypeScript clients logging in by themselves (`--sdk 1`:
// @modelcontextprotocol/sdk, the 2025-11-25 client; `--sdk 2`: @modelcontextprotocol/client, the
// 2026-07-28 client): from a bare 401 it reads the protected resource metadata, registers with the
// authorization server (oidc-provider), gets a token for our resource with PKCE (the user's login
// and consent scripted against the provider's own pages), lists and calls tools; a call that
// needs a scope the token lacks makes it step up. Prints `ok <check>` per check, `done` at the end.
//
//   node oauth_client.mjs --sdk 1|2 --url http://127.0.0.1:PORT/mcp
const argument = (name) => process.argv[process.argv.indexOf(name) + 1];
const url = argument('--url');
const sdk = argument('--sdk');
const { Client, StreamableHTTPClientTransport, UnauthorizedError } =
  sdk === '2'
    ? await import('@modelcontextprotocol/client')
    : {
        ...(await import('@modelcontextprotocol/sdk/client/index.js')),
        ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
        ...(await import('@modelcontextprotocol/sdk/client/auth.js')),
      };
if (sdk !== '1' && sdk !== '2') throw new Error('--sdk 1 or --sdk 2');
const REDIRECT = 'http://127.0.0.1:9/callback';
const ok = (name, detail = '') => console.log(`ok ${name} ${detail}`.trimEnd());

// The user at the browser: signs in as `grace` and consents; the code ends at the redirect.
const user = { logins: 0, scopes: [], callback: undefined };
async function signIn(authorizationUrl) {
  user.logins += 1;
  user.scopes.push(authorizationUrl.searchParams.get('scope') ?? '');
  let cookies = new Map();
  const send = async (target, init = {}) => {
    const response = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const [name, ...value] = pair.split('=');
      cookies.set(name.trim(), value.join('='));
    }
    return response;
  };
  let response = await send(authorizationUrl);
  let at = authorizationUrl;
  for (let step = 0; step < 12; step += 1) {
    const location = response.headers.get('location');
    if (location?.startsWith(REDIRECT)) {
      const back = new URL(location);
      if (back.searchParams.get('error')) throw new Error(`refused: ${location}`);
      user.callback = back.searchParams;
      return;
    }
    if (location) {
      at = new URL(location, at);
      response = await send(at);
      continue;
    }
    const page = await response.text();
    const action = page.match(/action="([^"]+)"/);
    if (!action) throw new Error(`no form at ${at}: ${page.slice(0, 200)}`);
    const prompt = page.match(/name="prompt" value="([^"]+)"/)?.[1] ?? 'login';
    at = new URL(action[1], at);
    response = await send(at, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt, login: 'grace', password: 'grace' }).toString(),
    });
  }
  throw new Error('the login did not end at the redirect');
}

const stored = {};
const provider = {
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return { client_name: `tool-tests-ts-${sdk}`, redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  clientInformation: () => stored.client,
  saveClientInformation: (info) => { stored.client = info; },
  tokens: () => stored.tokens,
  saveTokens: (tokens) => { stored.tokens = tokens; },
  redirectToAuthorization: (authorizationUrl) => signIn(authorizationUrl),
  saveCodeVerifier: (verifier) => { stored.verifier = verifier; },
  codeVerifier: () => stored.verifier,
};

// The 2026-07-28 client takes the whole callback, so that it checks the issuer it names (RFC 9207).
const finish = (transport) =>
  transport.finishAuth(sdk === '2' ? user.callback : user.callback.get('code'));

// A call refused for its scope ends in UnauthorizedError, after the login above: the transport
// takes the code, and the call is made again.
async function authorized(transport, step) {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await finish(transport);
    return step();
  }
}

// The first connection ends at the login; a new transport connects with its token.
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
// The 2026-07-28 client speaks the 2025 revision unless told otherwise: pinned here.
const options = sdk === '2' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
let client = new Client({ name: `tool-tests-ts-${sdk}`, version: '1.0.0' }, options);
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  await finish(transport);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  client = new Client({ name: `tool-tests-ts-${sdk}`, version: '1.0.0' }, options);
  await client.connect(transport);
}
// The revision each client speaks: 2025-11-25 for the first, 2026-07-28 for the second.
const revision = sdk === '2' ? client.getNegotiatedProtocolVersion() : transport.protocolVersion;
if (revision !== (sdk === '2' ? '2026-07-28' : '2025-11-25')) throw new Error(`spoke ${revision}`);
ok('logged in', `after ${user.logins} login(s), scope ${user.scopes.at(-1)}, revision ${revision}`);
const names = (await client.listTools()).tools.map((t) => t.name).sort();
if (!names.includes('device_revoke')) throw new Error(`listed ${names}`);
ok('listed', names.join(','));
const who = await client.callTool({ name: 'whoami', arguments: {} });
if (who.isError) throw new Error(JSON.stringify(who));
ok('principal', who.content[0].text);
const listed = await client.callTool({ name: 'device_list', arguments: {} });
if (listed.isError) throw new Error(JSON.stringify(listed));
ok('scoped call');
const before = user.logins;
const revoked = await authorized(transport, () => client.callTool({ name: 'device_revoke', arguments: { id: 'd1' } }));
if (revoked.isError) throw new Error(JSON.stringify(revoked));
if (user.logins !== before + 1 || !user.scopes.at(-1).includes('devices:admin')) throw new Error(`no step-up: ${JSON.stringify(user)}`);
ok('stepped up', `scope ${user.scopes.at(-1)}`);
await client.close();
console.log('done');
