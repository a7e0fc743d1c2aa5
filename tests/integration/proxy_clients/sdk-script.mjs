// A plain user script on the official Anthropic SDK, run by test_agents.py as
// `curlretry --proxy -- node sdk-script.mjs`: the SDK's defaults (its own retries; the key and
// ANTHROPIC_BASE_URL from the environment), the streamed text on stdout. The SDK is found in
// CURLRETRY_NODE_MODULES (the folder scripts/proxy-test-clients.sh installs it into).
import { createRequire } from "node:module";

const require = createRequire(`${process.env.CURLRETRY_NODE_MODULES}/package.json`);
const sdk = require("@anthropic-ai/sdk");
const Anthropic = sdk.default ?? sdk;

const client = new Anthropic();
const stream = client.messages.stream({
  model: "claude-sonnet-4-5",
  max_tokens: 64,
  messages: [{ role: "user", content: "Say hello" }],
});
stream.on("text", (text) => process.stdout.write(text));
await stream.finalMessage();
process.stdout.write("\n");
