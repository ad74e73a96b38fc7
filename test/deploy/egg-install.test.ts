/**
 * The egg's install script (deploy/egg-hub-agent.json, scripts.installation) run as the panel runs it: with bash,
 * the egg's variables in the environment, and a fresh directory at /mnt/server (a bind mount in a mount namespace
 * of its own), against a release served over loopback HTTP. The release is made here in `npm run release`'s layout:
 * SHA256SUMS beside hub-agent-<version>-<target>.tar.gz archives, each one directory of the same name holding the
 * executable (the real compiled one for linux-x64; stand-ins for linux-arm64, linux-x64-baseline and linux-x64-musl,
 * to see which one was taken). It installs the archive of the machine's architecture; it refuses a wrong checksum with one line
 * and leaves the server's directory as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { binary } from "../cli/binary.ts";
import { runToEnd } from "../support/procs.ts";
import type { Egg } from "./egg-format.ts";
import { passesRules } from "./egg-format.ts";

const ROOT = join(import.meta.dir, "..", "..");
const egg = JSON.parse(readFileSync(join(ROOT, "deploy", "egg-hub-agent.json"), "utf8")) as Egg;
const V = pkg.version;
const archive = (target: string) => `hub-agent-${V}-${target}.tar.gz`;

const missing =
  process.getuid?.() !== 0
    ? "root (a mount namespace with the server's directory at /mnt/server)"
    : ["unshare", "bash", "curl", "tar", "sha256sum"].find((t) => !Bun.which(t));
if (missing) console.warn(`SKIPPED: the egg install script test needs ${missing}`);

const work = mkdtempSync(join(tmpdir(), "hub-egg-install-"));
const script = join(work, "install.sh"); // the installer container has it at /mnt/install/install.sh
/** Release directory → file name → bytes, as served. */
const releases = new Map<string, Map<string, Uint8Array>>();
const requests: string[] = [];
let server: ReturnType<typeof Bun.serve> | undefined;
const base = (release: string) => `http://127.0.0.1:${server?.port}/releases/${release}`;

/** A .tar.gz of one directory named like the archive, holding `hub-agent` (and the docs, as release.ts packs). */
async function pack(target: string, exe: Uint8Array): Promise<Uint8Array> {
  const name = archive(target).replace(/\.tar\.gz$/, "");
  const stage = mkdtempSync(join(work, "stage-"));
  mkdirSync(join(stage, name));
  writeFileSync(join(stage, name, "hub-agent"), exe, { mode: 0o755 });
  for (const doc of ["README.md", "LICENSE"]) writeFileSync(join(stage, name, doc), readFileSync(join(ROOT, doc)));
  const out = join(stage, `${name}.tar.gz`);
  const tar = await runToEnd(["tar", "--use-compress-program=gzip -1", "-cf", out, "-C", stage, name]);
  if (tar.code !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return new Uint8Array(readFileSync(out));
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sums = (files: Map<string, Uint8Array>) =>
  [...files].map(([name, bytes]) => `${sha256(bytes)}  ${name}\n`).join("");
const standIn = (says: string) => new TextEncoder().encode(`#!/bin/sh\necho ${says}\n`);

beforeAll(async () => {
  if (missing) return;
  writeFileSync(script, egg.scripts.installation.script);
  const good = new Map<string, Uint8Array>([
    [archive("linux-x64"), await pack("linux-x64", new Uint8Array(readFileSync(await binary())))],
    [archive("linux-x64-musl"), await pack("linux-x64-musl", standIn("the-musl-build"))],
    [archive("linux-arm64"), await pack("linux-arm64", standIn("the-arm64-build"))],
    [archive("linux-x64-baseline"), await pack("linux-x64-baseline", standIn("the-baseline-build"))],
  ]);
  releases.set("good", new Map([...good, ["SHA256SUMS", new TextEncoder().encode(sums(good))]]));
  // The same archives, but the linux-x64 line of SHA256SUMS is another file's sum (a corrupted or swapped download).
  const wrong = sums(good).replace(sha256(good.get(archive("linux-x64")) as Uint8Array), sha256(standIn("x")));
  releases.set("wrong-sum", new Map([...good, ["SHA256SUMS", new TextEncoder().encode(wrong)]]));
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const [, , release = "", file = ""] = path.split("/");
      const body = releases.get(release)?.get(file);
      return body ? new Response(body) : new Response("not found", { status: 404 });
    },
  });
}, 120_000);
afterAll(() => {
  server?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

interface Install {
  code: number;
  stdout: string;
  stderr: string;
  dir: string;
}

/**
 * Runs the install script as Wings does: bash, the egg's variables (defaults, then `typed`) and the panel's own in
 * the environment, a fresh directory (or `dir`) at /mnt/server. `machine` is what `uname -m` says; /proc/cpuinfo
 * is a stand-in whose flags have avx2 unless `noAvx2`.
 */
async function install(
  typed: Record<string, string>,
  opts: { machine?: string; dir?: string; noAvx2?: boolean } = {},
): Promise<Install> {
  const dir = opts.dir ?? mkdtempSync(join(work, "server-"));
  for (const [name, value] of Object.entries(typed)) {
    const rules = egg.variables.find((x) => x.env_variable === name)?.rules ?? "";
    expect({ [name]: passesRules(value, rules) }).toEqual({ [name]: true }); // as the panel checks what is typed
  }
  const bin = mkdtempSync(join(work, "bin-"));
  if (opts.machine) {
    writeFileSync(join(bin, "uname"), `#!/bin/sh\n[ "$1" = -m ] && echo ${opts.machine} || exec /usr/bin/uname "$@"\n`);
    chmodSync(join(bin, "uname"), 0o755);
  }
  const env = {
    PATH: `${bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    SERVER_MEMORY: "1024",
    SERVER_IP: "0.0.0.0",
    SERVER_PORT: "27960",
    ...Object.fromEntries(egg.variables.map((x) => [x.env_variable, typed[x.env_variable] ?? x.default_value])),
  };
  const cpuinfo = join(bin, "cpuinfo");
  writeFileSync(cpuinfo, `processor\t: 0\nflags\t\t: fpu sse sse2 avx ${opts.noAvx2 ? "" : "avx2 "}bmi2\n`);
  const mountServer =
    'mount -t tmpfs tmpfs /mnt && mkdir /mnt/server && mount --bind "$1" /mnt/server && ' +
    'mount --bind "$4" /proc/cpuinfo && exec "$2" "$3"';
  const unshare = ["unshare", "--mount", "--propagation", "private"];
  const argv = [...unshare, "sh", "-c", mountServer, "sh", dir, egg.scripts.installation.entrypoint, script, cpuinfo];
  return { ...(await runToEnd(argv, { env, cwd: work })), dir };
}

const lines = (s: string) => s.split("\n").filter(Boolean);

describe.skipIf(missing !== undefined)("the egg's install script", () => {
  test("downloads the x86_64 archive, checks its SHA256 and puts the executable in the server's directory", async () => {
    requests.length = 0;
    const r = await install({ HUB_AGENT_DOWNLOAD_URL: base("good") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(lines(r.stdout).at(-1)).toBe(`Installed hub-agent ${V} in the server's directory`);
    expect(readdirSync(r.dir)).toEqual(["hub-agent"]);
    expect(statSync(join(r.dir, "hub-agent")).mode & 0o777).toBe(0o755);
    expect(requests).toEqual(["/releases/good/SHA256SUMS", `/releases/good/${archive("linux-x64")}`]);
    // The egg's startup line runs it from there.
    expect(egg.startup.split(" ")[0]).toBe("./hub-agent");
    expect((await runToEnd(["./hub-agent", "--version"], { cwd: r.dir })).stdout).toBe(`${V}\n`);
  }, 60_000);

  test("on aarch64 the linux-arm64 archive, without AVX2 the baseline one; a pinned version; no build: refused", async () => {
    const arm = await install({ HUB_AGENT_DOWNLOAD_URL: base("good") }, { machine: "aarch64" });
    expect(arm.code, arm.stderr).toBe(0);
    expect(readFileSync(join(arm.dir, "hub-agent"), "utf8")).toContain("the-arm64-build");

    const pinned = await install({ HUB_AGENT_DOWNLOAD_URL: base("good"), HUB_AGENT_VERSION: V }, { machine: "arm64" });
    expect(pinned.code, pinned.stderr).toBe(0);
    const absent = await install({ HUB_AGENT_DOWNLOAD_URL: base("good"), HUB_AGENT_VERSION: "9.9.9" });
    expect([absent.code, lines(absent.stderr)]).toEqual([
      1,
      [`hub-agent install: SHA256SUMS at ${base("good")} lists no hub-agent-9.9.9-linux-x64.tar.gz`],
    ]);
    expect(readdirSync(absent.dir)).toEqual([]);

    const old = await install({ HUB_AGENT_DOWNLOAD_URL: base("good") }, { noAvx2: true });
    expect(old.code, old.stderr).toBe(0); // a CPU without AVX2: the baseline build, which runs there
    expect(readFileSync(join(old.dir, "hub-agent"), "utf8")).toContain("the-baseline-build");

    const riscv = await install({ HUB_AGENT_DOWNLOAD_URL: base("good") }, { machine: "riscv64" });
    expect([riscv.code, lines(riscv.stderr)]).toEqual([
      1,
      ["hub-agent install: there is no hub-agent build for this machine (riscv64): x86_64 and aarch64 only"],
    ]);
  }, 60_000);

  test("a wrong checksum is refused in one line, exit 1, and nothing is installed (an old executable stays)", async () => {
    const fresh = await install({ HUB_AGENT_DOWNLOAD_URL: base("wrong-sum") });
    expect(fresh.code).toBe(1);
    expect(lines(fresh.stderr)).toHaveLength(1);
    expect(fresh.stderr).toStartWith(`hub-agent install: ${archive("linux-x64")} does not match SHA256SUMS (sha256 `);
    expect(fresh.stderr).toEndWith(": nothing installed\n");
    expect(readdirSync(fresh.dir)).toEqual([]);

    const dir = mkdtempSync(join(work, "server-"));
    writeFileSync(join(dir, "hub-agent"), "the old executable", { mode: 0o755 });
    const over = await install({ HUB_AGENT_DOWNLOAD_URL: base("wrong-sum") }, { dir });
    expect(over.code).toBe(1);
    expect(readdirSync(dir)).toEqual(["hub-agent"]);
    expect(readFileSync(join(dir, "hub-agent"), "utf8")).toBe("the old executable");
  }, 60_000);

  test("a release that isn't there is one line, exit 1", async () => {
    const r = await install({ HUB_AGENT_DOWNLOAD_URL: base("nothing-here") });
    expect([r.code, lines(r.stderr)]).toEqual([
      1,
      [`hub-agent install: could not download ${base("nothing-here")}/SHA256SUMS (curl exit 22)`],
    ]);
    expect(readdirSync(r.dir)).toEqual([]);
  }, 60_000);
});
