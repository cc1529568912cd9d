// An editor written with Zed's TypeScript ACP client (`@agentclientprotocol/sdk`), driving
// `moot acp` (tests/acp/test_acp_ts_client.py): it offers fs/read_text_file and
// fs/write_text_file over in-memory buffers, answers permission requests, and cancels a turn
// while a question is open. It prints what it saw as one JSON line.
//
// Usage: node ts_editor.mjs WORKSPACE -- MOOT_COMMAND...   (NODE_PATH: the SDK's node_modules)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.MOOT_ACP_NPM, "x.js"));
const acp = await import(require.resolve("@agentclientprotocol/sdk"));

const [workspace, , ...command] = process.argv.slice(2);
const notes = path.join(workspace, "notes.txt");
const buffers = new Map([[notes, "hello unsaved world\n"]]);
const seen = { written: [], asked: [], updates: [] };
let onQuestion = null; // set: the next question waits for the person (the cancel)

const agentProcess = spawn(command[0], command.slice(1), {
  cwd: workspace,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params.update);
  })
  .onRequest("session/request_permission", async ({ params }) => {
    seen.asked.push(params.toolCall.toolCallId);
    if (onQuestion !== null) {
      const answer = onQuestion;
      onQuestion = null;
      return await answer(params);
    }
    return { outcome: { outcome: "selected", optionId: "once" } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    const content = buffers.has(params.path) ? buffers.get(params.path) : readFileSync(params.path, "utf8");
    return { content };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    seen.written.push(params.path);
    buffers.set(params.path, params.content);
    return {};
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
  });
  const session = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  const sessionId = session.sessionId;
  const first = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "edit it" }],
  });
  const firstUpdates = seen.updates.length;
  // The next turn asks about its first edit; the person cancels the turn instead of answering.
  onQuestion = async () => {
    await ctx.notify("session/cancel", { sessionId });
    return { outcome: { outcome: "cancelled" } };
  };
  const second = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "edit more" }],
  });
  const later = seen.updates.slice(firstUpdates);
  const announced = later.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.toolCallId);
  const finished = later
    .filter((u) => u.sessionUpdate === "tool_call_update" && ["completed", "failed"].includes(u.status))
    .map((u) => u.toolCallId);
  return {
    agent: init.agentInfo?.name,
    first: first.stopReason,
    second: second.stopReason,
    asked: seen.asked.length,
    written: seen.written,
    buffers: Object.fromEntries(buffers),
    announced,
    finished,
  };
});
agentProcess.stdin.end();
agentProcess.kill();
process.stdout.write(JSON.stringify(result) + "\n");
