// Out-of-process check of `flowctl mcp` with the official TypeScript SDK:
// list the tools, call task_create, ctx_merge and task_ready over stdio,
// list and get the prompts,
// and fail on any protocol error, tool error, or unexpected result.
//
// usage: node check.mjs FLOWCTL_BINARY DIR   (DIR holds a fresh .flow/flow.db)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dir] = process.argv.slice(2);
if (!bin || !dir) {
  console.error("usage: node check.mjs FLOWCTL_BINARY DIR");
  process.exit(2);
}

const started = Date.now();
const protocolErrors = [];
const log = (msg) => console.log(`[${String(Date.now() - started).padStart(5)} ms] ${msg}`);
const fail = (msg) => {
  console.error(`mcp-check: FAIL: ${msg}`);
  process.exit(1);
};

const transport = new StdioClientTransport({ command: bin, args: ["mcp"], cwd: dir, stderr: "pipe" });
transport.stderr?.on("data", (d) => process.stderr.write(`flowctl mcp stderr: ${d}`));
const client = new Client({ name: "mcp-check", version: "1.0.0" });
client.onerror = (err) => protocolErrors.push(err);

// call calls a tool; a tool error or a result without structured content fails.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).map((c) => c.text).join(" | ");
  if (res.isError) fail(`${name}: tool error: ${text}`);
  if (!res.structuredContent) fail(`${name}: no structured content`);
  log(`${name} -> ${res.content[0].text}`);
  return res.structuredContent;
}

function expect(cond, what) {
  if (!cond) fail(what);
}

try {
  await client.connect(transport);
  const server = client.getServerVersion();
  log(`connected to ${server.name} ${server.version} (${bin} mcp in ${dir})`);

  const { tools } = await client.listTools();
  log(`tools/list: ${tools.map((t) => t.name).join(", ")}`);
  for (const want of ["task_create", "ctx_merge", "task_ready"]) {
    expect(tools.some((t) => t.name === want && t.outputSchema), `tools/list has no ${want} with an output schema`);
  }
  // Every parameter, at any depth, says what it is.
  const undescribed = [];
  const walk = (tool, path, schema) => {
    for (const [name, p] of Object.entries(schema?.properties ?? {})) {
      if (!p.description) undescribed.push(`${tool}.${path}${name}`);
      walk(tool, `${path}${name}.`, p);
      if (p.items) walk(tool, `${path}${name}[].`, p.items);
    }
  };
  for (const t of tools) walk(t.name, "", t.inputSchema);
  expect(undescribed.length === 0, `parameters without a description: ${undescribed.join(", ")}`);
  const update = tools.find((t) => t.name === "task_update");
  expect(update?.inputSchema?.properties?.status?.enum?.includes("done"), "task_update.status is not an enum");

  const created = await call("task_create", {
    tasks: [
      { key: "parse", title: "write the parser" },
      { key: "test", title: "test the parser", deps: ["parse"] },
    ],
    request_id: "mcp-check-1",
  });
  expect(created.tasks.length === 2 && created.tasks[1].deps?.[0] === created.tasks[0].id,
    `task_create: ${JSON.stringify(created)}`);
  const again = await call("task_create", {
    tasks: [
      { key: "parse", title: "write the parser" },
      { key: "test", title: "test the parser", deps: ["parse"] },
    ],
    request_id: "mcp-check-1",
  });
  expect(JSON.stringify(again) === JSON.stringify(created), "task_create retried with the same request_id created again");

  const first = created.tasks[0].id;
  const merged = await call("ctx_merge", { task: first, patch: { branch: "parser", files: ["parse.go"], notes: { todo: 2 } } });
  expect(merged.version === 2 && merged.context.branch === "parser" && merged.context.notes.todo === 2,
    `ctx_merge: ${JSON.stringify(merged)}`);
  const merged2 = await call("ctx_merge", { task: first, patch: { branch: null, notes: { done: 1 } }, if_version: 2 });
  expect(merged2.version === 3 && !("branch" in merged2.context) && merged2.context.notes.todo === 2 && merged2.context.notes.done === 1,
    `ctx_merge (second): ${JSON.stringify(merged2)}`);

  const ready = await call("task_ready", {});
  expect(ready.tasks.length === 1 && ready.tasks[0].id === first, `task_ready: ${JSON.stringify(ready)}`);

  // A refused call is a tool error with a code, not a protocol error.
  const bad = await client.callTool({ name: "ctx_merge", arguments: { task: first, patch: { x: 1 }, if_version: 1 } });
  const body = JSON.parse(bad.content[0].text);
  expect(bad.isError && body.error.code === "conflict" && body.error.hint, `stale if_version: ${JSON.stringify(bad)}`);
  log(`ctx_merge with a stale if_version -> tool error ${body.error.code}: ${body.error.message}`);

  // The prompts: listed with descriptions, and each one filled from the file.
  const { prompts } = await client.listPrompts();
  log(`prompts/list: ${prompts.map((p) => p.name).join(", ")}`);
  for (const want of ["start-session", "finish-task", "request-approval"]) {
    expect(prompts.some((p) => p.name === want && p.description), `prompts/list has no ${want} with a description`);
  }
  for (const [name, args] of [["start-session", {}], ["finish-task", { task: first }], ["request-approval", { task: first }]]) {
    const got = await client.getPrompt({ name, arguments: args });
    const text = got.messages?.[0]?.content?.text ?? "";
    expect(got.messages.length === 1 && text.includes(name === "start-session" ? "task_ready" : first),
      `prompts/get ${name}: ${JSON.stringify(got)}`);
    log(`prompts/get ${name} -> ${text.split("\n")[0]}`);
  }

  await client.close();
} catch (err) {
  fail(`protocol error: ${err?.stack ?? err}`);
}
if (protocolErrors.length > 0) fail(`protocol errors: ${protocolErrors.map(String).join("; ")}`);
log("ok");
