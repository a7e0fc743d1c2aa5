// A real WebSocket server and client (the `ws` package from npm) for test_proxy_websocket.py.
//   node websocket.mjs server LOG [--tls CERT KEY] [--refuse N STATUS]
//     Echoes every message back as it came (text or binary). The first N handshakes are refused
//     with STATUS (Retry-After: 0, body "refused N"); every handshake appends one JSON line to LOG
//     (path, headers, answer), every close one line (its code and reason). Prints its port first.
//     A text message "close:CODE:REASON" makes the server close with that code.
//   node websocket.mjs client URL [--connect HOST:PORT --ca FILE] < SCRIPT
//     Connects to URL (through an HTTP proxy's CONNECT when --connect is given, trusting FILE),
//     runs SCRIPT from stdin (JSON: {protocols, send: [{b64, binary, times}], close: [code, reason],
//     digest}: each message is b64's bytes `times` times; digest: echoes as sha256 and length)
//     and prints one JSON line: open, protocol, echoes (base64), close code/reason,
//     unexpected (status, headers, body) when the handshake got no 101, timings in ms.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { appendFileSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";

const require = createRequire(`${process.env.CURLRETRY_NODE_MODULES}/package.json`);
const { WebSocket, WebSocketServer } = require("ws");
const [mode, ...args] = process.argv.slice(2);
const started = performance.now();
const ms = () => Math.round(performance.now() - started);

function option(name, count = 1) {
  const i = args.indexOf(name);
  return i < 0 ? null : args.slice(i + 1, i + 1 + count);
}

function server() {
  const log = args[0];
  const tlsFiles = option("--tls", 2);
  const refuse = option("--refuse", 2);
  let refusals = refuse ? Number(refuse[0]) : 0;
  const status = refuse ? Number(refuse[1]) : 503;
  const record = (entry) => appendFileSync(log, JSON.stringify(entry) + "\n");
  const web = tlsFiles
    ? https.createServer({ cert: readFileSync(tlsFiles[0]), key: readFileSync(tlsFiles[1]) })
    : http.createServer();
  web.on("request", (req, res) => {
    record({ plain: req.url, headers: req.headers });
    res.writeHead(426, { "content-type": "text/plain" }).end("upgrade required\n");
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (set) => (set.has("chat") ? "chat" : false) });
  web.on("upgrade", (req, socket, head) => {
    if (refusals > 0) {
      const body = `refused ${refusals}\n`;
      refusals -= 1;
      record({ path: req.url, headers: req.headers, answer: status });
      socket.end(`HTTP/1.1 ${status} Refused\r\nRetry-After: 0\r\nContent-Type: text/plain\r\n` +
                 `X-Refusal: yes\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    record({ path: req.url, headers: req.headers, answer: 101 });
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on("message", (data, binary) => {
        const text = binary ? "" : data.toString();
        if (text.startsWith("close:")) {
          const [, code, reason] = text.split(":");
          ws.close(Number(code), reason);
          return;
        }
        ws.send(data, { binary });
      });
      ws.on("close", (code, reason) => record({ closed: code, reason: reason.toString() }));
    });
  });
  web.listen(0, "127.0.0.1", () => process.stdout.write(`${web.address().port}\n`));
}

// CONNECT through the proxy, then TLS inside it: what an HTTPS_PROXY client does for wss://.
function tunnelled(proxy, url, ca) {
  const [host, port] = proxy.split(":");
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const raw = net.connect(Number(port), host);
    let got = "";
    raw.on("error", reject);
    raw.on("connect", () => raw.write(`CONNECT ${target.host} HTTP/1.1\r\nHost: ${target.host}\r\n\r\n`));
    const onData = (chunk) => {
      got += chunk.toString("latin1");
      if (!got.includes("\r\n\r\n")) return;
      raw.off("data", onData);
      if (!got.startsWith("HTTP/1.1 200")) reject(new Error(`CONNECT answered ${got.split("\r\n")[0]}`));
      else resolve(() => tls.connect({ socket: raw, servername: target.hostname, ca: readFileSync(ca) }));
    };
    raw.on("data", onData);
  });
}

async function client() {
  const [url] = args;
  const script = JSON.parse(readFileSync(0, "utf8"));
  const payload = (m) => Buffer.concat(Array(m.times ?? 1).fill(Buffer.from(m.b64, "base64")));
  const echo = (data) =>
    script.digest ? { sha256: createHash("sha256").update(data).digest("hex"), length: data.length } : { b64: data.toString("base64") };
  const connect = option("--connect");
  const ca = option("--ca");
  const options = {};
  if (connect) options.createConnection = await tunnelled(connect[0], url, ca[0]);
  const out = { open: false, echoes: [] };
  const ws = new WebSocket(url, script.protocols ?? [], options);
  const expected = (script.send ?? []).length;
  return await new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ ...out, timeout: true, ms: ms() }), script.timeout_ms ?? 20000);
    const done = (extra) => {
      clearTimeout(timer);
      resolve({ ...out, ...extra, ms: ms() });
    };
    ws.on("unexpected-response", (req, res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () =>
        done({ unexpected: { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() } }));
    });
    ws.on("error", (e) => {
      out.error = String(e.message);
    });
    ws.on("open", () => {
      out.open = true;
      out.open_ms = ms();
      out.protocol = ws.protocol;
      for (const m of script.send ?? []) ws.send(payload(m), { binary: m.binary });
      if (expected === 0 && script.close) ws.close(...script.close);
    });
    ws.on("message", (data, binary) => {
      out.echoes.push({ ...echo(Buffer.from(data)), binary });
      if (out.echoes.length === expected && script.close) ws.close(...script.close);
    });
    ws.on("close", (code, reason) => done({ close: { code, reason: reason.toString() } }));
  });
}

if (mode === "server") server();
else if (mode === "client")
  client()
    .catch((e) => ({ error: String(e.message) }))
    .then((r) => process.stdout.write(JSON.stringify(r) + "\n"));
else {
  process.stderr.write("usage: websocket.mjs server LOG [--tls CERT KEY] [--refuse N STATUS] | client URL < SCRIPT\n");
  process.exit(2);
}
