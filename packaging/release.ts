/**
 * `npm run release [-- --out DIR --targets linux-x64,linux-arm64 --version X]`: for each target an archive
 * `hub-agent-<version>-<target>.tar.gz` holding one directory of the same name with the executable, README.md,
 * LICENSE, the systemd unit and an example configuration (what `hub-agent init` writes), and a SHA256SUMS file over
 * the archives, as `sha256sum -c` reads it. The version, commit, build date and target are baked into each
 * executable (`hub-agent version`). docs/packaging.md, "Release archives": what each target is for, how it is tested.
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { renderTemplate } from "../lib/app/config.ts";
import { build, type BuildFacts, buildFacts, isTarget, ROOT, type Target, TARGETS } from "./build.ts";

/** The example configuration's name in an archive: not hub-agent.toml, which `init` writes and commands read. */
export const EXAMPLE_CONFIG = "hub-agent.example.toml";

export const archiveName = (version: string, target: string) => `hub-agent-${version}-${target}.tar.gz`;

/** Writes into `dir` what an archive holds besides the executable: the docs, the unit, the example configuration. */
export function stageFiles(dir: string): void {
  for (const file of ["README.md", "LICENSE", "deploy/hub-agent.service"])
    copyFileSync(join(ROOT, file), join(dir, basename(file)));
  writeFileSync(join(dir, EXAMPLE_CONFIG), renderTemplate(), { mode: 0o644 });
}

/** `<sha256>  <name>` lines, as sha256sum writes and checks them. */
export function sha256sums(files: string[]): string {
  const line = (f: string) => `${createHash("sha256").update(readFileSync(f)).digest("hex")}  ${basename(f)}\n`;
  return files.map(line).join("");
}

export interface ReleaseOptions {
  out: string;
  targets: Target[];
  version?: string;
}

/** One target's archive in `out`: its directory staged in `work` (the executable and stageFiles), then packed. */
async function archive(target: Target, facts: BuildFacts, out: string, work: string): Promise<string> {
  const info = { ...facts, target };
  const name = archiveName(info.version, target).replace(/\.tar\.gz$/, "");
  const dir = join(work, name);
  mkdirSync(dir);
  // The compile writes source maps beside its output: only the executable goes into the archive.
  const exe = join(work, `${target}.bin`, "hub-agent");
  await build({ outfile: exe, target, info });
  copyFileSync(exe, join(dir, "hub-agent"));
  stageFiles(dir);
  const file = resolve(out, `${name}.tar.gz`);
  // Owner root, times the build date, names sorted: the archive depends on its contents only.
  const owner = ["--sort=name", "--owner=0", "--group=0", "--numeric-owner", `--mtime=${info.built}`];
  const tar = Bun.spawn(["tar", ...owner, "--use-compress-program=gzip -n", "-cf", file, "-C", work, name], {
    stderr: "pipe",
  });
  if ((await tar.exited) !== 0) throw new Error(`tar failed: ${await new Response(tar.stderr).text()}`);
  console.log(`${basename(file)}  ${(statSync(file).size / 1e6).toFixed(1)} MB`);
  return file;
}

/**
 * Builds every target's archive into `out`, as many at once as there are CPUs (compiling and gzip each keep one
 * busy), and SHA256SUMS beside them; returns the archives' paths, in the order of `targets`.
 */
export async function release(o: ReleaseOptions): Promise<string[]> {
  mkdirSync(o.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "hub-release-"));
  try {
    const facts = buildFacts(o.version); // one commit and date for every target
    const archives: string[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < o.targets.length; i = next++)
        archives[i] = await archive(o.targets[i] as Target, facts, o.out, work);
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), o.targets.length) }, worker));
    writeFileSync(join(o.out, "SHA256SUMS"), sha256sums(archives));
    console.log(`SHA256SUMS  over ${archives.map((a) => basename(a)).join(", ")}, in ${o.out}`);
    return archives;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { out: { type: "string" }, targets: { type: "string" }, version: { type: "string" } },
  });
  const targets = values.targets?.split(",") ?? Object.keys(TARGETS);
  const unknown = targets.filter((t) => !isTarget(t));
  if (unknown.length > 0) {
    console.error(`release: unknown target ${unknown.join(", ")}: the targets are ${Object.keys(TARGETS).join(", ")}`);
    process.exit(2);
  }
  if (values.version !== undefined && !/^\d[\w.+-]*$/.test(values.version)) {
    console.error(`release: --version ${values.version} is not a version (1.2.0, 1.2.0-rc.1): it names the archives`);
    process.exit(2);
  }
  await release({ out: resolve(values.out ?? "dist/release"), targets: targets as Target[], version: values.version });
}
