// A client no one here wrote: the official MCP TypeScript SDK's, over stdio (`pyaichat mcp`) or Streamable
// HTTP (with the bearer token). Prints one JSON object: the tools it was given and what each call returned.
// Usage: node ts_client.mjs stdio <python> | node ts_client.mjs http <url> <token>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, token] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: ["-m", "pyaichat", "mcp"], env: process.env })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
      });
const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  out.tools = tools.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint ?? null }));
  out.calls = [];
  for (const [name, args] of [
    ["get_type", { expr: "df" }],
    ["eval_expr", { expr: "df['n'].sum()" }],
    ["run_python", { code: "df['n'] = 0\nprint('ran in the walled copy')" }],
  ]) {
    const result = await client.callTool({ name, arguments: args });
    out.calls.push({ name, isError: !!result.isError, text: result.content.map((c) => c.text ?? "").join("") });
  }
} catch (error) {
  out.error = String(error);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(out));
