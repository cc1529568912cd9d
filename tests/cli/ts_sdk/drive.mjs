// The TypeScript Claude Agent SDK drives moot: run by tests/cli/test_agent_sdk_ts.py with
// NODE_PATH naming a node_modules that holds @anthropic-ai/claude-agent-sdk.
// argv: <shim> <workspace> <scenario>; prints one JSON line per SDK message.
import { createRequire } from "node:module";
import path from "node:path";

const [shim, cwd, scenario] = process.argv.slice(2);
const require = createRequire(path.join(process.env.NODE_PATH, "noop.js"));
const sdkPath = require.resolve("@anthropic-ai/claude-agent-sdk");
const { query, tool, createSdkMcpServer } = await import(sdkPath);
const { z } = await import(require.resolve("zod"));

const base = { pathToClaudeCodeExecutable: shim, cwd, env: { ...process.env } };
const asked = [];
const options = {
  oneshot: base,
  tools: {
    ...base,
    canUseTool: async (tool, input) => {
      asked.push([tool, input.command]);
      return input.command.includes("allowed")
        ? { behavior: "allow", updatedInput: input }
        : { behavior: "deny", message: "not that file" };
    },
  },
  resume: { ...base, resume: process.env.RESUME },
  dirs: {
    ...base,
    additionalDirectories: [process.env.OTHER],
    settingSources: ["user"],
    settings: JSON.stringify({ permissions: { allow: ["Bash(echo hi:*)"] } }),
    canUseTool: async (tool, input) => {
      asked.push([tool, input.path ?? input.command]);
      return { behavior: "allow", updatedInput: input };
    },
  },
  hook: {
    ...base,
    hooks: {
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            async (input) => {
              asked.push([input.hook_event_name, input.tool_input.command]);
              return {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "deny",
                  permissionDecisionReason: "no shell today",
                },
              };
            },
          ],
        },
      ],
    },
  },
  schema: {
    ...base,
    outputFormat: {
      type: "json_schema",
      schema: { type: "object", properties: { files: { type: "integer" } }, required: ["files"] },
    },
  },
  mcp: {
    ...base,
    allowedTools: ["mcp__calc__add"],
    mcpServers: {
      calc: createSdkMcpServer({
        name: "calc",
        tools: [
          tool("add", "Add two integers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
            asked.push(["add", a, b]);
            return { content: [{ type: "text", text: String(a + b) }] };
          }),
        ],
      }),
    },
  },
}[scenario];

// "multiturn": a streaming-input session of three turns, each sent once the one before has its
// result; the second is interrupted as soon as it starts (its init line).
async function* turns(next) {
  for (const text of ["one", "two", "three"]) {
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
    await new Promise((resolve) => next.push(resolve));
  }
}

if (scenario === "multiturn") {
  const next = [];
  const session = query({ prompt: turns(next), options: base });
  let results = 0;
  for await (const message of session) {
    console.log(JSON.stringify(message));
    if (message.type === "system" && message.subtype === "init" && results === 1) {
      asked.push(["interrupt", await session.interrupt()]);
    }
    if (message.type === "result" && ++results === 3) break;
    if (message.type === "result") next.shift()();
  }
} else {
  for await (const message of query({ prompt: "go", options })) {
    console.log(JSON.stringify(message));
  }
}
console.log(JSON.stringify({ type: "asked", asked }));
