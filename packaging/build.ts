/**
 * The one `bun build --compile` command line of hub-agent. `npm run build` runs this file (dist/hub-agent for this
 * machine); the release archives (release.ts), the Debian package, and the tests' and benches' binaries
 * (test/cli/binary.ts) compile with the same flags, so what is tested is what ships.
 *
 *   bun packaging/build.ts [--target linux-arm64] [--outfile dist/hub-agent]
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };

export const ROOT = join(import.meta.dir, "..");

/**
 * The Linux targets Bun cross-compiles to from its platform packages on the npm registry (`bun build --compile
 * --target=bun-<name>` downloads the one it lacks), and what each is for (docs/packaging.md, "Release archives").
 */
export const TARGETS = {
  "linux-x64": "x86-64 with glibc 2.17 or later (Debian, Ubuntu, RHEL, the Pterodactyl images); a CPU with AVX2",
  "linux-x64-baseline": "x86-64 with glibc, for CPUs without AVX2 (before Haswell, 2013; some virtual CPUs)",
  "linux-x64-musl": "x86-64 with musl (Alpine, Alpine-based containers): needs apk add libstdc++ libgcc",
  "linux-x64-musl-baseline": "x86-64 with musl, for CPUs without AVX2",
  "linux-arm64": "arm64 with glibc (Ampere and Graviton servers, a Raspberry Pi 4 or 5 with a 64-bit system)",
  "linux-arm64-musl": "arm64 with musl (Alpine on arm64): needs apk add libstdc++ libgcc",
} as const;
export type Target = keyof typeof TARGETS;

export const isTarget = (name: string): name is Target => Object.hasOwn(TARGETS, name);

/** What `hub-agent version` reports (cli/build-info.ts reads these names). */
export interface BuildInfo {
  version: string;
  commit: string;
  built: string;
  target: string;
}
export type BuildFacts = Omit<BuildInfo, "target">;

export interface BuildOptions {
  /** The entry point, relative to the repository: cli/main.ts by default. */
  entry?: string;
  outfile: string;
  /** A cross-compile target; this machine's system by default. */
  target?: Target;
  /** Baked in as the globals HUB_AGENT_VERSION, _COMMIT, _BUILT, _TARGET. */
  info?: BuildInfo;
  /** Lay the bytecode out by the recorded profiles (ORDER_FILES); `false` only to record them (record-order.ts). */
  order?: boolean;
}

/**
 * The bytecode layout profiles (docs/packaging.md, "Bytecode layout"), most common way of starting first: what
 * `npm run build:order` recorded from `ban` with the service down, `queue status`, `--help` and `run`. The build puts
 * the functions they loaded at the front of the executable, so a command reads and decodes less of it.
 */
export const ORDER_DIR = "packaging/bytecode";
export const ORDER_FILES = ["ban.order", "queue.order", "help.order", "run.order"] as const;
/**
 * JavaScriptCore's tier-up thresholds ×8 from the start: a one-shot command's code runs once, and compiling it costs
 * more than it saves. `run` goes back to the normal policy once it serves (lib/app/run-serve.ts).
 */
export const JIT_POLICY = 8;

/** The argv of the compile, to run with the repository as working directory. */
export function buildCommand(o: BuildOptions): string[] {
  const defines = Object.entries(o.info ?? {}).flatMap(([k, v]) => [
    "--define",
    `HUB_AGENT_${k.toUpperCase()}=${JSON.stringify(v)}`,
  ]);
  return [
    process.execPath, // the running bun: the pinned devDependency
    "build",
    "--compile",
    ...(o.target ? [`--target=bun-${o.target}`] : []),
    "--bytecode",
    ...(o.order === false ? [] : [`--bytecode-order=${ORDER_FILES.map((f) => `${ORDER_DIR}/${f}`).join(",")}`]),
    `--compile-jit-policy=${JIT_POLICY}`,
    "--splitting",
    "--format=esm",
    "--minify",
    "--sourcemap",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    ...defines,
    o.entry ?? "cli/main.ts",
    "--outfile",
    o.outfile,
  ];
}

/** The commit checked out (with `-dirty` for changes to tracked files), or "unknown" outside a git checkout. */
function commit(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
    return (
      git("rev-parse", "--short=12", "HEAD") + (git("status", "--porcelain", "--untracked-files=no") ? "-dirty" : "")
    );
  } catch {
    return "unknown";
  }
}

/** This build's facts but its target; the date is SOURCE_DATE_EPOCH's when set (reproducible builds), else now. */
export function buildFacts(version: string = pkg.version): BuildFacts {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  const date = epoch ? new Date(Number(epoch) * 1000) : new Date();
  return { version, commit: commit(), built: date.toISOString().replace(/\.\d+Z$/, "Z") };
}

/** Compiles; throws with bun's output when it fails. */
export async function build(o: BuildOptions): Promise<void> {
  const p = Bun.spawn(buildCommand(o), { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`bun build ${o.target ?? ""} failed (exit ${code}):\n${out}${err}`);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { target: { type: "string" }, outfile: { type: "string" } } });
  const target = values.target;
  if (target !== undefined && !isTarget(target)) {
    console.error(`build: unknown target ${target}: one of ${Object.keys(TARGETS).join(", ")}`);
    process.exit(2);
  }
  const outfile = values.outfile ?? "dist/hub-agent";
  await build({ outfile, target, info: { ...buildFacts(), target: target ?? `${process.platform}-${process.arch}` } });
  console.log(`built ${outfile}`);
}
