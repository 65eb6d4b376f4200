// What the OAuth checkers share: the official TypeScript clients (`sdk` '1':
// @modelcontextprotocol/sdk, the 2025-11-25 client; '2': @modelcontextprotocol/client, pinned to
// 2026-07-28) logging in by themselves at our server, and the user at the browser, scripted
// against oidc-provider's own login and consent pages.

export const REDIRECT = 'http://127.0.0.1:9/callback';

// The user at a browser: follows redirects with cookies kept, and signs in as `login` wherever a
// page has a form. Ends at a redirect to `stopAt` ({ callback: its query }) or at the first page
// with no form ({ status, page }).
export async function browse(url, { login, stopAt }) {
  const cookies = new Map();
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
  let at = new URL(url);
  let response = await send(at);
  for (let step = 0; step < 20; step += 1) {
    const location = response.headers.get('location');
    if (location && stopAt && location.startsWith(stopAt)) {
      return { callback: new URL(location).searchParams };
    }
    if (location) {
      at = new URL(location, at);
      response = await send(at);
      continue;
    }
    const page = await response.text();
    const action = page.match(/action="([^"]+)"/);
    if (response.status !== 200 || !page.includes('<form') || !action) {
      return { status: response.status, page };
    }
    const prompt = page.match(/name="prompt" value="([^"]+)"/)?.[1] ?? 'login';
    at = new URL(action[1], at);
    response = await send(at, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt, login, password: login }).toString(),
    });
  }
  throw new Error(`the browser did not settle from ${url}`);
}

export async function sdkExports(sdk) {
  if (sdk === '2') return import('@modelcontextprotocol/client');
  if (sdk === '1') {
    return {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
      ...(await import('@modelcontextprotocol/sdk/client/auth.js')),
      ...(await import('@modelcontextprotocol/sdk/types.js')),
    };
  }
  throw new Error('--sdk 1 or --sdk 2');
}

// A client of `sdk` logged in at `url` as `login`, declaring `capabilities`: { client,
// transport, user, stored, finish }. `user` counts the logins and their scopes; `finish` ends a
// login a call began (a step-up).
export async function loggedIn({ url, sdk, login, capabilities = {}, setUp = () => {} }) {
  const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await sdkExports(sdk);
  const user = { logins: 0, scopes: [], callback: undefined };
  const signIn = async (authorizationUrl) => {
    user.logins += 1;
    user.scopes.push(authorizationUrl.searchParams.get('scope') ?? '');
    const { callback } = await browse(authorizationUrl, { login, stopAt: REDIRECT });
    if (!callback) throw new Error('the login did not end at the redirect');
    if (callback.get('error')) throw new Error(`refused: ${callback}`);
    user.callback = callback;
  };
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
  const finish = (transport) => transport.finishAuth(sdk === '2' ? user.callback : user.callback.get('code'));
  // The 2026-07-28 client speaks the 2025 revision unless told otherwise: pinned here.
  const options = { capabilities, ...(sdk === '2' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}) };
  const open = () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    const client = new Client({ name: `tool-tests-ts-${sdk}`, version: '1.0.0' }, options);
    setUp(client);
    return { client, transport };
  };
  // The first connection ends at the login; a new transport connects with its token.
  let { client, transport } = open();
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await finish(transport);
    ({ client, transport } = open());
    await client.connect(transport);
  }
  // The revision each client speaks: 2025-11-25 for the first, 2026-07-28 for the second.
  const revision = sdk === '2' ? client.getNegotiatedProtocolVersion() : transport.protocolVersion;
  if (revision !== (sdk === '2' ? '2026-07-28' : '2025-11-25')) throw new Error(`spoke ${revision}`);
  return { client, transport, user, stored, finish, revision, UnauthorizedError };
}
