// Real Node.js clients for tests/integration/test_proxy.py. One JSON line on stdout per run.
//   node client.mjs fetch URL [BODY]          Node's own fetch (undici)
//   node client.mjs fetch-stream URL          chunk arrival times of a streamed body
//   node client.mjs many N URL_PREFIX SCRIPT  N concurrent fetches of URL_PREFIX<i>/SCRIPT
//   node client.mjs anthropic BASE_URL        @anthropic-ai/sdk messages.create
//   node client.mjs anthropic-stream BASE_URL
//   node client.mjs openai BASE_URL           openai chat.completions.create
//   node client.mjs openai-stream BASE_URL
// The SDKs come from CURLRETRY_NODE_MODULES (a folder holding node_modules/), with their own
// retries off (maxRetries: 0): every retry a test counts is the proxy's.
import { createRequire } from "node:module";
import { createHash } from "node:crypto";

const [mode, ...args] = process.argv.slice(2);
const started = performance.now();
const ms = () => Math.round(performance.now() - started);

function sdk(name) {
  const require = createRequire(`${process.env.CURLRETRY_NODE_MODULES}/package.json`);
  const mod = require(name);
  return mod.default ?? mod;
}

async function main() {
  switch (mode) {
    case "fetch": {
      const init = args[1] !== undefined ? { method: "POST", body: args[1] } : {};
      const r = await fetch(args[0], init);
      return { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
    }
    case "fetch-stream": {
      const r = await fetch(args[0]);
      const decoder = new TextDecoder();
      const chunks = [];
      for await (const chunk of r.body) chunks.push({ at: ms(), text: decoder.decode(chunk) });
      return { status: r.status, chunks };
    }
    case "many": {
      const n = Number(args[0]);
      const results = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await fetch(`${args[1]}${i}/${args[2]}`);
          const body = await r.text();
          return `${r.status} ${createHash("sha256").update(body).digest("hex")}`;
        }),
      );
      const tally = {};
      for (const line of results) tally[line] = (tally[line] ?? 0) + 1;
      return { tally, ms: ms() };
    }
    case "anthropic":
    case "anthropic-stream": {
      const Anthropic = sdk("@anthropic-ai/sdk");
      const client = new Anthropic({ baseURL: args[0], apiKey: "sk-test-not-a-key", maxRetries: 0 });
      const request = { model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
      if (mode === "anthropic") return { message: await client.messages.create(request) };
      const events = [];
      const stream = await client.messages.create({ ...request, stream: true });
      for await (const event of stream) events.push(event.type);
      return { events };
    }
    case "openai":
    case "openai-stream": {
      const OpenAI = sdk("openai");
      const client = new OpenAI({ baseURL: args[0], apiKey: "sk-test-not-a-key", maxRetries: 0 });
      const request = { model: "gpt-test", messages: [{ role: "user", content: "hi" }] };
      if (mode === "openai") return { completion: await client.chat.completions.create(request) };
      const events = [];
      const stream = await client.chat.completions.create({ ...request, stream: true });
      for await (const event of stream) events.push(event);
      return { events };
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

main().then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.log(JSON.stringify({ error: String(error), status: error?.status ?? null }));
    process.exitCode = 1;
  },
);
