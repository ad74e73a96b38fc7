/**
 * The fake servers checked by RCON clients nobody here wrote: Debian's python3-rcon (Richard Neumann's `rcon`,
 * Source RCON incl. its fragment detection) and npm's `rcon` (node-rcon: Source RCON over TCP, Quake-style rcon over
 * UDP). If a fake drifted from the protocol to suit our own client, these would notice.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import Rcon from "rcon";
import { spawn } from "../../support/procs.ts";
import { FakeQ3Server } from "./fake-q3-server.ts";
import { FakeSourceRconServer } from "./fake-source-rcon-server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const BIG = Array.from({ length: 400 }, (_, i) => `${String(i).padStart(4, "0")} ä € — ${"x".repeat(i % 40)}`).join(
  "\n",
);
const handler = (c: string) =>
  c === "big" ? BIG : c === "" ? "" : c.startsWith("echo ") ? c.slice(5) : `Unknown command "${c}"`;

async function source(dialect: "source" | "minecraft") {
  const fake = await FakeSourceRconServer.start({ dialect, handler });
  cleanups.push(() => fake.close());
  return fake;
}

const PYTHON_RCON = "/usr/lib/python3/dist-packages/rcon/source/client.py";

/** python3-rcon: one session running `commands`; prints a JSON list of replies, or the exception's class name. */
const PY = `
import json, sys
from rcon.source import Client
from rcon.exceptions import WrongPassword
port, password, commands = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
try:
    with Client("127.0.0.1", port, passwd=password, timeout=5, frag_threshold=4000, frag_detect_cmd="") as c:
        print(json.dumps([c.run(cmd) for cmd in commands]))
except WrongPassword:
    print(json.dumps("WrongPassword"))
`;

async function python(port: number, password: string, commands: string[]): Promise<unknown> {
  const proc = spawn(["/usr/bin/python3", "-c", PY, String(port), password, JSON.stringify(commands)], {
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`python3-rcon exited ${code}: ${err}`);
  return JSON.parse(out);
}

// Minecraft's dialect only: python3-rcon reads each packet through a fresh buffered reader and drops what it read
// ahead, so srcds' two answers to a login (an empty value, then the auth response) in one TCP segment hang it.
describe.skipIf(!existsSync(PYTHON_RCON))("python3-rcon against the Source RCON fake", () => {
  for (const dialect of ["minecraft"] as const) {
    test(`${dialect} dialect: login, commands, a reply of several packets, a wrong password`, async () => {
      const fake = await source(dialect);
      expect(await python(fake.port, "secret", ["echo hello", "big", "echo after"])).toEqual(["hello", BIG, "after"]);
      expect(await python(fake.port, "wrong", ["echo never"])).toBe("WrongPassword");
      expect(fake.commands).not.toContain("echo never");
    });
  }
});

/** node-rcon: connects, authenticates, sends `commands` one after the other; resolves with the replies. */
function nodeRcon(opts: { port: number; password: string; tcp: boolean }, commands: string[]): Promise<string[]> {
  const conn = new Rcon("127.0.0.1", opts.port, opts.password, { tcp: opts.tcp, challenge: false });
  const replies: string[] = [];
  return new Promise<string[]>((resolve, reject) => {
    let authed = false;
    const next = () => {
      if (replies.length === commands.length) return resolve(replies);
      conn.send(commands[replies.length]!);
    };
    conn.on("auth", () => {
      authed = true;
      next();
    });
    conn.on("response", (text: string) => {
      if (!authed) return; // srcds' empty answer before the auth response
      replies.push(text);
      next();
    });
    conn.on("error", reject);
    conn.connect();
  }).finally(() => conn.disconnect());
}

describe("npm rcon (node-rcon) against the fakes", () => {
  for (const dialect of ["source", "minecraft"] as const) {
    test(`Source RCON, ${dialect} dialect: auth, then one reply per command; a wrong password is refused`, async () => {
      const fake = await source(dialect);
      expect(await nodeRcon({ port: fake.port, password: "secret", tcp: true }, ["echo one", "echo two"])).toEqual([
        "one",
        "two",
      ]);
      const refused = await nodeRcon({ port: fake.port, password: "wrong", tcp: true }, ["echo never"]).catch(
        (e: Error) => e.message,
      );
      expect(refused).toBe("Authentication failed");
    });
  }

  test("Quake 3 rcon over UDP: the command and its print reply", async () => {
    const fake = await FakeQ3Server.start({ handler: (c) => `${handler(c)}\n` });
    cleanups.push(() => fake.close());
    // node-rcon takes any out-of-band datagram as the reply and cuts its first character (the `n` of DarkPlaces'
    // and GoldSrc's answers): of ioq3's `print\n<text>` that leaves `rint\n<text>`.
    const [reply] = await nodeRcon({ port: fake.port, password: "secret", tcp: false }, ["echo hello"]);
    expect(reply).toMatch(/^rint\nhello\n?$/);
    expect(fake.commands).toEqual(["echo hello"]);
  });
});
