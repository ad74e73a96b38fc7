/**
 * hub-agent's plugin for flying-squid (a Minecraft server in JavaScript): it connects to hub-agent over TCP and
 * speaks the plugin protocol of docs/plugin-protocol.md. Events: joins (with the player's UUID and address), leaves
 * (with the kick reason), chat, spawns (login and respawn), deaths (with the last player who hit them) and changes
 * of the one group flying-squid has, `op`. Requests: players, kick, message, group (`op` only), exec (a console
 * command; its printed lines are the output).
 *
 * Settings (flying-squid's `plugins` setting, keyed by this folder's path):
 *   { "host": "127.0.0.1", "port": 25585, "token": "<game.rcon.password of hub-agent>" }
 * No dependency besides Node's own modules.
 *
 * The token never crosses the wire (whoever holds the port while hub-agent is down would learn it): hub-agent's
 * challenge and this plugin's nonce are signed with it, and hub-agent must prove it knows the token too before this
 * plugin answers a request or sends an event.
 */
"use strict";
const crypto = require("node:crypto");
const net = require("node:net");

const PROTOCOL_VERSION = 2;
/** A nonce, and an HMAC-SHA256, as lower-case hex: 32 bytes. */
const HEX32 = /^[0-9a-f]{64}$/;
/** hub-agent's lines are short; a longer one is dropped whole. */
const MAX_LINE_BYTES = 1024 * 1024;
const BACKOFF_MS = [1000, 2000, 5000, 10000, 30000];

module.exports.server = function (serv) {
  const settings = this.settings || {};
  const host = settings.host || "127.0.0.1";
  const port = Number(settings.port || 25585);
  const token = String(settings.token || "");
  const log = (msg) => serv.info(`[hub-agent] ${msg}`);
  if (!token) {
    log("no token in the plugin's settings: not connecting (set token to hub-agent's game.rcon.password)");
    return;
  }

  let socket = null;
  let welcomed = false;
  let attempt = 0;
  let stopped = false;
  let retryTimer = null;

  /** One message to hub-agent, if connected and welcomed (events before that are dropped: hub-agent resyncs). */
  function send(message) {
    if (socket && welcomed) socket.write(`${JSON.stringify(message)}\n`);
  }
  const ref = (player) => ({ id: player.uuid, name: player.username });
  /** HMAC-SHA256(token, side + hub-agent's nonce + this plugin's nonce): one side's proof, for one connection. */
  const mac = (side, agentNonce, pluginNonce) =>
    crypto
      .createHmac("sha256", token)
      .update(side + agentNonce + pluginNonce, "utf8")
      .digest();
  serv.hubAgent = { send, event: (e, fields) => send({ t: "event", e, ...fields }), ref };

  function connect() {
    if (stopped) return;
    const s = net.connect({ host, port });
    socket = s;
    welcomed = false;
    s.setNoDelay(true);
    let parts = [];
    let bytes = 0;
    let dropping = false;
    /** This connection's nonces, once hub-agent's challenge came. */
    const hs = { agent: null, plugin: null };
    s.on("data", (chunk) => {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
        if (!dropping) {
          bytes += piece.length;
          if (bytes > MAX_LINE_BYTES) {
            dropping = true;
            parts = [];
            log(`dropped a line of over ${MAX_LINE_BYTES} bytes from hub-agent`);
          } else parts.push(piece);
        }
        if (nl === -1) return;
        const line = Buffer.concat(parts).toString("utf8");
        const dropped = dropping;
        parts = [];
        bytes = 0;
        dropping = false;
        if (!dropped && line.trim()) onLine(s, hs, line);
        start = nl + 1;
      }
    });
    s.on("error", (e) => {
      if (attempt === 0 || attempt % 10 === 0) log(`cannot reach hub-agent at ${host}:${port}: ${e.message}`);
    });
    s.on("close", () => {
      if (socket !== s) return;
      if (welcomed) log("disconnected from hub-agent; reconnecting");
      socket = null;
      welcomed = false;
      if (stopped) return;
      const delay = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];
      attempt++;
      retryTimer = setTimeout(connect, delay);
    });
  }

  function onLine(s, hs, line) {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      log("ignored a line from hub-agent that is not JSON");
      return;
    }
    if (m.t === "challenge" && !hs.agent) {
      if (m.v !== PROTOCOL_VERSION || typeof m.nonce !== "string" || !HEX32.test(m.nonce)) {
        const update = m.v > PROTOCOL_VERSION ? "update this plugin" : "not a challenge of this version";
        log(
          `hub-agent at ${host}:${port} speaks protocol version ${m.v}; this plugin speaks ${PROTOCOL_VERSION}: ${update}`,
        );
        return void s.destroy();
      }
      hs.agent = m.nonce;
      hs.plugin = crypto.randomBytes(32).toString("hex");
      const proof = mac("plugin", hs.agent, hs.plugin).toString("hex");
      const hello = { t: "hello", v: PROTOCOL_VERSION, nonce: hs.plugin, mac: proof };
      s.write(`${JSON.stringify({ ...hello, game: "minecraft", software: "flying-squid" })}\n`);
    } else if (m.t === "welcome" && !welcomed) {
      // Only hub-agent knows the token: anything else on the port (a program that took it while hub-agent was
      // down) gets no answer and no event.
      const theirs = typeof m.mac === "string" && HEX32.test(m.mac) ? Buffer.from(m.mac, "hex") : null;
      if (!hs.agent || !theirs || !crypto.timingSafeEqual(theirs, mac("agent", hs.agent, hs.plugin))) {
        log(`whatever listens on ${host}:${port} could not prove it knows the token: not hub-agent; disconnected`);
        return void s.destroy();
      }
      welcomed = true;
      attempt = 0;
      log(`connected to hub-agent at ${host}:${port}`);
    } else if (m.t === "error") {
      const older = !hs.agent && m.error === "hello_timeout" ? "; it sent no challenge: update hub-agent" : "";
      log(`hub-agent says: ${m.message} (${m.error})${older}`);
    } else if (m.t === "ping") {
      s.write('{"t":"pong"}\n');
    } else if (m.t === "req" && welcomed) {
      answer(m).then(
        (r) => send({ t: "res", id: m.id, ok: true, r: r === undefined ? null : r }),
        (e) => send({ t: "res", id: m.id, ok: false, err: e && e.message ? e.message : String(e) }),
      );
    }
  }

  function player(m) {
    const p = serv.uuidToPlayer[m.p];
    if (!p) throw new Error(`no such player: ${m.p}`);
    return p;
  }

  async function answer(m) {
    switch (m.op) {
      case "players":
        return {
          players: serv.players.filter((p) => p.username && !p.disconnected).map(ref),
          max: Number(serv._server?.maxPlayers ?? 0) || undefined,
        };
      case "kick": {
        const p = player(m);
        p.kick(String(m.reason ?? ""));
        return null;
      }
      case "message":
        if (m.p === undefined) serv.broadcast(String(m.text));
        else player(m).chat(String(m.text));
        return null;
      case "group": {
        if (m.group !== "op") throw new Error(`flying-squid has one group, op; not ${m.group}`);
        const p = player(m);
        p.hubAgentOpChange = true;
        try {
          p.op = m.action === "add";
        } finally {
          p.hubAgentOpChange = false;
        }
        return null;
      }
      case "exec":
        return { output: await exec(String(m.cmd)) };
      default:
        throw new Error(`unknown op ${m.op}`);
    }
  }

  /** Runs a console command as the server console would; what it prints while it runs is its output. */
  async function exec(cmd) {
    const printed = [];
    const info = serv.info;
    const err = serv.err;
    serv.info = (msg) => (printed.push(String(msg)), info(msg));
    serv.err = (msg) => (printed.push(String(msg)), err(msg));
    try {
      const res = await serv.commands.use(cmd.replace(/^\//, ""));
      if (res) printed.push(String(res));
    } catch (e) {
      // A UserError is flying-squid refusing the command before it ran (not found, bad syntax): nothing happened,
      // so "ok":false. Anything else broke off a command that had started and may have had effects: it is answered
      // as run, with the error in its output, so hub-agent never runs a `once` reward a second time.
      if (e && e.userError) throw new Error(e.message);
      printed.push(`error: ${e && e.message ? e.message : String(e)}`);
    } finally {
      serv.info = info;
      serv.err = err;
    }
    return printed.join("\n");
  }

  serv.on("close", () => {
    stopped = true;
    clearTimeout(retryTimer);
    socket?.destroy();
  });
  connect();
};

module.exports.player = function (player, serv) {
  const hub = serv.hubAgent;
  if (!hub) return;
  // flying-squid's own player plugins (kick, health) are installed after this one: wrap them once all are.
  player.once("asap", () => watch(player, hub));
};

function watch(player, hub) {
  let kickReason;
  let joined = false;
  const kick = player.kick;
  player.kick = (reason) => {
    kickReason = reason;
    return kick(reason);
  };
  player.on("connected", () => {
    joined = true;
    const ip = player._client.socket?.remoteAddress;
    hub.event("player_connect", { p: hub.ref(player), ...(ip ? { ip } : {}) });
  });
  player.on("disconnected", () => {
    if (!joined) return;
    hub.event("player_disconnect", { p: hub.ref(player), ...(kickReason !== undefined ? { reason: kickReason } : {}) });
  });
  player.on("spawned", () => hub.event("player_spawn", { p: hub.ref(player) }));
  player.on("requestRespawn_done", () => hub.event("player_spawn", { p: hub.ref(player) }));
  player.on("chat", ({ message }) => {
    if (typeof message === "string") hub.event("chat", { p: hub.ref(player), text: message });
  });
  // Who hit this player last, for the death's killer.
  player.on("attack", ({ attackedEntity }) => {
    if (attackedEntity && attackedEntity.type === "player") attackedEntity.hubAgentLastAttacker = player;
  });
  const updateHealth = player.updateHealth;
  player.updateHealth = (health) => {
    const was = player.health;
    updateHealth(health);
    if (joined && was > 0 && health <= 0) {
      const killer = player.hubAgentLastAttacker;
      hub.event("player_death", { p: hub.ref(player), ...(killer ? { killer: hub.ref(killer) } : {}) });
    }
  };
  // flying-squid's one group: `op`, set by the op/deop commands. Changes made in the game are reported.
  let op = player.op;
  Object.defineProperty(player, "op", {
    configurable: true,
    enumerable: true,
    get: () => op,
    set(value) {
      const changed = Boolean(value) !== Boolean(op);
      op = value;
      if (changed && joined && !player.hubAgentOpChange)
        hub.event("group_change", { p: hub.ref(player), group: "op", op: value ? "add" : "remove", origin: "ingame" });
    },
  });
}
