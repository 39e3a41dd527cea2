// A real MCP client for test_mcp.py: the official TypeScript SDK's
// Client over its stdio transport, driving harness-mcp through a
// scenario and printing what it got as one JSON object.
//
//   node client.mjs SCENARIO.json
//
// SCENARIO: {"command": [argv], "cwd": DIR, "env": {...},
//            "steps": [{"call": TOOL, "args": {...},
//                       "cancel_after_ms": N, "progress": true}, ...]}
// Each step's arguments are checked against the tool's declared
// inputSchema (ajv, as the SDK bundles it) before the call; the SDK
// itself checks every structuredContent against the tool's
// outputSchema (callTool throws when it does not match). The output:
// {"tools": [...], "steps": [{"input_valid": bool, "result": R} or
// {"error": {"code", "message"}}, "progress": N], "stderr": TEXT}.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(process.env.HX_MCP_MODULES + "/");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const Ajv = require("ajv");

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
// "url" and "token": the Streamable HTTP transport of a harness-mcp
// --http that the test started; "terminate": DELETE the session at the
// end. Otherwise "command" is started on stdio.
let transport;
if (spec.url) {
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: { Authorization: "Bearer " + spec.token } },
  });
} else {
  transport = new StdioClientTransport({
    command: spec.command[0],
    args: spec.command.slice(1),
    cwd: spec.cwd,
    env: spec.env,
    stderr: "pipe",
  });
}
let stderr = "";
transport.stderr?.on("data", (d) => { stderr += d.toString(); });
// "elicit": {"action": "accept", "answer": TEXT}: the client can show
// questions (ask_user), and its user answers so; each is in "questions".
const client = new Client({ name: "harness-test", version: "1.0.0" },
  { capabilities: spec.elicit ? { elicitation: {} } : {} });
const ajv = new Ajv({ strict: false, allErrors: true });
const out = { tools: [], steps: [], questions: [] };
if (spec.elicit) {
  const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.questions.push(req.params);
    const e = spec.elicit;
    return e.action === "accept" ? { action: "accept", content: { answer: e.answer } } : { action: e.action };
  });
}

async function step(s, schemas) {
  const r = { progress: 0 };
  const validate = schemas[s.call];
  r.input_valid = validate ? validate(s.args ?? {}) : null;
  const ac = new AbortController();
  let timer;
  if (s.cancel_after_ms) timer = setTimeout(() => ac.abort("test cancels"), s.cancel_after_ms);
  const opts = { signal: ac.signal, timeout: s.timeout_ms ?? 120000 };
  if (s.progress) {
    opts.onprogress = () => { r.progress++; };
    opts.resetTimeoutOnProgress = true;
  }
  const t0 = Date.now();
  try {
    r.result = await client.callTool({ name: s.call, arguments: s.args ?? {} }, undefined, opts);
  } catch (e) {
    r.error = { code: e.code ?? null, message: String(e.message ?? e) };
  }
  r.ms = Date.now() - t0;
  clearTimeout(timer);
  if (s.pause_ms) await new Promise((ok) => setTimeout(ok, s.pause_ms));
  return r;
}

try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.tools = (await client.listTools()).tools;
  const schemas = {};
  for (const t of out.tools) {
    schemas[t.name] = ajv.compile(t.inputSchema);
    if (t.outputSchema) ajv.compile(t.outputSchema);
  }
  if (spec.parallel) {
    out.steps = await Promise.all(spec.steps.map((s) => step(s, schemas)));
  } else {
    for (const s of spec.steps) out.steps.push(await step(s, schemas));
  }
} catch (e) {
  out.fatal = String(e.stack ?? e);
}
if (spec.terminate) await transport.terminateSession().catch((e) => { out.terminate_error = String(e); });
await client.close();
await new Promise((ok) => setTimeout(ok, 100));
out.stderr = stderr;
process.stdout.write(JSON.stringify(out) + "\n");
