// An MCP client nobody on the team wrote: the official TypeScript SDK lists fileshed's tools
// and calls them over Streamable HTTP. Usage: node smoke.mjs <url of /mcp> [bearer token]
// Prints one JSON line on success; throws (exit code 1) on the first surprise.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const headers = { "X-OpenWebUI-Chat-Id": "smoke-chat" };
if (token) headers.Authorization = `Bearer ${token}`;
const client = new Client({ name: "fileshed-smoke", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const name of ["shed_create_file", "shed_read", "shed_tree", "shed_lockedit"]) {
  assert.ok(names.includes(name), `tools/list lacks ${name}: ${names}`);
}
assert.equal(tools.find((t) => t.name === "shed_read").annotations.readOnlyHint, true);

const envelope = (res) => {
  assert.equal(res.content.length, 1);
  assert.equal(res.content[0].type, "text");
  const env = JSON.parse(res.content[0].text);
  assert.deepEqual(res.structuredContent, env, "structuredContent is the envelope");
  assert.equal(Boolean(res.isError), !env.success, "isError is not success");
  return env;
};
const call = async (name, args) => envelope(await client.callTool({ name, arguments: args }));

let env = await call("shed_create_file", { zone: "storage", path: "smoke/hello.txt", content: "hello from TypeScript" });
assert.equal(env.success, true, JSON.stringify(env));
env = await call("shed_read", { zone: "storage", path: "smoke/hello.txt" });
assert.match(env.data.content, /hello from TypeScript/);
env = await call("shed_read", { zone: "storage", path: "smoke/missing.txt" });
assert.equal(env.error, "FILE_NOT_FOUND");
env = await call("shed_tree", { zone: "storage", depth: "2" }); // lenient: a number in a string
assert.equal(env.success, true, JSON.stringify(env));
await client.close();
console.log(JSON.stringify({ ok: true, tools: names.length }));
