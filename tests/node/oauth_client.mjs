// The official MCP TypeScript clients logging in by themselves (`--sdk 1`:
// @modelcontextprotocol/sdk, the 2025-11-25 client; `--sdk 2`: @modelcontextprotocol/client, the
// 2026-07-28 client): from a bare 401 it reads the protected resource metadata, registers with the
// authorization server (oidc-provider), gets a token for our resource with PKCE (the user's login
// and consent scripted against the provider's own pages), lists and calls tools; a call that
// needs a scope the token lacks makes it step up. Prints `ok <check>` per check, `done` at the end.
//
//   node oauth_client.mjs --sdk 1|2 --url http://127.0.0.1:PORT/mcp
import { loggedIn } from './oauth_login.mjs';

const argument = (name) => process.argv[process.argv.indexOf(name) + 1];
const url = argument('--url');
const sdk = argument('--sdk');
const ok = (name, detail = '') => console.log(`ok ${name} ${detail}`.trimEnd());

const { client, transport, user, finish, revision, UnauthorizedError } = await loggedIn({ url, sdk, login: 'grace' });

// A call refused for its scope ends in UnauthorizedError, after the login: the transport takes
// the code, and the call is made again.
async function authorized(step) {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await finish(transport);
    return step();
  }
}

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
const revoked = await authorized(() => client.callTool({ name: 'device_revoke', arguments: { id: 'd1' } }));
if (revoked.isError) throw new Error(JSON.stringify(revoked));
if (user.logins !== before + 1 || !user.scopes.at(-1).includes('devices:admin')) throw new Error(`no step-up: ${JSON.stringify(user)}`);
ok('stepped up', `scope ${user.scopes.at(-1)}`);
await client.close();
console.log('done');
