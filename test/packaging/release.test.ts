/**
 * `npm run release`: SHA256SUMS over the archives, each archive's contents, and each executable run from a fresh
 * directory it was unpacked into, with a clean environment and no Node.js on PATH: `version`, `init`, `doctor`
 * against the in-memory service and a `ban` delivered, natively for x64 and under qemu-user for arm64. The musl
 * builds can't run on Debian (no musl libstdc++): their ELF needs are checked (docs/packaging.md, "Release archives").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import type { Target } from "../../packaging/build.ts";
import { EM_AARCH64, EM_X86_64, readElfNeeds } from "../../packaging/elf.ts";
import { archiveName, EXAMPLE_CONFIG } from "../../packaging/release.ts";
import { renderTemplate } from "../../lib/app/config.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { runToEnd as run } from "../support/procs.ts";
import { fillIn, releaseOnce, runner, useScratch, TESTED_TARGETS } from "./release-build.ts";

const scratch = useScratch();
const root = join(import.meta.dir, "..", "..");
let out: string;
let sb: Sandbox;
beforeAll(async () => {
  [out, sb] = await Promise.all([releaseOnce(), startSandbox()]);
}, 300_000);
afterAll(() => sb?.stop());

/** The glibc targets `npm run release` also makes a Debian package of, and its architecture. */
const DEB: Partial<Record<Target, string>> = { "linux-x64": "amd64", "linux-arm64": "arm64" };
const debName = (t: Target) => `hub-agent_${pkg.version}-1_${DEB[t]}.deb`;
const dirName = (t: Target) => archiveName(pkg.version, t).replace(/\.tar\.gz$/, "");

const unpacked = new Map<Target, Promise<string>>();
/** The archive unpacked into a fresh directory (once per target: only the run test writes there). */
function unpack(target: Target): Promise<string> {
  let dir = unpacked.get(target);
  if (!dir)
    unpacked.set(
      target,
      (dir = (async () => {
        const into = scratch(`unpacked-${target}-`);
        const r = await run(["tar", "-xzf", join(out, archiveName(pkg.version, target)), "-C", into]);
        expect(r).toMatchObject({ code: 0, stderr: "" });
        return join(into, dirName(target));
      })()),
    );
  return dir;
}

describe("npm run release", () => {
  test("SHA256SUMS names each archive and Debian package, and sha256sum -c accepts them", async () => {
    const released = TESTED_TARGETS.flatMap((t) => [archiveName(pkg.version, t), ...(DEB[t] ? [debName(t)] : [])]);
    const sums = readFileSync(join(out, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    expect(sums.map((l) => l.split("  ")[1])).toEqual(released);
    const check = await run(["sha256sum", "-c", "SHA256SUMS"], { cwd: out });
    expect(check.code).toBe(0);
    expect(check.stdout.trimEnd().split("\n")).toEqual(released.map((f) => `${f}: OK`));
    expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", ...released].sort());
  });

  test.each(Object.keys(DEB) as Target[])(
    "%s: the Debian package beside the archive holds the same executable",
    async (t) => {
      const deb = join(out, debName(t));
      const fields = await run(["dpkg-deb", "--field", deb, "Package", "Version", "Architecture"]);
      expect(fields.stdout).toBe(`Package: hub-agent\nVersion: ${pkg.version}-1\nArchitecture: ${DEB[t]}\n`);
      const tree = scratch(`deb-${t}-`);
      expect((await run(["dpkg-deb", "-x", deb, tree])).code).toBe(0);
      const packaged = readFileSync(join(tree, "usr/bin/hub-agent"));
      expect(packaged.equals(readFileSync(join(await unpack(t), "hub-agent")))).toBe(true);
    },
  );

  test.each(TESTED_TARGETS)(
    "%s: one directory with the executable, README, LICENSE, the unit and its template, an example",
    async (t) => {
      const list = await run(["tar", "-tzf", join(out, archiveName(pkg.version, t))]);
      const files = [
        "",
        "LICENSE",
        "README.md",
        "hub-agent",
        EXAMPLE_CONFIG,
        "hub-agent.service",
        "hub-agent@.service",
      ];
      expect(list.stdout.trimEnd().split("\n").sort()).toEqual(files.map((f) => `${dirName(t)}/${f}`).sort());
      const dir = await unpack(t);
      expect(statSync(join(dir, "hub-agent")).mode & 0o777).toBe(0o755);
      for (const [inside, source] of [
        ["README.md", "README.md"],
        ["LICENSE", "LICENSE"],
        ["hub-agent.service", "deploy/hub-agent.service"],
        ["hub-agent@.service", "deploy/hub-agent@.service"],
      ] as const)
        expect(readFileSync(join(dir, inside), "utf8")).toBe(readFileSync(join(root, source), "utf8"));
      expect(readFileSync(join(dir, EXAMPLE_CONFIG), "utf8")).toBe(renderTemplate());
    },
  );

  for (const target of TESTED_TARGETS.filter((t) => !t.endsWith("-musl"))) {
    const how = runner(target);
    if ("skip" in how) console.warn(`skipped: ${target} archive's run: ${how.skip}`);
    test.skipIf("skip" in how)(
      `${target}: from its unpacked archive, no Node.js: version, init, doctor, a delivered ban`,
      async () => {
        const prefix = "prefix" in how ? how.prefix : [];
        const dir = await unpack(target);
        // A clean environment: PATH is an empty directory (no Node.js, no Bun), HOME the unpacked directory.
        const bare = scratch("no-node-");
        const env = { PATH: bare, HOME: dir, LANG: "C.UTF-8" };
        const hub = (...args: string[]) => run([...prefix, join(dir, "hub-agent"), ...args], { cwd: dir, env });

        const version = await hub("version", "--json");
        expect(version).toMatchObject({ code: 0, stderr: "" });
        const info = JSON.parse(version.stdout);
        const head = (await run(["git", "rev-parse", "--short=12", "HEAD"], { cwd: root })).stdout.trim();
        expect(info).toMatchObject({ version: pkg.version, target, bun: Bun.version });
        expect(info.commit).toStartWith(head);
        expect(Date.now() - Date.parse(info.built)).toBeLessThan(30 * 60_000);
        expect((await hub("-V")).stdout).toBe(`${pkg.version}\n`);

        expect((await hub("init")).code).toBe(0);
        const toml = join(dir, "hub-agent.toml");
        expect(statSync(toml).mode & 0o777).toBe(0o600);
        expect(readFileSync(toml, "utf8")).toBe(readFileSync(join(dir, EXAMPLE_CONFIG), "utf8"));
        fillIn(toml, sb);

        const doctor = await hub("doctor");
        expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
        expect(doctor.stdout).toContain(`✔ service  ${sb.url} answered`);
        expect(doctor.stdout).toContain("✔ server   key accepted");

        const reason = `griefing (${target} archive)`;
        const ban = await hub("ban", "76561198012345671", "30m", reason);
        expect(ban.code, ban.stdout + ban.stderr).toBe(0);
        const posts = sb.control.requests({ method: "POST", path: "/ban/" });
        expect(posts.filter((r) => r.status === 200 && (r.body as { reason?: string }).reason === reason)).toHaveLength(
          1,
        );
      },
      120_000,
    );
  }

  /** An executable's ELF needs (packaging/elf.ts, as the Debian package reads them: no binutils needed). */
  const needs = async (t: Target) => readElfNeeds(new Uint8Array(readFileSync(join(await unpack(t), "hub-agent"))));

  const MUSL = { "linux-x64-musl": ["x86_64", EM_X86_64], "linux-arm64-musl": ["aarch64", EM_AARCH64] } as const;
  test.each(Object.keys(MUSL) as (keyof typeof MUSL)[])(
    "%s: musl's loader and libc, and libstdc++ (Alpine: apk add libstdc++ libgcc)",
    async (target) => {
      const [arch, machine] = MUSL[target];
      const elf = await needs(target);
      expect(elf.machine).toBe(machine);
      expect(elf.interpreter).toBe(`/lib/ld-musl-${arch}.so.1`);
      expect([...elf.needed].sort()).toEqual([`libc.musl-${arch}.so.1`, "libstdc++.so.6"]);
    },
  );

  test.each(["linux-x64", "linux-arm64"] as const)("%s: needs glibc 2.17 at most (docs/packaging.md)", async (t) => {
    // Each GLIBC_x.y the executable asks for, as x * 1000 + y.
    const glibc = [...(await needs(t)).versions.values()].flat().flatMap((v) => {
      const m = /^GLIBC_(\d+)\.(\d+)$/.exec(v);
      return m ? [Number(m[1]) * 1000 + Number(m[2])] : [];
    });
    expect(glibc.length).toBeGreaterThan(0);
    expect(Math.max(...glibc)).toBe(2017); // 2.17
  });
});

test("an unknown target, or a version that can't name a file, is refused before anything is built", async () => {
  const dir = join(scratch("refused-"), "out");
  const release = (...args: string[]) =>
    run([process.execPath, "packaging/release.ts", "--out", dir, ...args], { cwd: root });
  const target = await release("--targets", "linux-x64,linux-riscv64");
  expect(target.code).toBe(2);
  expect(target.stderr).toContain(
    "release: unknown target linux-riscv64: the targets are linux-x64, linux-x64-baseline,",
  );
  const version = await release("--targets", "linux-x64", "--version", "../1.0");
  expect(version.code).toBe(2);
  expect(version.stderr).toContain("release: --version ../1.0 is not a version (1.2.0, 1.2.0-rc.1)");
  expect(existsSync(dir)).toBe(false);
});
