// Preloaded (node --require) into the outside implementations the tests start: the
// conformance suite and server-everything. Their servers listen on every interface unless
// told otherwise (app.listen(PORT)); here every listen() without a host binds 127.0.0.1 only.
// The socket is bound synchronously on a handle of its own, because the suite reads
// server.address() right after listen() returns, and listen() with a host string resolves it
// first (asynchronously). Once a server listens, one line
// "glove-interop listening 127.0.0.1:<port>" goes to stderr, so a test can start a server with
// PORT=0 (the system picks a free port: no race) and wait for that line instead of polling.
const net = require("net");
const { TCP, constants } = process.binding("tcp_wrap");
const listen = net.Server.prototype.listen;

function loopbackHandle(port) {
  const handle = new TCP(constants.SERVER);
  if (handle.bind("127.0.0.1", port) !== 0) {
    handle.close();
    return null;
  }
  return handle;
}

function announce(server) {
  server.once("listening", () => {
    const where = server.address();
    if (where !== null && typeof where === "object") {
      process.stderr.write(`glove-interop listening ${where.address}:${where.port}\n`);
    }
  });
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  let port;
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] === "string") return listen.apply(this, args); // a host was asked for
    port = Number(first);
    args = args.slice(1);
  } else if (first && typeof first === "object" && first.port !== undefined && !first.host) {
    port = Number(first.port);
    args = args.slice(1);
  } else if (first === undefined || typeof first === "function") {
    port = 0;
  } else {
    return listen.apply(this, args); // a path, a handle, or a host: left as asked
  }
  announce(this);
  const handle = loopbackHandle(port);
  if (handle === null) return listen.call(this, port, "127.0.0.1", ...args);
  return listen.call(this, handle, ...args.filter((a) => typeof a === "function"));
};
