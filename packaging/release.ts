/**
 * `npm run release [-- --out DIR --targets linux-x64,linux-arm64 --version X --no-debs]`: for each target an
 * archive `hub-agent-<version>-<target>.tar.gz` holding one directory of the same name with the executable,
 * README.md, LICENSE, the systemd unit and its template (one process per server) and an example configuration
 * (what `hub-agent init` writes); for linux-x64 and linux-arm64 also the Debian package of the same executable
 * (packaging/deb.ts); and a SHA256SUMS file over them all, as `sha256sum -c` reads it. The version, commit, build
 * date and target are baked into each executable (`hub-agent version`). docs/packaging.md, "Release archives": what
 * each target is for, how it is tested.
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { renderTemplate } from "../lib/app/config.ts";
import { build, type BuildFacts, buildFacts, isTarget, ROOT, type Target, TARGETS } from "./build.ts";
import { type Arch, buildDeb } from "./deb.ts";

/** The example configuration's name in an archive: not hub-agent.toml, which `init` writes and commands read. */
export const EXAMPLE_CONFIG = "hub-agent.example.toml";

export const archiveName = (version: string, target: string) => `hub-agent-${version}-${target}.tar.gz`;

/** Writes into `dir` what an archive holds besides the executable: the docs, the units, the example configuration. */
export function stageFiles(dir: string): void {
  for (const file of ["README.md", "LICENSE", "deploy/hub-agent.service", "deploy/hub-agent@.service"])
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
  /** Also a Debian package of each glibc build (packaging/deb.ts; needs dpkg-deb). */
  debs?: boolean;
}

/** The glibc builds a Debian package is made of; a musl build can't be one (its loader is not Debian's). */
const DEB_ARCH: Partial<Record<Target, Arch>> = { "linux-x64": "amd64", "linux-arm64": "arm64" };

/**
 * One target's archive in `out`, its directory staged in `work` (the executable and stageFiles), then packed; and
 * with `debs` its Debian package of the same executable. Returns what it wrote.
 */
async function archive(target: Target, facts: BuildFacts, o: ReleaseOptions, work: string): Promise<string[]> {
  const out = o.out;
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
  const arch = DEB_ARCH[target];
  const deb = o.debs && arch ? [await buildDeb({ binary: exe, arch, version: info.version, out })] : [];
  for (const f of [file, ...deb]) console.log(`${basename(f)}  ${(statSync(f).size / 1e6).toFixed(1)} MB`);
  return [file, ...deb];
}

/**
 * Builds every target's archive (and Debian package) into `out`, as many targets at once as there are CPUs
 * (compiling and gzip each keep one busy), and SHA256SUMS beside them; returns their paths, in the order of `targets`.
 */
export async function release(o: ReleaseOptions): Promise<string[]> {
  mkdirSync(o.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "hub-release-"));
  try {
    const facts = buildFacts(o.version); // one commit and date for every target
    const written: string[][] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < o.targets.length; i = next++)
        written[i] = await archive(o.targets[i] as Target, facts, o, work);
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), o.targets.length) }, worker));
    const files = written.flat();
    writeFileSync(join(o.out, "SHA256SUMS"), sha256sums(files));
    console.log(`SHA256SUMS  over ${files.map((a) => basename(a)).join(", ")}, in ${o.out}`);
    return files;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      targets: { type: "string" },
      version: { type: "string" },
      debs: { type: "boolean", default: true },
    },
    allowNegative: true,
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
  const debs = values.debs && Bun.which("dpkg-deb") !== null;
  if (values.debs && !debs) console.log("dpkg-deb is missing (Debian package dpkg): no .deb is made (--no-debs)");
  const out = resolve(values.out ?? "dist/release");
  await release({ out, targets: targets as Target[], version: values.version, debs });
}
