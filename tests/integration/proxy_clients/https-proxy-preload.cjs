// `node --require` preload: Node 20's own fetch ignores HTTPS_PROXY and NO_PROXY. undici (the
// npm package of the same code, pinned in package.json) reads them in EnvHttpProxyAgent; set as
// the global dispatcher it carries fetch, and the SDKs built on fetch, through the proxy. The
// intercepted hosts' certificates verify through NODE_EXTRA_CA_CERTS (Node's TLS default store).
const { createRequire } = require("node:module");

const load = createRequire(`${process.env.CURLRETRY_NODE_MODULES}/package.json`);
const { EnvHttpProxyAgent, setGlobalDispatcher } = load("undici");
setGlobalDispatcher(new EnvHttpProxyAgent());
