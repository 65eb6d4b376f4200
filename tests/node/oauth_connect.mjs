// The official MCP TypeScript clients (`--sdk 1`: @modelcontextprotocol/sdk, 2025-11-25;
// `--sdk 2`: @modelcontextprotocol/client, 2026-07-28), declaring URL elicitation, at a gateway
// that mounts a server per user: logged in at the gateway as `lin`, a call of the mounted tool
// without an account there sends the user to the gateway's page to connect one; the user opens
// it (signing in at the gateway's provider, then the mounted server's), and the call goes
// through as `lin`. On 2025-11-25 the call fails with -32042 and is made again; on 2026-07-28
// the input-required result's URL elicitation is answered by the client's handler, and the
// client makes the call again by itself. Prints `ok <check>` per check, the gateway token it
// holds as `inbound <token>`, and `done`.
//
//   node oauth_connect.mjs --sdk 1|2 --url http://127.0.0.1:PORT/mcp
import { browse, loggedIn, sdkExports } from './oauth_login.mjs';

const argument = (name) => process.argv[process.argv.indexOf(name) + 1];
const url = argument('--url');
const sdk = argument('--sdk');
const ok = (name, detail = '') => console.log(`ok ${name} ${detail}`.trimEnd());
const LOGIN = 'lin';

const exports = await sdkExports(sdk);
const opened = [];
// The user opens the page: it ends at "Connected".
async function open(page) {
  const { status, page: text } = await browse(page, { login: LOGIN });
  if (status !== 200 || !text.includes('connected')) throw new Error(`${page}: ${status} ${text.slice(0, 300)}`);
  opened.push(page);
}
// A URL elicitation opens the page and accepts; a form (the gateway confirming a call of a tool
// not marked read-only) is accepted as it is.
const answer = async (request) => {
  if (request.params.mode !== 'url') return { action: 'accept', content: {} };
  await open(request.params.url);
  return { action: 'accept' };
};
const setUp = (client) =>
  sdk === '2'
    ? client.setRequestHandler('elicitation/create', answer)
    : client.setRequestHandler(exports.ElicitRequestSchema, answer);
const { client, stored } = await loggedIn({
  url, sdk, login: LOGIN, capabilities: { elicitation: { form: {}, url: {} } }, setUp,
});
ok('logged in');

const principal = (result) => result.structuredContent?.result ?? result.content[0].text;
const call = () => client.callTool({ name: 'up-whoami', arguments: {} });
let who;
if (sdk === '1') {
  try {
    who = await call();
    throw new Error(`the call went through without an account: ${JSON.stringify(who)}`);
  } catch (error) {
    if (!(error instanceof exports.McpError) || error.code !== -32042) throw error;
    const [asked] = error.data.elicitations;
    if (asked.mode !== 'url') throw new Error(JSON.stringify(asked));
    ok('sent to connect', asked.url);
    await open(asked.url);
    ok('connected');
  }
  who = await call();
} else {
  who = await call();
  if (opened.length !== 1) throw new Error(`opened ${opened}`);
  ok('sent to connect', opened[0]);
}
if (who.isError || !principal(who).endsWith(`#${LOGIN}`)) throw new Error(JSON.stringify(who));
ok('called as', principal(who));
const again = await call();
if (again.isError || principal(again) !== principal(who)) throw new Error(JSON.stringify(again));
ok('called again');
await client.close();
console.log(`inbound ${stored.tokens.access_token}`);
console.log('done');
