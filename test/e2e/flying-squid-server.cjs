// Starts flying-squid as an operator would with hub-agent's plugin (plugins/flying-squid/README.md): through the
// library, since its app.js lets its defaults win over the config (port 25565 on every interface). Its console
// reads commands from stdin (`stop`). Run with Node:
//   node flying-squid-server.cjs '{"port":…,"worldFolder":…,"plugin":{"host":…,"port":…,"token":…}}'
"use strict";
const path = require("node:path");
const { createMCServer } = require("flying-squid");
const defaults = require("flying-squid/config/default-settings.json");

const o = JSON.parse(process.argv[2]);
const server = createMCServer({
  ...defaults,
  host: "127.0.0.1",
  port: o.port,
  "online-mode": false,
  logging: false,
  "max-players": 10,
  worldFolder: o.worldFolder,
  generation: { name: "superflat", options: {} },
  plugins: { [path.resolve(__dirname, "../../plugins/flying-squid")]: o.plugin },
  version: o.version,
});
server.on("listening", () => {
  // A command that has an effect, then breaks (as a plugin's command can): the plugin must answer it as run.
  server.commands.add({
    base: "hubtest-break",
    info: "says so in the chat, then throws",
    usage: "/hubtest-break",
    op: true,
    action() {
      server.broadcast("hubtest-break had its effect");
      throw new TypeError("broke after its effect");
    },
  });
  console.log(`listening on 127.0.0.1:${o.port}`);
});
