/**
 * What a new operator meets in the first hour, through the CLI (in this process, and the compiled binary where a
 * process of its own matters) against the in-memory service:
 * `help`/`version` aliases, usage errors in one style with exit 2, the interval warnings only where they help, and
 * network/TLS failures and the clock check in plain words.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { hub, hubBinary } from "./binary.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));
const env = () => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-first-")),
});

describe("help and version", () => {
  test("`help` is --help, `help <command>` is `<command> --help`; `version` and -V are --version", async () => {
    const root = await hub(["--help"]);
    // The compiled binary's `help` and `version` commands, against the same CLI run in this process.
    expect(await hubBinary(["help"])).toEqual(root);
    for (const words of [["ban"], ["queue", "retry"]]) {
      const help = await hub(["help", ...words]);
      expect(help.code).toBe(0);
      expect(help).toEqual(await hub([...words, "--help"]));
      expect(help.stdout).toContain(`USAGE hub-agent ${words.join(" ")} `);
    }
    expect(root.stdout).toMatch(/^ {2}help {2,}/m);
    expect(root.stdout).toMatch(/^ {2}version {2,}/m);
    const version = (await hub(["--version"])).stdout;
    expect(version).toMatch(/^\d+\.\d+\.\d+\n$/);
    const short = await hub(["-V"]);
    expect([short.code, short.stderr, short.stdout]).toEqual([0, "", version]);
    // `version`: the version, then the build's facts (release builds bake them in: test/packaging/release.test.ts).
    const long = await hubBinary(["version"]); // one command end to end: the compiled build
    expect([long.code, long.stderr]).toEqual([0, ""]);
    expect(long.stdout).toStartWith(`hub-agent ${version.trim()}\ncommit  `);
    const json = await hub(["--json", "version"]);
    expect([json.code, json.stderr]).toEqual([0, ""]);
    expect(JSON.parse(json.stdout)).toEqual({
      version: version.trim(),
      commit: null,
      built: null,
      target: null,
      bun: Bun.version,
    });
    const unknown = await hub(["help", "frobnicate"]);
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'error: unknown command "frobnicate": run `hub-agent --help` to see the commands\n',
    ]);
  });
});

describe("usage errors", () => {
  const USAGE: [string[], string][] = [
    [
      ["ban", "x", "-5", "r"],
      '"-5" is not a ban length: use minutes as a number (90), a duration (30m, 1d12h, 2w; units w d h m s), or 0/perm',
    ],
    [["ban", "", "10", "x"], "the player is empty: use a SteamID64, STEAM_X:Y:Z or [U:1:N], or a nick"],
    [["ban"], "hub-agent ban needs <player>: hub-agent ban <player> <length> <reason…>"],
    [["ban", "x", "10"], "hub-agent ban needs <reason…>: hub-agent ban <player> <length> <reason…>"],
    [["ban", "x", "10", " "], "the reason is empty: hub-agent ban <player> <length> <reason…>"],
    [["warn", "x"], "hub-agent warn needs <reason…>: hub-agent warn <player> <reason…>"],
    [["unban", "a", "b"], 'hub-agent unban does not take "b": hub-agent unban <player>'],
    [["warns", "a", "b"], 'hub-agent warns does not take "b": hub-agent warns <player>'],
    [["queue", "retry"], "hub-agent queue retry needs <id>: hub-agent queue retry <id>"],
    [["doctor", "x"], 'hub-agent doctor does not take "x": it takes no arguments'],
    [["run", "--once", "now"], 'hub-agent run does not take "now": it takes no arguments'],
    [["ban", "x", "10", "r", "--as"], "--as needs a value: --as <player> (see `hub-agent ban --help`)"],
    [["sandbox", "--port", "-1"], "--port -1 is not a port: use a number from 1 to 65535"],
    [
      ["ban", "x", "10", "r", "--lenght", "5"],
      "unknown option --lenght for `hub-agent ban`: run `hub-agent ban --help` to see its options",
    ],
    [
      ["ban", "a\nb", "1\n0", "r"],
      '"1\\n0" is not a ban length: use minutes as a number (90), a duration (30m, 1d12h, 2w; units w d h m s), or 0/perm',
    ],
  ];
  for (const [args, line] of USAGE)
    test(`${JSON.stringify(args)} → exit 2, one line`, async () => {
      const r = await hub(args, { env: env() });
      expect([r.code, r.stderr, r.stdout]).toEqual([2, `error: ${line}\n`, ""]);
      const json = await hub(["--json", ...args], { env: env() });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toEqual({
        error: { code: 2, message: line.replaceAll("\\n", "\n"), details: [] },
      });
    });

  test("a nick with a line break stays on one line, escaped, in the error", async () => {
    const r = await hub(["unban", "Zoe\nINFO forged"], { env: env() });
    expect(r.code).toBe(5); // no online list yet: not a usage error
    expect(r.stderr.split("\n")).toHaveLength(2); // one line and its newline
    expect(r.stderr).toContain('"Zoe\\nINFO forged"');
  });
});

describe("the interval warnings", () => {
  test("only run and doctor repeat that an interval is below the spec's", async () => {
    const e = { ...env(), HUB_INTERVALS_BANS: "5" };
    const warning = "intervals.bans = 5 s is below the spec's 60 s";
    for (const args of [["queue", "status"], ["dashboard"], ["ban", "76561198012345673", "1h", "r"], ["status"]]) {
      const r = await hub(args, { env: e });
      expect(r.stderr).not.toContain(warning);
    }
    expect((await hub(["doctor"], { env: e })).stderr).toContain(warning);
    expect((await hub(["run", "--once"], { env: e })).stderr).toContain(warning);
  }, 60_000);
});

describe("network and TLS failures in plain words", () => {
  const openssl = "/usr/bin/openssl";
  if (!existsSync(openssl))
    console.warn("SKIPPED: the TLS wording test needs openssl (apt-get install openssl; .ci/run installs it)");
  const certDir = mkdtempSync(join(tmpdir(), "hub-tls-"));
  let tls: ReturnType<typeof Bun.serve> | undefined;
  beforeAll(async () => {
    if (!existsSync(openssl)) return;
    // A self-signed certificate for "localhost" that is its own authority (so it can be trusted on purpose).
    const p = spawn(
      [
        openssl,
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-keyout",
        join(certDir, "key.pem"),
        "-out",
        join(certDir, "cert.pem"),
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    if ((await p.exited) !== 0) throw new Error(`openssl failed: ${await new Response(p.stderr).text()}`);
    tls = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: {
        cert: readFileSync(join(certDir, "cert.pem"), "utf8"),
        key: readFileSync(join(certDir, "key.pem"), "utf8"),
      },
      fetch: () => Response.json({ detail: "not here" }, { status: 404 }),
    });
  });
  afterAll(() => tls?.stop(true));

  const doctor = async (url: string, extra: Record<string, string> = {}) => {
    // The runtime reads NODE_EXTRA_CA_CERTS once, at its start: that check needs a process of its own.
    const cli = "NODE_EXTRA_CA_CERTS" in extra ? hubBinary : hub;
    const r = await cli(["doctor"], { env: { ...env(), HUB_API_URL: url, HUB_API_TIMEOUT: "5", ...extra } });
    const text = r.stdout + r.stderr;
    expect(text).not.toContain("verbose");
    expect(text).not.toContain("Is the computer able");
    return r;
  };
  const clockLine = "- clock    the service did not answer: its clock could not be compared";

  test.skipIf(!existsSync(openssl))(
    "certificate, host name and protocol mismatches each say what is wrong",
    async () => {
      const port = tls!.port;
      const self = await doctor(`https://127.0.0.1:${port}/v1`);
      expect(self.code).toBe(4);
      expect(self.stdout).toContain("TLS error: the certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)");
      expect(self.stdout).toContain("NODE_EXTRA_CA_CERTS");
      expect(self.stdout).toContain(clockLine);

      // Trusted on purpose, but asked for by another name than the one it is for.
      const trusted = { NODE_EXTRA_CA_CERTS: join(certDir, "cert.pem") };
      const host = await doctor(`https://127.0.0.1:${port}/v1`, trusted);
      expect(host.stdout).toContain(
        "TLS error: the certificate is for another host name (ERR_TLS_CERT_ALTNAME_INVALID)",
      );
      // By its own name it is fine: the service answered (a 404 for the server).
      const ok = await doctor(`https://localhost:${port}/v1`, trusted);
      expect(ok.stdout).toContain("✔ service");

      // https:// to a plain-HTTP port, http:// to a TLS port.
      const plain = await doctor(`${sb.url.replace("http://", "https://")}`);
      expect(plain.stdout).toContain(
        "TLS error: the handshake failed: does the service speak HTTPS on that port? (EPROTO)",
      );
      const reset = await doctor(`http://127.0.0.1:${port}/v1`);
      expect(reset.stdout).toContain(
        "network error: the connection was closed before an answer; does the service want https://? (ECONNRESET)",
      );
    },
    60_000,
  );

  test("nothing listening: the refusal in words, and the clock check says it could not compare", async () => {
    const r = await doctor("http://127.0.0.1:9/v1");
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(
      "network error: connection refused: nothing listens at that host and port (ECONNREFUSED)",
    );
    expect(r.stdout).toContain(clockLine);
    expect(r.stdout).not.toContain("Date header");
  });
});
